package activity

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// A trigger's files travel in payload.attachments, as the reference
// platform takes them (docs/attachments.md). They are taken out of the
// payload before anything reads it: templates, the payload schema, the
// payload limit and every view of the notification see the payload
// without them. A file given by URL is fetched while the trigger is
// answered, through the outbound guard, so that a URL Herald cannot reach
// or a file past the limit is the trigger's 422, not a failure found when
// a held or delayed email goes out hours later, and the email carries the
// file as it was when the event happened. The files are stored once per
// trigger (sqldb.StoreValue), named by each of its notifications, and go
// with the last notification that names them.

// maxAttachments is the most files one trigger may carry.
const maxAttachments = 20

// attachmentFetchTimeout bounds fetching one file given by URL.
const attachmentFetchTimeout = 20 * time.Second

// attachmentIn is one entry of payload.attachments as a client writes it.
type attachmentIn struct {
	File        json.RawMessage `json:"file"` // base64, or a Node Buffer's JSON {type: "Buffer", data: [bytes]}
	URL         string          `json:"url"`
	MIME        string          `json:"mime"`
	Name        string          `json:"name"`
	Channels    []string        `json:"channels"`
	CID         string          `json:"cid"`
	Disposition string          `json:"disposition"`
}

// storedAttachment is one file as a trigger's notifications keep it; File
// is written as base64.
type storedAttachment struct {
	Name        string   `json:"name"`
	MIME        string   `json:"mime"`
	File        []byte   `json:"file"`
	CID         string   `json:"cid,omitempty"`
	Disposition string   `json:"disposition,omitempty"`
	Channels    []string `json:"channels,omitempty"`
	url         string   // to fetch, before it is stored
}

// splitAttachments takes payload.attachments out of payload, leaving the
// rest of the client's text as it was: rest is the payload without them,
// files their JSON (nil for none).
func splitAttachments(payload json.RawMessage) (rest, files json.RawMessage) {
	if !isObject(payload) || !bytes.Contains(payload, []byte(`"attachments"`)) {
		return payload, nil
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if _, err := dec.Token(); err != nil {
		return payload, nil
	}
	type span struct{ from, to int64 }
	var cut []span
	for first := true; dec.More(); first = false {
		from := dec.InputOffset()
		key, err := dec.Token()
		if err != nil {
			return payload, nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return payload, nil
		}
		if key != "attachments" {
			continue
		}
		to := dec.InputOffset()
		if first && dec.More() { // the first member: its following comma goes with it
			to = int64(bytes.IndexByte(payload[to:], ',')) + to + 1
		}
		cut, files = append(cut, span{from, to}), value
	}
	var b bytes.Buffer
	last := int64(0)
	for _, s := range cut {
		b.Write(payload[last:s.from])
		last = s.to
	}
	b.Write(payload[last:])
	if !json.Valid(b.Bytes()) {
		return payload, nil
	}
	return b.Bytes(), files
}

// attachmentChannels are the channels an attachment may name.
var attachmentChannels = []string{"in_app", "email", "sms", "chat", "push"}

// readAttachments reads payload.attachments, refusing what no send could
// use: problems are keyed by JSON path under payload.attachments. Files
// given by URL are read, not fetched: theirs is only the url.
func readAttachments(ctx context.Context, raw json.RawMessage) ([]storedAttachment, map[string]string) {
	problems := map[string]string{}
	if isNull(raw) {
		return nil, problems
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		problems["payload.attachments"] = "must be an array of files"
		return nil, problems
	}
	if len(list) > maxAttachments {
		problems["payload.attachments"] = fmt.Sprintf("must hold at most %d files", maxAttachments)
		return nil, problems
	}
	out := make([]storedAttachment, 0, len(list))
	var total int64
	for i, item := range list {
		at := fmt.Sprintf("payload.attachments.%d", i)
		a, field, problem := readAttachment(item, i)
		if problem != "" {
			problems[at+field] = problem
			continue
		}
		total += int64(len(a.File))
		out = append(out, a)
	}
	if limit := platform.AttachmentLimit(ctx); total > limit {
		problems["payload.attachments"] = overLimit(total, limit)
	}
	return out, problems
}

// readAttachment reads the i-th file; on a problem, field is the member
// it concerns ("" for the whole entry, else ".mime", …).
func readAttachment(item json.RawMessage, i int) (a storedAttachment, field, problem string) {
	var in attachmentIn
	if json.Unmarshal(item, &in) != nil {
		return a, "", "must be an object {file, mime, name?, channels?, cid?, disposition?} or {url, …}"
	}
	a = storedAttachment{Name: in.Name, MIME: strings.TrimSpace(in.MIME), CID: in.CID, Disposition: in.Disposition, Channels: in.Channels}
	switch {
	case isNull(in.File) && in.URL == "":
		return a, ".file", "is required: the file's content in base64, or a url to fetch it from"
	case !isNull(in.File) && in.URL != "":
		return a, "", "must give file or url, not both"
	case in.URL != "":
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return a, ".url", "must be an http or https URL"
		}
		a.url = in.URL
	default:
		content, problem := decodeFile(in.File)
		if problem != "" {
			return a, ".file", problem
		}
		a.File = content
		if a.MIME == "" {
			return a, ".mime", "is required: the file's content type, such as application/pdf"
		}
	}
	if a.MIME != "" {
		if _, _, err := mime.ParseMediaType(a.MIME); err != nil {
			return a, ".mime", "must be a content type, such as application/pdf"
		}
	}
	for _, ch := range a.Channels {
		if !slices.Contains(attachmentChannels, ch) {
			return a, ".channels", "must name channels among " + strings.Join(attachmentChannels, ", ")
		}
	}
	if a.Disposition != "" && a.Disposition != "inline" && a.Disposition != "attachment" {
		return a, ".disposition", "must be inline or attachment"
	}
	if len(a.CID) > 200 || strings.ContainsAny(a.CID, "<> \t\r\n") {
		return a, ".cid", "must be a Content-ID of at most 200 characters, without <, > or spaces"
	}
	if !validName(a.Name) {
		return a, ".name", "must be a file name of at most 255 characters, without a path or line breaks"
	}
	return a, "", ""
}

// validName reports whether name may be a file's name: at most 255 bytes,
// without a path, a line break or a NUL.
func validName(name string) bool {
	return len(name) <= 255 && !strings.ContainsAny(name, "\r\n\x00/\\")
}

// decodeFile reads a file's content: base64 in either alphabet, padded or
// not, or a Node Buffer's JSON, which @novu/node sends.
func decodeFile(raw json.RawMessage) ([]byte, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, s)
		s = strings.TrimRight(s, "=")
		enc := base64.RawStdEncoding
		if strings.ContainsAny(s, "-_") {
			enc = base64.RawURLEncoding
		}
		b, err := enc.DecodeString(s)
		if err != nil {
			return nil, "must be the file's content in base64"
		}
		return b, ""
	}
	var buf struct {
		Type string `json:"type"`
		Data []int  `json:"data"`
	}
	if json.Unmarshal(raw, &buf) != nil || buf.Type != "Buffer" {
		return nil, "must be the file's content in base64"
	}
	b := make([]byte, len(buf.Data))
	for i, v := range buf.Data {
		if v < 0 || v > 255 {
			return nil, "must be the file's content in base64"
		}
		b[i] = byte(v)
	}
	return b, ""
}

func overLimit(total, limit int64) string {
	return fmt.Sprintf("the files are %d bytes, over the limit of %d a trigger may carry (HERALD_MAX_ATTACHMENTS)", total, limit)
}

// attachmentBudget is what is left of a request's attachment limit: a
// bulk request's events share one (withAttachmentBudget).
type attachmentBudget struct{ left int64 }

type attachmentBudgetKey struct{}

// withAttachmentBudget gives the triggers prepared under ctx one budget.
func withAttachmentBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, attachmentBudgetKey{}, &attachmentBudget{left: platform.AttachmentLimit(ctx)})
}

func budgetOf(ctx context.Context) *attachmentBudget {
	if b, ok := ctx.Value(attachmentBudgetKey{}).(*attachmentBudget); ok {
		return b
	}
	return &attachmentBudget{left: platform.AttachmentLimit(ctx)}
}

// attachments reads a trigger's files, fetches those given by URL, and
// returns them as its notifications store them (nil for none), or the
// 422 that refuses the trigger.
func (t *triggerer) attachments(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	files, problems := readAttachments(ctx, raw)
	if len(problems) > 0 {
		return nil, attachmentProblems(problems)
	}
	if len(files) == 0 {
		return nil, nil
	}
	budget := budgetOf(ctx)
	for i := range files {
		a := &files[i]
		if a.url != "" {
			if err := t.store.fetchAttachment(ctx, a, budget.left); err != nil {
				return nil, attachmentProblems(map[string]string{fmt.Sprintf("payload.attachments.%d.url", i): err.Error()})
			}
		}
		if budget.left -= int64(len(a.File)); budget.left < 0 {
			return nil, attachmentProblems(map[string]string{"payload.attachments": overLimit(
				platform.AttachmentLimit(ctx)-budget.left, platform.AttachmentLimit(ctx))})
		}
		if a.Name == "" {
			a.Name = defaultName(i, a.MIME)
		}
	}
	return json.Marshal(files)
}

func attachmentProblems(problems map[string]string) error {
	fields := map[string]platform.FieldError{}
	for path, msg := range problems {
		fields[path] = platform.FieldError{Messages: []string{msg}}
	}
	return platform.Invalid(fields)
}

// defaultName names a file the trigger left unnamed, by its place and
// type: a recipient's mail client needs a name to offer it under.
func defaultName(i int, mimeType string) string {
	name := fmt.Sprintf("attachment-%d", i+1)
	mt, _, _ := mime.ParseMediaType(mimeType)
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		name += exts[0]
	}
	return name
}

// UseOutbound sets where triggers may fetch files given by URL from: the
// outbound guard, as every connection Herald opens on a user's behalf.
// Without it, private and loopback addresses are refused.
func (s *Store) UseOutbound(guard *outbound.Guard) *Store {
	s.fetcher = newAttachmentClient(guard)
	return s
}

func newAttachmentClient(guard *outbound.Guard) *http.Client {
	return &http.Client{Timeout: attachmentFetchTimeout, Transport: guard.Transport(attachmentFetchTimeout),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("more than 3 redirects")
			}
			return nil
		}}
}

// fetchAttachment fetches a's url into a.File, reading at most max bytes;
// its type and name come from the answer when the trigger gave none.
func (s *Store) fetchAttachment(ctx context.Context, a *storedAttachment, max int64) error {
	client := s.fetcher
	if client == nil {
		client = newAttachmentClient(nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err != nil {
		return errors.New("must be an http or https URL")
	}
	req.Header.Set("User-Agent", "Herald")
	res, err := client.Do(req)
	var refused *outbound.RefusedError
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("could not be fetched: %s", refused.Error())
	case err != nil:
		return fmt.Errorf("could not be fetched: %s", fetchReason(err))
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("could not be fetched: the server answered %d", res.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, max+1))
	if err != nil {
		return fmt.Errorf("could not be fetched: %s", fetchReason(err))
	}
	if int64(len(b)) > max {
		return fmt.Errorf("is larger than the %d bytes left of the limit on a trigger's files (HERALD_MAX_ATTACHMENTS)", max)
	}
	a.File = b
	if a.MIME == "" {
		a.MIME = "application/octet-stream"
		if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err == nil {
			a.MIME = mt
		}
	}
	// The path is decoded: a name it gives must pass the checks a name
	// the trigger gives does (no line break reaches a mail header).
	if base := path.Base(res.Request.URL.Path); a.Name == "" && validName(base) && base != "/" && base != "." {
		a.Name = base
	}
	return nil
}

// fetchReason is a failed fetch's cause without Go's "Get \"url\": "
// prefix, which would repeat the URL, query and all.
func fetchReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// emailAttachments are the files of a notification that its email steps
// send: those that name no channel or name email.
func emailAttachments(doc string) ([]messaging.Attachment, error) {
	if doc == "" {
		return nil, nil
	}
	var files []storedAttachment
	if err := json.Unmarshal([]byte(doc), &files); err != nil {
		return nil, fmt.Errorf("read attachments: %w", err)
	}
	var out []messaging.Attachment
	for _, f := range files {
		if len(f.Channels) == 0 || slices.Contains(f.Channels, "email") {
			out = append(out, messaging.Attachment{Name: f.Name, MIME: f.MIME, Content: f.File, CID: f.CID, Disposition: f.Disposition})
		}
	}
	return out, nil
}

// notificationAttachments are the files a notification's email steps send.
// A broadcast's emails, sent hundreds at once, share one decoded copy of
// its stored files (fileCache) rather than each reading its own.
func (s *Store) notificationAttachments(ctx context.Context, notificationID string) ([]messaging.Attachment, error) {
	var col string
	err := s.db.QueryRow(ctx, `SELECT attachments FROM notifications WHERE id = ?`, notificationID).Scan(&col)
	if err != nil {
		return nil, fmt.Errorf("read notification %s attachments: %w", notificationID, err)
	}
	if !sqldb.IsValueKey(col) {
		return emailAttachments(col)
	}
	return s.files.get(col, func() ([]messaging.Attachment, error) {
		var doc string
		if err := s.db.QueryRow(ctx, `SELECT body FROM stored_values WHERE id = ?`, col).Scan(&doc); err != nil {
			return nil, fmt.Errorf("read notification %s attachments: %w", notificationID, err)
		}
		return emailAttachments(doc)
	})
}

// fileCacheSize is how many triggers' decoded files fileCache keeps.
const fileCacheSize = 4

// fileCache keeps the decoded files of the last few triggers whose emails
// were sent, by their stored value's key, which names one content for
// good. Concurrent reads of one key load it once.
type fileCache struct {
	mu      sync.Mutex
	entries map[string]*fileEntry
	order   []string // oldest first
}

type fileEntry struct {
	once  sync.Once
	files []messaging.Attachment
	err   error
}

func (c *fileCache) get(key string, load func() ([]messaging.Attachment, error)) ([]messaging.Attachment, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		if c.entries == nil {
			c.entries = map[string]*fileEntry{}
		}
		if len(c.order) == fileCacheSize {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		e = &fileEntry{}
		c.entries[key], c.order = e, append(c.order, key)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.files, e.err = load() })
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e { // a failed load is tried again by the next read
			delete(c.entries, key)
			c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
		}
		c.mu.Unlock()
	}
	return e.files, e.err
}

// transactionAttachments are the files of a trigger whose first
// notifications are written, as they keep them (nil for none): what a
// resumed fan-out stores with the rest.
func (s *Store) transactionAttachments(ctx context.Context, envID, transactionID string) (json.RawMessage, error) {
	var doc string
	err := s.db.QueryRow(ctx, `SELECT `+sqldb.ValueColumn("attachments")+` FROM notifications
		WHERE environment_id = ? AND transaction_id = ? LIMIT 1`, envID, transactionID).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) || err == nil && doc == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the attachments of %s: %w", transactionID, err)
	}
	return json.RawMessage(doc), nil
}

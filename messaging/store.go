package messaging

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Store is the messaging domain's storage: messages, the feed, read and
// seen state. Deliverer, the delivery engine, stores what it sends here.
type Store struct {
	db  *sqldb.DB
	src Sources
	now func() time.Time

	inbox       *InboxConfig // the inbox routes' dependencies; nil until UseInbox
	live        LiveBus      // where message changes are announced; nil for none
	socketsOnce sync.Once
	registry    atomic.Pointer[liveSockets] // this process's inbox sockets, once the first opens (socket.go)
	liveCache   sync.Map                    // what live events read of workflows, briefly (socket.go)

	queries *queries // in db's dialect

	// inserts commits together the messages stored before their sends
	// (insertMessage): each must be durable before its provider is called.
	inserts *sqldb.GroupCommit

	hooks, tokens *platform.Sealer        // seal messages' targets at rest; nil keeps them plain (WithSecret)
	orgs          *platform.Organizations // nil: each message stores its organization (UseOrganizations)

	events   EventSink      // where message events are raised; nil raises none (UseEvents)
	receipts ReceiptDetails // where a receipt's execution detail is recorded; nil records none (UseReceipts)

	pages       *pageCache          // the feeds' and inboxes' pages read lately, the database's (pages.go)
	pageReads   pageReads           // how pages were answered (observePages)
	pageChanges sqldb.Invalidations // tells the processes sharing the database whose pages changed
}

// NewStore returns a Store on db that reads other domains through src.
func NewStore(db *sqldb.DB, src Sources) *Store {
	s := &Store{db: db, src: src, now: time.Now, queries: newQueries(db.Dialect()),
		inserts: sqldb.NewGroupCommit(db, maxInsertBatch)}
	s.listenPages()
	return s
}

// UseOrganizations lets messages leave their organization out, read from
// orgs as their environment's. Without it, each stores its own. It
// returns s.
func (s *Store) UseOrganizations(orgs *platform.Organizations) *Store {
	s.orgs = orgs
	return s
}

// WithClock makes the store read the time from now, for tests; it returns s.
func (s *Store) WithClock(now func() time.Time) *Store {
	s.now = now
	return s
}

// message is one stored row of the messages table. Its DirectWebhookURL
// and DeviceTokens are plain as newMessage sets them, and as their columns
// hold them (sealed) once written (sealTargets) or read: only openTargets
// reads them plain.
type message struct {
	ID, EnvironmentID, OrganizationID, JobID, NotificationID string
	SubscriberID, ExternalSubscriber                         string
	TemplateID, MessageTemplateID, TemplateIdentifier        string
	StepID, TransactionID, Channel, ProviderID               string
	Content                                                  []byte
	Subject, Title, Email, Phone, DirectWebhookURL, Avatar   *string
	DeviceTokens                                             []byte
	CTA, Payload, Overrides, Data, Tags, Actor               []byte
	SubscriberSummary                                        []byte
	Status                                                   string
	ErrorID, ErrorText                                       *string
	Read, Seen                                               bool
	LastReadDate, LastSeenDate                               *string
	DeliveredAt, Outcome                                     []byte
	CreatedAt, UpdatedAt                                     string
	// Archived is read by the feed only (an inbox state, migration 000030).
	Archived bool
	// ContextKeys is the trigger's context as the inbox matches it
	// (contextColumn); written, never read back into a message.
	ContextKeys string
}

// payloadColumn reads a message's payload (docs/storage.md, "Payloads"):
// a small one from the message's own row (inlinePayload), read with it,
// any other once per notification from message_payloads (an empty one
// not at all), and a large one once for all (sqldb.StoreValue).
var payloadColumn = `CASE WHEN messages.payload <> '' THEN messages.payload ELSE coalesce((SELECT ` +
	sqldb.ValueColumn("p.payload") + ` FROM message_payloads p WHERE p.notification_id = messages.notification_id), '{}') END`

// maxInlinePayload is the largest payload a message keeps in its own row.
// Every message of a notification keeps it then, where a larger one is
// kept once for them all; a small one costs a row less than the key and
// row that would name it, and saves each feed item a seek.
const maxInlinePayload = 256

// inlinePayload is what m's payload column holds: its payload when it is
// small, "" when message_payloads keeps it or it is empty.
func (m *message) inlinePayload() string {
	if len(m.Payload) > maxInlinePayload || isEmptyObject(m.Payload) {
		return ""
	}
	return string(m.Payload)
}

// overridesColumn reads a message's overrides, which are its trigger's:
// large ones are stored once for the trigger (sqldb.StoreValue) and each
// message names them (storedOverrides).
var overridesColumn = sqldb.ValueColumn("overrides")

// Columns whose common value is left out (sqldb.LeftOut): an actor of
// none, a cta of no redirect and no buttons, an updated_at until a write
// changes the message after its delivery, and a delivery once, when the
// message was stored.
const (
	noActor  = `{"type":"none","data":null}`
	plainCTA = `{"data":{},"type":"redirect"}`
)

var (
	actorColumn     = sqldb.LeftOutColumn("actor", `'`+noActor+`'`)
	ctaColumn       = sqldb.LeftOutColumn("cta", `'`+plainCTA+`'`)
	updatedColumn   = sqldb.LeftOutColumn("updated_at", "created_at")
	deliveredColumn = sqldb.LeftOutColumn("delivered_at", `'["' || created_at || '"]'`)
)

// deliveredOnce is what m's delivered_at holds when it was delivered once,
// as it was stored.
func (m *message) deliveredOnce() string { return `["` + m.CreatedAt + `"]` }

// messageColumns lists the columns in the order scanMessage reads them.
var messageColumns = `id, environment_id, organization_id, job_id, notification_id,
	subscriber_id, external_subscriber, template_id, message_template_id, template_identifier,
	step_id, transaction_id, channel, provider_id, content, subject, title, email, phone,
	direct_webhook_url, avatar, device_tokens, ` + ctaColumn + `, ` + payloadColumn + `, ` + overridesColumn + `, data, tags, ` + actorColumn + `,
	subscriber_summary, status, error_id, error_text, read, seen, last_read_date, last_seen_date,
	` + deliveredColumn + `, outcome, created_at, ` + updatedColumn

type scanner interface{ Scan(dest ...any) error }

func scanMessage(row scanner) (*message, error) {
	var m message
	err := row.Scan(m.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	return &m, err
}

// dest is where a row of messageColumns is scanned to, column by column.
func (m *message) dest() []any {
	return []any{&m.ID, &m.EnvironmentID, &m.OrganizationID, &m.JobID, &m.NotificationID,
		&m.SubscriberID, &m.ExternalSubscriber, &m.TemplateID, &m.MessageTemplateID, &m.TemplateIdentifier,
		&m.StepID, &m.TransactionID, &m.Channel, &m.ProviderID, &m.Content, &m.Subject, &m.Title, &m.Email, &m.Phone,
		&m.DirectWebhookURL, &m.Avatar, &m.DeviceTokens, &m.CTA, &m.Payload, &m.Overrides, &m.Data, &m.Tags, &m.Actor,
		&m.SubscriberSummary, &m.Status, &m.ErrorID, &m.ErrorText, &m.Read, &m.Seen, &m.LastReadDate, &m.LastSeenDate,
		&m.DeliveredAt, &m.Outcome, &m.CreatedAt, &m.UpdatedAt}
}

func queryMessages(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*message, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}

// scanMessages reads every row of rows and closes it.
func scanMessages(rows *sql.Rows) ([]*message, error) {
	defer rows.Close()
	var out []*message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// insertMessage stores m unless a message for its job exists already, and
// reports whether it did.
func (s *Store) insertMessage(ctx context.Context, m *message) (inserted bool, err error) {
	s.sealTargets(m)
	// Prepared here: preparing inside the write would wait on the writer
	// connection the group commit holds.
	if err := s.db.PrepareWrites(ctx, insertMessageSQL, s.queries.payload); err != nil {
		return false, fmt.Errorf("prepare message insert: %w", err)
	}
	values := m.values(s.orgs.Stored(m.OrganizationID))
	err = s.inserts.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		inserted = false // the write runs again alone when its batch fails
		res, err := s.db.WriteExec(ctx, tx, insertMessageSQL, values...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		inserted = true
		if err := s.inAppChanged(ctx, tx, m); err != nil {
			return err
		}
		if err := s.storeOverrides(ctx, tx, m); err != nil {
			return err
		}
		return s.storePayload(ctx, tx, m)
	})
	if err != nil {
		return false, fmt.Errorf("insert message: %w", err)
	}
	return inserted, nil
}

// maxInsertBatch is the most messages one group commit of insertMessage
// writes.
const maxInsertBatch = 64

// insertMessageSQL stores a message unless its job already has one. Its
// payload is not a column: storePayload keeps it.
const insertMessageSQL = `INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id,
	subscriber_id, external_subscriber, template_id, message_template_id, template_identifier,
	step_id, transaction_id, channel, provider_id, content, subject, title, email, phone,
	direct_webhook_url, avatar, device_tokens, cta, overrides, data, tags, actor,
	subscriber_summary, status, error_id, error_text, read, seen, last_read_date, last_seen_date,
	delivered_at, outcome, created_at, updated_at, context_keys, payload)
	VALUES (?,?,?,?,?, ?,?,?,?,?, ?,?,?,?,?,?,?,?,?, ?,?,?,?,?,?,?,?, ?,?,?,?,?,?,?,?, ?,?,?,?, ?,?)
	ON CONFLICT (job_id) DO NOTHING`

// values are m's columns in insertMessageSQL's order; org is what it
// stores for its organization (platform.Organizations.Stored).
func (m *message) values(org string) []any {
	return []any{m.ID, m.EnvironmentID, org, m.JobID, m.NotificationID,
		m.SubscriberID, m.ExternalSubscriber, m.TemplateID, m.MessageTemplateID, m.TemplateIdentifier,
		m.StepID, m.TransactionID, m.Channel, m.ProviderID, string(m.Content), m.Subject, m.Title, m.Email, m.Phone,
		m.DirectWebhookURL, m.Avatar, nullJSON(m.DeviceTokens), sqldb.LeftOut(string(m.CTA), plainCTA), m.storedOverrides(),
		nullJSON(m.Data), string(m.Tags), sqldb.LeftOut(string(m.Actor), noActor),
		string(m.SubscriberSummary), m.Status, m.ErrorID, m.ErrorText, sqldb.Flag(m.Read), sqldb.Flag(m.Seen), m.LastReadDate, m.LastSeenDate,
		sqldb.LeftOut(string(m.DeliveredAt), m.deliveredOnce()), string(m.Outcome), m.CreatedAt, sqldb.LeftOut(m.UpdatedAt, m.CreatedAt), m.ContextKeys, m.inlinePayload()}
}

// insertPayloadSQL keeps a notification's payload once, whichever of its
// messages is stored first: every message of a notification carries its
// trigger's payload.
const insertPayloadSQL = `INSERT INTO message_payloads (notification_id, payload) VALUES (?, ?)
	ON CONFLICT (notification_id) DO NOTHING`

// insertPayloadSharedSQL is insertPayloadSQL on a shared database, where
// another process may delete the notification's last message meanwhile:
// it also takes the notification's payload lock in shared mode (lock, the
// dialect's LockShared) until its transaction ends (dropPayloads takes it
// alone). That delete then either committed first, and the payload is
// stored anew here, or waits for this transaction and sees its message.
// Unlocked, the delete could not see the message not yet committed and
// dropped the payload it needs.
func insertPayloadSharedSQL(lock string) string {
	return `INSERT INTO message_payloads (notification_id, payload)
	SELECT ?, ? FROM (SELECT ` + lock + `) AS locked
	ON CONFLICT (notification_id) DO NOTHING`
}

// payloadLock is the key of the lock on a notification's payload.
func payloadLock(notificationID string) string { return "message_payloads:" + notificationID }

// storePayload stores m's payload for its notification, in tx, through
// the prepared statement when there is one; an empty payload is not
// stored, nor one m's row keeps (inlinePayload).
func (s *Store) storePayload(ctx context.Context, tx *sql.Tx, m *message) error {
	if isEmptyObject(m.Payload) || m.inlinePayload() != "" {
		return nil
	}
	payload, err := s.db.StoreValue(ctx, tx, m.EnvironmentID, m.Payload, s.now())
	if err != nil {
		return err
	}
	args := []any{m.NotificationID, payload}
	if s.queries.payloadLocked {
		args = append(args, payloadLock(m.NotificationID))
	}
	_, err = s.db.WriteExec(ctx, tx, s.queries.payload, args...)
	return err
}

// storedOverrides is what m's overrides column holds: the overrides
// themselves, or the key of the value storeOverrides stores. A broadcast's
// messages all carry their trigger's overrides, which its notifications
// stored already under the same key. The key is known without the
// database, so that a message's row is built before its write begins.
func (m *message) storedOverrides() string {
	if !largeOverrides(m.Overrides) {
		return string(m.Overrides)
	}
	return sqldb.ValueKey(m.EnvironmentID, m.Overrides)
}

// largeOverrides reports whether overrides are stored apart from the
// message that names them.
func largeOverrides(raw []byte) bool { return len(raw) >= sqldb.ValueThreshold }

// storeOverrides stores m's large overrides under the key its row names,
// in tx, the transaction that writes the row.
func (s *Store) storeOverrides(ctx context.Context, tx *sql.Tx, m *message) error {
	if !largeOverrides(m.Overrides) {
		return nil
	}
	_, err := s.db.StoreValue(ctx, tx, m.EnvironmentID, m.Overrides, s.now())
	return err
}

// isEmptyObject reports whether raw is absent, null or {}.
func isEmptyObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null" || string(raw) == "{}"
}

func (s *Store) redeliver(ctx context.Context, m *message) error {
	s.sealTargets(m)
	_, err := s.db.ExecContext(ctx, `UPDATE messages SET provider_id = ?, content = ?, subject = ?,
		title = ?, email = ?, phone = ?, direct_webhook_url = ?, avatar = ?, device_tokens = ?, cta = ?,
		data = ?, updated_at = ? WHERE id = ?`,
		m.ProviderID, string(m.Content), m.Subject, m.Title, m.Email, m.Phone, m.DirectWebhookURL, m.Avatar,
		nullJSON(m.DeviceTokens), sqldb.LeftOut(string(m.CTA), plainCTA), nullJSON(m.Data), m.UpdatedAt, m.ID)
	if err != nil {
		return fmt.Errorf("update message %s: %w", m.ID, err)
	}
	return s.inAppChanged(ctx, nil, m)
}

// finishWrite returns the write that records the result of a delivery
// attempt on the message, for the caller to run in the transaction that
// records its job's result. Until it commits the message stays unfinished,
// and an attempt after a crash sends again (see finished). Whatever reads
// or prepares is done here: the write runs holding the one writer.
func (s *Store) finishWrite(ctx context.Context, m *message, out Outcome, errorText string, at time.Time) (func(context.Context, *sql.Tx) error, error) {
	doc, err := storedOutcome(out)
	if err != nil {
		return nil, err
	}
	var errID, errText any
	if out.Status == "error" {
		// A provider's reply may be cut inside a character, and a shared
		// database refuses text that is not UTF-8 (22021).
		errID, errText = sqldb.NewIDAt(at), strings.ToValidUTF8(errorText, "")
	}
	var providerMessageID any
	if out.ProviderMessageID != "" {
		providerMessageID = out.ProviderMessageID
	}
	args := []any{out.Status, errID, errText, out.ProviderID, doc, sqldb.FormatTime(at),
		sqldb.Flag(out.Status != "error"), sqldb.FormatTime(at), providerMessageID, m.ID}
	event, why := EventSent, (*MessageError)(nil)
	switch {
	case out.Status == "error":
		event, why = EventFailed, &MessageError{Message: strings.ToValidUTF8(errorText, "")}
	case errorText != "":
		why = &MessageError{Message: strings.ToValidUTF8(errorText, "")}
	}
	raise := s.wantsAny(ctx, m.EnvironmentID, event)
	if err := s.db.PrepareWrites(ctx, s.queries.finish); err != nil {
		return nil, fmt.Errorf("prepare message finish: %w", err)
	}
	var announce func()
	if m.Channel == "in_app" && out.Status != "error" {
		ev := LiveEvent{EnvironmentID: m.EnvironmentID, SubscriberID: m.SubscriberID, MessageID: m.ID, Kind: LiveReceived}
		announce = func() { s.publish(ev) }
	}
	return func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.db.WriteExec(ctx, tx, s.queries.finish, args...); err != nil {
			return fmt.Errorf("finish message %s: %w", m.ID, err)
		}
		if err := s.inAppChanged(ctx, tx, m); err != nil {
			return err
		}
		if raise {
			if err := s.raiseFor(ctx, tx, m.EnvironmentID, event, []string{m.ID}, why); err != nil {
				return err
			}
		}
		if announce != nil {
			s.db.AfterCommit(tx, announce)
		}
		return nil
	}, nil
}

// messageByJob returns the message delivered for jobID, or platform.ErrNotFound.
// It reads the pool, not the one writer connection every send writes
// through: each attempt's writes are committed before its job can run again.
func (s *Store) messageByJob(ctx context.Context, jobID string) (*message, error) {
	return scanMessage(s.db.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE job_id = ?`, jobID))
}

// feedColumns are the columns of messages a feed item shows
// (appendFeedItem), in the order feed scans them; subscriber_summary
// follows when the feed needs it. The rest (outcome, device tokens, the
// delivery addresses) is never shown in the feed.
var feedColumns = `id, environment_id, organization_id, job_id, notification_id,
	subscriber_id, template_id, message_template_id, template_identifier, transaction_id,
	channel, provider_id, content, subject, avatar, ` + ctaColumn + `, ` + payloadColumn + `, ` + overridesColumn + `,
	data, tags, ` + actorColumn + `, status, read, seen, last_read_date, last_seen_date,
	` + deliveredColumn + `, created_at, ` + updatedColumn

// feedDest is where feedRows scans a feed item's columns, in
// feedColumns' order, then archived and subscriber_summary.
func (m *message) feedDest() []any {
	return []any{&m.ID, &m.EnvironmentID, &m.OrganizationID, &m.JobID, &m.NotificationID,
		&m.SubscriberID, &m.TemplateID, &m.MessageTemplateID, &m.TemplateIdentifier, &m.TransactionID,
		&m.Channel, &m.ProviderID, &m.Content, &m.Subject, &m.Avatar, &m.CTA, &m.Payload, &m.Overrides,
		&m.Data, &m.Tags, &m.Actor, &m.Status, &m.Read, &m.Seen, &m.LastReadDate, &m.LastSeenDate,
		&m.DeliveredAt, &m.CreatedAt, &m.UpdatedAt, &m.Archived, &m.SubscriberSummary}
}

// feedFilter selects a page of one subscriber's in-app feed.
type feedFilter struct {
	withSummary    bool   // read the summary stored at delivery (no current one)
	subscriberID   string // _id
	organizationID string // the environment's organization
	read, seen     *bool
	payload        []payloadMatch
	page, limit    int
}

// feed returns one page of the subscriber's in_app messages, newest first,
// and the number of all that match. The (environment, subscriber, channel,
// created_at, id, read, seen) index serves both. The page carries its count
// (feedRows), so one statement, one snapshot on either database, answers
// both without a transaction; only an empty page past the first, which has
// no row to carry it, reads the two in a snapshot.
func (s *Store) feed(ctx context.Context, env string, f feedFilter) ([]*message, int, error) {
	cond, args := feedCond(s.queries.d, env, f)
	query := pageQuery(cond, args, "feed", f.page, f.limit, f.withSummary, f.organizationID)
	p, err := cachedPageOf(s, pageOwner(env, f.subscriberID), query, func() (feedAnswer, error) {
		msgs, total, err := s.readFeed(ctx, env, cond, args, f)
		return feedAnswer{msgs, total}, err
	}, feedAnswer.encode, decodeFeed)
	return p.msgs, p.total, err
}

// feedAnswer is a page of the feed and the number of all that match.
type feedAnswer struct {
	msgs  []*message
	total int
}

func (p feedAnswer) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(p.total))
	return encodeRows(b, p.msgs, (*message).feedDest)
}

func decodeFeed(b []byte) (feedAnswer, error) {
	total, n := binary.Uvarint(b)
	if n <= 0 {
		return feedAnswer{}, errBadPage
	}
	msgs, err := decodeRows(b[n:], (*message).feedDest)
	return feedAnswer{msgs, int(total)}, err
}

// readFeed is feed, read from the database.
func (s *Store) readFeed(ctx context.Context, env, cond string, args []any, f feedFilter) ([]*message, int, error) {
	msgs, total, err := s.feedPage(ctx, nil, cond, args, f)
	if err == nil && total < 0 {
		msgs, total, err = s.feedSnapshot(ctx, cond, args, f)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read feed: %w", err)
	}
	// A stored feed item leaves out what the request says.
	for _, m := range msgs {
		m.EnvironmentID, m.SubscriberID, m.Channel = env, f.subscriberID, "in_app"
		if m.OrganizationID == "" {
			m.OrganizationID = f.organizationID
		}
	}
	return msgs, total, nil
}

// feedSnapshot is feedPage in a snapshot, counting apart when the page is
// empty.
func (s *Store) feedSnapshot(ctx context.Context, cond string, args []any, f feedFilter) ([]*message, int, error) {
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	msgs, total, err := s.feedPage(ctx, tx, cond, args, f)
	if err == nil && total < 0 {
		total, err = s.countPage(ctx, tx, cond, args, f.page, f.limit, len(msgs))
	}
	return msgs, total, err
}

// feedPage reads one page of the feed, in tx when it is not nil, and the
// number of all that match: known without counting from a page that is not
// full (countPage), read with the page from one that has rows, and -1 for
// an empty page past the first.
func (s *Store) feedPage(ctx context.Context, tx *sql.Tx, cond string, args []any, f feedFilter) ([]*message, int, error) {
	msgs, counted, err := s.feedRows(ctx, tx, cond, args, f)
	switch n := len(msgs); {
	case err != nil:
		return nil, 0, err
	case n < f.limit && (n > 0 || f.page == 0):
		return msgs, f.page*f.limit + n, nil
	case n > 0:
		return msgs, counted, nil
	}
	return msgs, -1, nil
}

// feedCond is the WHERE condition of f's messages, and its arguments.
// Every column it tests but the payload is in the messages_feed index,
// read and seen included, so that a filtered count reads the index alone.
func feedCond(d sqldb.Dialect, env string, f feedFilter) (string, []any) {
	where := []string{"environment_id = ?", "subscriber_id = ?", "channel = 'in_app'"}
	args := []any{env, f.subscriberID}
	if f.read != nil {
		where, args = append(where, "read = ?"), append(args, sqldb.Flag(*f.read))
	}
	if f.seen != nil {
		where, args = append(where, "seen = ?"), append(args, sqldb.Flag(*f.seen))
	}
	if len(f.payload) > 0 {
		// The payload is in the message's row or kept once per
		// notification (payloadColumn); an empty one is not stored, and
		// matches no filter.
		var inline, kept []string
		for _, p := range f.payload {
			var w string
			w, args = d.JSONEquals(args, "messages.payload", p.path, p.value)
			inline = append(inline, w)
		}
		for _, p := range f.payload {
			var w string
			w, args = d.JSONEquals(args, sqldb.ValueColumn("p.payload"), p.path, p.value)
			kept = append(kept, w)
		}
		where = append(where, `CASE WHEN messages.payload <> '' THEN `+strings.Join(inline, " AND ")+`
			ELSE EXISTS (SELECT 1 FROM message_payloads p
			WHERE p.notification_id = messages.notification_id AND `+strings.Join(kept, " AND ")+`) END`)
	}
	return strings.Join(where, " AND "), args
}

// feedRows reads one page of the feed: every column a feed item shows.
// Each row carries the number
// of all that match, which the database counts once, when the first row
// reads it, in the page's own snapshot; 0 when the page is empty.
func (s *Store) feedRows(ctx context.Context, tx *sql.Tx, cond string, args []any, f feedFilter) ([]*message, int, error) {
	cols := feedColumns + ", archived"
	if f.withSummary {
		cols += ", subscriber_summary"
	}
	query := `SELECT ` + cols + `, (SELECT count(*) FROM messages WHERE ` + cond + `) FROM messages WHERE ` + cond + `
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`
	args = append(append(append(make([]any, 0, 2*len(args)+2), args...), args...), f.limit, f.page*f.limit)
	var rows *sql.Rows
	var err error
	if tx == nil {
		rows, err = s.db.Query(ctx, query, args...)
	} else {
		rows, err = s.db.TxQuery(ctx, tx, query, args...)
	}
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var msgs []*message
	var total int
	for rows.Next() {
		var m message
		dst := m.feedDest()
		if !f.withSummary {
			dst = dst[:len(dst)-1]
		}
		if err := rows.Scan(append(dst, &total)...); err != nil {
			return nil, 0, err
		}
		msgs = append(msgs, &m)
	}
	return msgs, total, rows.Err()
}

// countPage returns how many messages match cond, given that page (of
// limit rows) held n of them. A page that is not full is the last one, so
// the count is known without counting: most feeds are shorter than a page,
// and counting is a second query per request. Only a full page, or an empty
// page past the first, has to count.
func (s *Store) countPage(ctx context.Context, tx *sql.Tx, cond string, args []any, page, limit, n int) (int, error) {
	if n < limit && (n > 0 || page == 0) {
		return page*limit + n, nil
	}
	var total int
	err := s.db.TxQueryRow(ctx, tx, `SELECT count(*) FROM messages WHERE `+cond, args...).Scan(&total)
	return total, err
}

// listFilter selects a page of GET /v1/messages.
type listFilter struct {
	channel        string
	subscriberID   string // _id; "" for all
	transactionIDs []string
	notificationID string // one notification of the transaction; the console's, which the API has no filter for
	page, limit    int
}

// listQuery is the table (with the index to read it through), the WHERE
// condition and its arguments of f's messages. Without statistics, SQLite
// reads a newest-first page through messages_list, every message of the
// environment in time order, and tests each against the filters, since
// that index gives the order: a page of one transaction's or one
// subscriber's messages would read the whole environment, and grow with it
// (BenchmarkMessagesList times both filters). A transaction has a few messages and a
// subscriber's are in messages_feed, so those filters are read through
// their own index, and the page sorted.
func (q *queries) listQuery(env string, f listFilter) (from, cond string, args []any) {
	where, args := []string{"environment_id = ?"}, []any{env}
	from = "messages"
	if f.channel != "" {
		where, args = append(where, "channel = ?"), append(args, f.channel)
	}
	if f.subscriberID != "" {
		where, args = append(where, "subscriber_id = ?"), append(args, f.subscriberID)
		from = q.byFeed
	}
	if len(f.transactionIDs) > 0 {
		where = append(where, "transaction_id IN ("+sqldb.Placeholders(len(f.transactionIDs))+")")
		for _, id := range f.transactionIDs {
			args = append(args, id)
		}
		from = q.byTransaction
	}
	if f.notificationID != "" {
		where, args = append(where, "notification_id = ?"), append(args, f.notificationID)
	}
	return from, strings.Join(where, " AND "), args
}

// list returns one page of the environment's messages, newest first, and the
// number of all that match.
func (s *Store) list(ctx context.Context, env string, f listFilter) ([]*message, int, error) {
	from, cond, args := s.queries.listQuery(env, f)
	// The page and its count in one statement, so one snapshot, as the feed
	// reads them (feedRows): the count is a subquery that does not depend
	// on the row, which both stores run once, on the filter's index.
	rows, err := s.db.Query(ctx, listSQL(from, cond),
		append(append(append(make([]any, 0, 2*len(args)+2), args...), args...), f.limit, f.page*f.limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list messages: %w", err)
	}
	defer rows.Close()
	var msgs []*message
	var total int
	for rows.Next() {
		var m message
		if err := rows.Scan(append(m.dest(), &total)...); err != nil {
			return nil, 0, fmt.Errorf("list messages: %w", err)
		}
		msgs = append(msgs, &m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list messages: %w", err)
	}
	if len(msgs) == 0 && f.page > 0 {
		// A page past the end has no row to carry the count.
		err := s.db.QueryRow(ctx, `SELECT count(*) FROM messages WHERE `+cond, args...).Scan(&total)
		if err != nil {
			return nil, 0, fmt.Errorf("count messages: %w", err)
		}
	}
	return msgs, total, nil
}

// listSQL is list's statement: a page of the messages from from (the table,
// or the table through the filter's index) that match cond, newest first,
// each row carrying the count of all that match. Its parameters are cond's,
// twice, then the limit and the offset.
func listSQL(from, cond string) string {
	return `SELECT ` + messageColumns + `, (SELECT count(*) FROM messages WHERE ` + cond + `) FROM ` + from + ` WHERE ` + cond + `
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`
}

// markAs changes the read/seen state of the subscriber's messages among ids
// and returns those messages, re-read after the update. Ids of other
// subscribers or environments are not touched and not returned. As the
// reference platform does (docs/api.md, "Mark-as"), read and unread both mark
// the message seen; the dates of the states set are stamped.
func (s *Store) markAs(ctx context.Context, env, subscriberID string, ids []string, mark string, at time.Time) ([]*message, error) {
	set := map[string]string{
		"read":   "read = 1, seen = 1, last_read_date = ?1, last_seen_date = ?1",
		"unread": "read = 0, seen = 1, last_read_date = ?1, last_seen_date = ?1",
		"seen":   "seen = 1, last_seen_date = ?1",
		"unseen": "seen = 0, last_seen_date = ?1",
	}[mark]
	if set == "" {
		return nil, fmt.Errorf("mark as %q", mark)
	}
	list := idList(ids)
	var out []*message
	event, raise := markEvents[mark]
	raise = raise && s.wantsAny(ctx, env, event)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE messages SET `+set+`, updated_at = ?1
			WHERE environment_id = ?2 AND subscriber_id = ?3 AND id IN (SELECT value FROM `+s.queries.d.JSONTexts("?4", "ids")+`)`,
			sqldb.FormatTime(at), env, subscriberID, list)
		if err != nil {
			return err
		}
		if err := s.pagesChanged(ctx, tx, env, subscriberID); err != nil {
			return err
		}
		// Its own parameters: a shared database cannot type one a
		// statement does not use.
		out, err = queryMessages(ctx, tx, `SELECT `+messageColumns+` FROM messages
			WHERE environment_id = ? AND subscriber_id = ? AND `+s.queries.idsIn+`
			ORDER BY created_at DESC, id DESC`, env, subscriberID, list)
		if err != nil || !raise {
			return err
		}
		marked := make([]string, len(out))
		for i, m := range out {
			marked[i] = m.ID
		}
		return s.raiseFor(ctx, tx, env, event, marked, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("mark messages %s: %w", mark, err)
	}
	return out, nil
}

// deleteMessage removes one message of the environment, and its payload
// when it was its notification's last message; it returns the message's
// subscriber's _id.
func (s *Store) deleteMessage(ctx context.Context, env, id string) (string, error) {
	var subscriberID string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		gone, _, err := s.deleteMessages(ctx, tx, `environment_id = ? AND id = ?`, env, id)
		if err != nil {
			return err
		}
		if len(gone) == 0 {
			return platform.ErrNotFound
		}
		subscriberID = gone[0].subscriberID
		return nil
	})
	if err != nil && !errors.Is(err, platform.ErrNotFound) {
		return "", fmt.Errorf("delete message %s: %w", id, err)
	}
	return subscriberID, err
}

// deleteTransaction removes the messages of a transaction, optionally of one
// channel only, with the payloads no message is left to read, and returns
// how many messages it removed.
func (s *Store) deleteTransaction(ctx context.Context, env, transactionID, channel string) (n int64, inApp []string, err error) {
	where, args := `environment_id = ? AND transaction_id = ?`, []any{env, transactionID}
	if channel != "" {
		where, args = where+` AND channel = ?`, append(args, channel)
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		gone, _, err := s.deleteMessages(ctx, tx, where, args...)
		n, inApp = int64(len(gone)), inAppSubscribers(gone)
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("delete transaction %s: %w", transactionID, err)
	}
	return n, inApp, nil
}

// inAppSubscribers returns the subscribers' _ids of the in-app messages
// among gone, each once: the inboxes to tell (handleTransactionDelete).
func inAppSubscribers(gone []deleted) []string {
	var ids []string
	for _, d := range gone {
		if d.channel == "in_app" && !slices.Contains(ids, d.subscriberID) {
			ids = append(ids, d.subscriberID)
		}
	}
	return ids
}

// inAppOwners returns the page owners (pageOwner) of the in-app messages
// among gone, each once. A sweep's batch holds thousands.
func inAppOwners(gone []deleted) []string {
	seen := map[string]bool{}
	var owners []string
	for _, d := range gone {
		if o := pageOwner(d.env, d.subscriberID); d.channel == "in_app" && !seen[o] {
			seen[o] = true
			owners = append(owners, o)
		}
	}
	return owners
}

// deleted is one message a delete removed: its notification, with what
// finds that notification's other messages through messages_transaction,
// and whose inbox it was in.
type deleted struct{ env, transactionID, notificationID, subscriberID, channel string }

// deleteMessages deletes, in tx, the messages that where selects, and the
// payloads no message of their notifications is left to read; it answers
// the messages removed and how many payloads went with them. Every delete
// of messages goes through it, so none leaves a payload behind.
func (s *Store) deleteMessages(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]deleted, int64, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM messages WHERE `+where+`
		RETURNING environment_id, transaction_id, notification_id, subscriber_id, channel`, args...)
	if err != nil {
		return nil, 0, err
	}
	var gone []deleted
	for rows.Next() {
		var d deleted
		if err := rows.Scan(&d.env, &d.transactionID, &d.notificationID, &d.subscriberID, &d.channel); err != nil {
			rows.Close()
			return nil, 0, err
		}
		gone = append(gone, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if owners := inAppOwners(gone); len(owners) > 0 {
		if err := s.forgetPages(ctx, tx, owners); err != nil {
			return nil, 0, err
		}
	}
	payloads, err := s.dropPayloads(ctx, tx, gone)
	return gone, payloads, err
}

// dropPayloads deletes, in tx, the payloads of refs' notifications that no
// message is left to read, and answers how many.
//
// On a shared database two processes may each delete another message of
// one notification at once, each still seeing the other's, and both keep
// the payload, which nothing would find again. Each notification is locked
// first, in id order so that two deletes cannot wait on each other; the
// one that waited then sees the other's delete committed.
func (s *Store) dropPayloads(ctx context.Context, tx *sql.Tx, refs []deleted) (int64, error) {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b deleted) int { return strings.Compare(a.notificationID, b.notificationID) })
	seen, n := map[string]bool{}, int64(0)
	for _, r := range refs {
		if seen[r.notificationID] {
			continue
		}
		seen[r.notificationID] = true
		if err := s.db.LockKey(ctx, tx, payloadLock(r.notificationID)); err != nil {
			return n, err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM message_payloads WHERE notification_id = ?3
			AND NOT EXISTS (SELECT 1 FROM messages
				WHERE environment_id = ?1 AND transaction_id = ?2 AND notification_id = ?3)`,
			r.env, r.transactionID, r.notificationID)
		if err != nil {
			return n, fmt.Errorf("delete payload of notification %s: %w", r.notificationID, err)
		}
		d, _ := res.RowsAffected()
		n += d
	}
	return n, nil
}

// subscriberByExternalID finds a subscriber's _id and feed summary from its
// messages, for when no SubscriberSource is wired.
func (s *Store) subscriberByExternalID(ctx context.Context, env, subscriberID string) (string, json.RawMessage, error) {
	var id string
	var sum []byte
	err := s.db.QueryRow(ctx, `SELECT subscriber_id, subscriber_summary FROM messages
		WHERE environment_id = ? AND external_subscriber = ? ORDER BY created_at DESC LIMIT 1`, env, subscriberID).Scan(&id, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, platform.ErrNotFound
	}
	return id, sum, err
}

// nullJSON stores an absent JSON value as NULL.
func nullJSON(b json.RawMessage) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return string(b)
}

// ValueRefs are the columns of messaging's tables that may name a stored
// value: the sweep of stored values keeps one they name.
var ValueRefs = []sqldb.ValueRef{{Table: "message_payloads", Column: "payload"}, {Table: "messages", Column: "overrides"}}

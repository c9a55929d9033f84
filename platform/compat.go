package platform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// CompatModes are the values HERALD_COMPAT accepts besides "" (the spec's
// wire, the default).
var CompatModes = []string{"novu"}

// CheckCompat refuses a compatibility mode Herald does not know, naming the
// ones it does.
func CheckCompat(mode string) error {
	if mode == "" {
		return nil
	}
	for _, m := range CompatModes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf("HERALD_COMPAT %q is not a compatibility mode: use %s, or leave it empty for the spec's wire",
		mode, strings.Join(CompatModes, ", "))
}

// compat makes the API speak as the reference platform does on the wire
// (HERALD_COMPAT=novu, docs/compatibility.md), so its SDKs work unmodified.
// It is a layer around the API, not a change to any handler:
//
//   - Requests: an enum value spelled novu… (novu, novu-cloud, novu-slack, …)
//     is read as Herald's service… spelling, in the JSON body and in the
//     one path parameter that holds a providerId.
//   - Responses: service… enum values are written novu…, and a successful
//     body is wrapped as {data: …} by the reference's own rule (its
//     ResponseInterceptor): every 2xx JSON body is wrapped unless it is an
//     object that already has a truthy data and no _id or id, as paginated
//     lists do. Errors are not wrapped, as there.
//
// An enum value is one under the keys providerId and origin, the only
// fields whose values the reference spells novu…; user data (payload,
// data, overrides, controls, …) is never rewritten, so a subscriber's name
// that happens to be "service" stays as it is. The inbox (/v1/inbox/) and
// socket.io answer as the reference already, and pass through untouched.
func compat(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/inbox/") || strings.HasPrefix(r.URL.Path, "/socket.io/") {
			next.ServeHTTP(w, r)
			return
		}
		if err := compatRequest(r); err != nil {
			WriteError(w, r, err)
			return
		}
		rec := &compatRecorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		ctype, _, _ := strings.Cut(rec.header.Get("Content-Type"), ";")
		if ctype == "application/json" && len(bytes.TrimSpace(body)) > 0 {
			if out, err := CompatResponse(body, rec.status >= 200 && rec.status < 300); err == nil {
				body = out
			}
		}
		h := w.Header()
		for k, v := range rec.header {
			h[k] = v
		}
		if h.Get("Content-Length") != "" {
			h.Set("Content-Length", strconv.Itoa(len(body)))
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		w.WriteHeader(rec.status)
		w.Write(body)
	})
}

// compatRecorder keeps a response so that compat can rewrite it.
type compatRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *compatRecorder) Header() http.Header { return c.header }
func (c *compatRecorder) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}
func (c *compatRecorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

// compatRequest rewrites a request's novu… enum values to Herald's spelling.
func compatRequest(r *http.Request) error {
	// DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}
	if parts := strings.Split(r.URL.Path, "/"); len(parts) == 6 && parts[4] == "credentials" {
		if v, ok := renameEnum(parts[5], "novu", "service"); ok {
			parts[5] = v
			r.URL.Path, r.URL.RawPath = strings.Join(parts, "/"), ""
		}
	}
	if r.Body == nil || r.Body == http.NoBody || !strings.Contains(r.Header.Get("Content-Type"), "json") {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err)
	}
	if out, err := rewriteEnums(body, "novu", "service"); err == nil {
		body = out
	}
	// A body that is not JSON goes on as it came: the handler's decoder
	// answers it as it answers any other.
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return nil
}

// CompatResponse rewrites a JSON response body as the reference platform
// writes it: service… enum values spelled novu…, and, when ok (a 2xx), the
// body wrapped in {data: …} unless the reference's rule leaves it bare.
func CompatResponse(body []byte, ok bool) ([]byte, error) {
	v, err := decodeNumbers(body)
	if err != nil {
		return nil, err
	}
	v = renameTree(v, "service", "novu")
	if ok && wrapsInData(v) {
		v = map[string]any{"data": v}
	}
	return encodeCompat(v)
}

// CompatUnwrap undoes CompatResponse for a 2xx body, for tests that check a
// compat answer against Herald's own description: the envelope comes off and
// novu… values are spelled service… again. No body Herald answers outside
// the inbox is an object whose only key is data, so such an object is an
// envelope.
func CompatUnwrap(body []byte) ([]byte, error) {
	v, err := decodeNumbers(body)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 && m["data"] != nil {
		v = m["data"]
	}
	return encodeCompat(renameTree(v, "novu", "service"))
}

// wrapsInData is the reference's ResponseInterceptor rule.
func wrapsInData(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	_, hasID := m["_id"]
	_, hasPlainID := m["id"]
	return !truthy(m["data"]) || hasID || hasPlainID
}

// truthy is JavaScript's truthiness, which the rule tests data with: an
// empty array or object is truthy.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	}
	return true
}

func rewriteEnums(body []byte, from, to string) ([]byte, error) {
	v, err := decodeNumbers(body)
	if err != nil {
		return nil, err
	}
	return encodeCompat(renameTree(v, from, to))
}

// decodeNumbers decodes JSON keeping numbers as written, so that rewriting a
// body changes no number.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func encodeCompat(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// enumKeys hold the values the reference spells novu…; userData keys hold
// what a client wrote, which is never rewritten.
var (
	enumKeys = map[string]bool{"providerId": true, "origin": true}
	userData = map[string]bool{"payload": true, "data": true, "overrides": true, "controls": true, "controlValues": true,
		"variables": true, "to": true, "actor": true, "tenant": true, "context": true, "payloadSchema": true,
		"payloadExample": true, "credentials": true, "raw": true}
)

// renameTree rewrites enum values spelled from… to to… under enumKeys,
// at any depth outside userData. A data key holding a list of records (a
// page) is walked: it is the envelope, not a subscriber's data.
func renameTree(v any, from, to string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch {
			case enumKeys[k]:
				if s, ok := x.(string); ok {
					if renamed, ok := renameEnum(s, from, to); ok {
						v[k] = renamed
					}
				}
			case k == "data" && isRecordList(x):
				v[k] = renameTree(x, from, to)
			case !userData[k]:
				v[k] = renameTree(x, from, to)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = renameTree(x, from, to)
		}
	}
	return v
}

// isRecordList reports whether v is a page's data: an array of objects.
func isRecordList(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// renameEnum spells an enum value from…'s way in to…'s: "service" ↔ "novu",
// "service-cloud" ↔ "novu-cloud", and so on.
func renameEnum(s, from, to string) (string, bool) {
	if s == from {
		return to, true
	}
	if rest, ok := strings.CutPrefix(s, from+"-"); ok {
		return to + "-" + rest, true
	}
	return s, false
}

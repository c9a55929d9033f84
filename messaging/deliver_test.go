package messaging_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

// hook is an httptest.Server that records what providers post to it.
type hook struct {
	*httptest.Server
	mu       sync.Mutex
	requests []hookRequest
	status   int
	reply    string
}

type hookRequest struct {
	path   string
	header http.Header
	body   []byte
}

func newHook(t *testing.T) *hook {
	h := &hook{status: 200, reply: `{"ok":true}`}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.requests = append(h.requests, hookRequest{path: r.URL.RequestURI(), header: r.Header.Clone(), body: b})
		status, reply := h.status, h.reply
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) got() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.requests...)
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestDeliver_Webhooks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		channel    string
		providerID string
		creds      func(url string) map[string]any
		subCreds   func(url string) map[string]any // the subscriber's channel credentials, for chat and push
		controls   map[string]any
		want       []map[string]any // bodies, in order
		header     [2]string        // a header the request must carry
	}{
		{
			name: "OK email-webhook", channel: "email", providerID: "email-webhook",
			creds: func(u string) map[string]any {
				return map[string]any{"webhookUrl": u + "/mail", "from": "no-reply@acme.test", "senderName": "Acme", "hmac": true, "secretKey": "s3cret"}
			},
			controls: map[string]any{"subject": "Hi {{ subscriber.firstName }}", "body": "<p>Hello {{ payload.name }}</p>", "layoutId": nil},
			want: []map[string]any{{"to": "ada@example.com", "from": "no-reply@acme.test", "senderName": "Acme",
				"subject": "Hi Ada", "html": "<p>Hello Bea</p>", "text": "Hello Bea"}},
		},
		{
			name: "OK generic-sms", channel: "sms", providerID: "generic-sms",
			creds: func(u string) map[string]any {
				return map[string]any{"baseUrl": u + "/sms", "apiKey": "k-123", "apiKeyRequestHeader": "X-Api-Token",
					"from": "+15550000", "idPath": "data.id", "datePath": "data.date"}
			},
			controls: map[string]any{"body": "Code for {{ payload.name }}"},
			want:     []map[string]any{{"to": "+15550100", "from": "+15550000", "content": "Code for Bea"}},
			header:   [2]string{"X-Api-Token", "k-123"},
		},
		{
			name: "OK chat-webhook", channel: "chat", providerID: "chat-webhook",
			creds:    func(string) map[string]any { return map[string]any{"hmac": true, "secretKey": "s3cret"} },
			subCreds: func(u string) map[string]any { return map[string]any{"webhookUrl": u + "/chat"} },
			controls: map[string]any{"body": "Hi {{ payload.name }}"},
			want:     []map[string]any{{"content": "Hi Bea"}},
		},
		{
			name: "OK slack", channel: "chat", providerID: "slack",
			creds:    func(string) map[string]any { return map[string]any{} },
			subCreds: func(u string) map[string]any { return map[string]any{"webhookUrl": u + "/services/T/B/X"} },
			controls: map[string]any{"body": "Hi {{ payload.name }}"},
			want:     []map[string]any{{"text": "Hi Bea"}},
		},
		{
			name: "OK discord from the integration's URL", channel: "chat", providerID: "discord",
			creds:    func(u string) map[string]any { return map[string]any{"webhookUrl": u + "/api/webhooks/1/x"} },
			subCreds: func(string) map[string]any { return map[string]any{} },
			controls: map[string]any{"body": "Hi {{ payload.name }}"},
			want:     []map[string]any{{"content": "Hi Bea"}},
		},
		{
			name: "OK msteams", channel: "chat", providerID: "msteams",
			creds:    func(string) map[string]any { return map[string]any{} },
			subCreds: func(u string) map[string]any { return map[string]any{"webhookUrl": u + "/teams"} },
			controls: map[string]any{"body": "Hi {{ payload.name }}"},
			want:     []map[string]any{{"text": "Hi Bea"}},
		},
		{
			name: "OK mattermost", channel: "chat", providerID: "mattermost",
			creds: func(string) map[string]any { return map[string]any{"hmac": true, "secretKey": "s3cret"} },
			subCreds: func(u string) map[string]any {
				return map[string]any{"webhookUrl": u + "/hooks/x", "channel": "town-square"}
			},
			controls: map[string]any{"body": "Hi {{ payload.name }}"},
			want:     []map[string]any{{"text": "Hi Bea", "channel": "town-square"}},
		},
		{
			name: "OK push-webhook once per token", channel: "push", providerID: "push-webhook",
			creds: func(u string) map[string]any {
				return map[string]any{"webhookUrl": u + "/push", "hmac": true, "secretKey": "s3cret"}
			},
			subCreds: func(string) map[string]any { return map[string]any{"deviceTokens": []string{"tok-1", "tok-2"}} },
			controls: map[string]any{"subject": "Title {{ payload.name }}", "body": "Body"},
			want: []map[string]any{
				{"target": "tok-1", "title": "Title Bea", "content": "Body", "payload": map[string]any{"name": "Bea"}},
				{"target": "tok-2", "title": "Title Bea", "content": "Body", "payload": map[string]any{"name": "Bea"}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t)
			srv := newHook(t)
			srv.reply = `{"data":{"id":"sms-42","date":"2026-01-01"}}`
			dev := h.srv.App.Development
			creds := tc.creds(srv.URL)
			h.src.addIntegration(dev, tc.channel, tc.providerID, creds)
			fields := map[string]any{}
			if tc.subCreds != nil {
				fields["channels"] = []any{map[string]any{"providerId": tc.providerID, "credentials": tc.subCreds(srv.URL)}}
			}
			ada := h.src.addSubscriber(dev, "ada", fields)
			out := h.deliver(t, job{subscriber: ada, channel: tc.channel, controls: tc.controls, payload: map[string]any{"name": "Bea"}})
			is.Equal(out.Status, "sent")                       // delivered
			is.Equal(out.ProviderID, tc.providerID)            // through the integration
			is.True(out.MessageID != "")                       // and stored
			is.Equal(len(out.Details), 2)                      // created, sent
			is.Equal(out.Details[0].Detail, "Message created") // first
			is.Equal(out.Details[1].Detail, "Message sent")    // then
			is.Equal(out.Details[1].Status, "Success")         // successfully
			is.True(out.Details[1].Raw != nil)                 // with the provider's reply

			reqs := srv.got()
			is.Equal(len(reqs), len(tc.want)) // one request per target
			for i, want := range tc.want {
				var got map[string]any
				is.NoErr(json.Unmarshal(reqs[i].body, &got)) // a JSON body
				wantJSON, _ := json.Marshal(want)
				gotJSON, _ := json.Marshal(got)
				is.Equal(string(gotJSON), string(wantJSON))                      // the provider's shape
				is.Equal(reqs[i].header.Get("Content-Type"), "application/json") // JSON
				if creds["hmac"] == true || creds["hmac"] == "true" {
					is.Equal(reqs[i].header.Get("X-Herald-Signature"), sign("s3cret", reqs[i].body)) // signed body
				} else {
					is.Equal(reqs[i].header.Get("X-Herald-Signature"), "") // unsigned
				}
				if tc.header[0] != "" {
					is.Equal(reqs[i].header.Get(tc.header[0]), tc.header[1]) // API key header
				}
			}
		})
	}
}

func TestDeliver_Failures(t *testing.T) {
	t.Run("OK provider 500 is a retryable error, then a retry sends", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		srv := newHook(t)
		srv.status, srv.reply = 500, `{"error":"boom"}`
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "chat", "slack", map[string]any{})
		ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{
			map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": srv.URL + "/x"}}}})
		j := job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "hi"}, jobID: "6a0000000000000000000001"}
		out := h.deliver(t, j)
		is.Equal(out.Status, "error")                           // failed
		is.True(out.Retryable)                                  // a 5xx may pass later
		is.Equal(out.Details[1].Status, "Failed")               // recorded as failed
		is.True(strings.Contains(out.Details[1].Detail, "500")) // says what the provider answered
		is.Equal(*out.Details[1].Raw, `{"error":"boom"}`)       // with its reply

		var p page
		h.srv.Dev.Do(t, "GET", "/v1/messages", "").Decode(t, &p)
		is.Equal(p.TotalCount, 1)                             // one message
		is.Equal(p.Data[0].Status, "error")                   // in error
		is.True(strings.Contains(p.Data[0].ErrorText, "500")) // errorText says why
		is.Equal(len(p.Data[0].DeliveredAt), 0)               // never delivered

		srv.mu.Lock()
		srv.status, srv.reply = 200, "ok"
		srv.mu.Unlock()
		again := h.deliver(t, j)
		is.Equal(again.Status, "sent")           // the retry re-sent
		is.Equal(again.MessageID, out.MessageID) // the same message
		is.Equal(len(srv.got()), 2)              // two attempts in all
		var after page
		h.srv.Dev.Do(t, "GET", "/v1/messages", "").Decode(t, &after)
		p = after
		is.Equal(p.TotalCount, 1)          // still one message
		is.Equal(p.Data[0].Status, "sent") // now sent
		is.Equal(p.Data[0].ErrorText, "")  // error cleared
	})
	t.Run("OK 4xx is not retryable", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		srv := newHook(t)
		srv.status = 404
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "chat", "discord", map[string]any{"webhookUrl": srv.URL})
		ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{map[string]any{"providerId": "discord", "credentials": map[string]any{}}}})
		out := h.deliver(t, job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "hi"}})
		is.Equal(out.Status, "error") // failed
		is.True(!out.Retryable)       // a 404 will not pass later
	})
	t.Run("OK redirect to another host is not followed", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		elsewhere := newHook(t)
		redirector := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/stolen", http.StatusTemporaryRedirect))
		t.Cleanup(redirector.Close)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "chat", "slack", map[string]any{"webhookUrl": redirector.URL, "hmac": true, "secretKey": "k"})
		ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{map[string]any{"providerId": "slack", "credentials": map[string]any{}}}})
		out := h.deliver(t, job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "hi"}})
		is.Equal(out.Status, "error")     // not delivered
		is.True(!out.Retryable)           // a redirect will not change by itself
		is.Equal(len(elsewhere.got()), 0) // the other host never saw the body
	})
	t.Run("OK push to some device tokens is a warning, not retried", func(t *testing.T) {
		// The failing token comes first: it must not keep the push from
		// the other, and the step is not retried, which would push twice.
		is := is.New(t)
		h := newHarness(t)
		var mu sync.Mutex
		var targets []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Target string `json:"target"`
			}
			json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			targets = append(targets, body.Target)
			mu.Unlock()
			if body.Target == "tok-gone" {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		t.Cleanup(srv.Close)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "push", "push-webhook", map[string]any{"webhookUrl": srv.URL})
		ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{map[string]any{"providerId": "push-webhook",
			"credentials": map[string]any{"deviceTokens": []string{"tok-gone", "tok-ok"}}}}})
		out := h.deliver(t, job{subscriber: ada, channel: "push", controls: map[string]any{"body": "b"}})
		is.Equal(targets, []string{"tok-gone", "tok-ok"})                        // both tokens posted to
		is.Equal(out.Status, "warning")                                          // delivered in part
		is.True(!out.Retryable)                                                  // so not sent again
		is.Equal(out.Details[1].Status, "Warning")                               // recorded as such
		is.True(strings.Contains(out.Details[1].Detail, "1 of 2 device tokens")) // saying how far it got
	})
	t.Run("OK missing integration stores nothing", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
		is.Equal(out.Status, "error")                                                     // not delivered
		is.Equal(out.MessageID, "")                                                       // nothing stored
		is.True(!out.Retryable)                                                           // needs configuration, not time
		is.Equal(len(out.Details), 1)                                                     // one detail
		is.Equal(out.Details[0].Status, "Failed")                                         // failed
		is.Equal(out.Details[0].Detail, "Subscriber does not have an active integration") // says why
	})
	t.Run("OK missing address", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "sms", "generic-sms", map[string]any{"baseUrl": "http://127.0.0.1:1"})
		h.src.addIntegration(dev, "push", "push-webhook", map[string]any{"webhookUrl": "http://127.0.0.1:1"})
		ada := h.src.addSubscriber(dev, "ada", map[string]any{"phone": nil})
		out := h.deliver(t, job{subscriber: ada, channel: "sms", controls: map[string]any{"body": "b"}})
		is.Equal(out.Details[0].Detail, "Subscriber does not have a phone number") // says why
		out = h.deliver(t, job{subscriber: ada, channel: "push", controls: map[string]any{"body": "b"}})
		is.Equal(out.Status, "error")                                     // no device tokens
		is.True(strings.Contains(out.Details[0].Detail, "device tokens")) // says why
	})
	t.Run("OK bad template is a payload failure", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
		out := h.deliver(t, job{subscriber: ada, controls: map[string]any{"body": "{% if %}"}})
		is.Equal(out.Status, "error")              // not delivered
		is.Equal(out.Details[0].Source, "Payload") // the content is at fault
	})
}

func TestDeliver_Idempotent(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	j := job{subscriber: ada, jobID: "6a00000000000000000000ff", controls: map[string]any{"body": "once"}}
	first := h.deliver(t, j)
	second := h.deliver(t, j)
	is.Equal(first.Status, "sent")                       // delivered
	is.Equal(second.MessageID, first.MessageID)          // the same message
	is.Equal(len(second.Details), len(first.Details))    // the stored outcome
	is.Equal(first.Details[0].Detail, "Message created") // in_app: created
	is.Equal(first.Details[0].Status, "Pending")         // pending
	is.Equal(first.Details[1].Detail, "Message sent")    // then sent
	is.Equal(first.Details[1].Status, "Success")         // successfully
	var p page
	h.srv.Dev.Do(t, "GET", "/v1/messages", "").Decode(t, &p)
	is.Equal(p.TotalCount, 1) // one message for one job

	// An attempt that stopped before recording its outcome (a crash while
	// sending) is sent again, into the same message.
	_, err := h.srv.App.DB.ExecContext(context.Background(), `UPDATE messages SET outcome = '{}' WHERE id = ?`, first.MessageID)
	is.NoErr(err) // simulate the interrupted attempt
	third := h.deliver(t, j)
	is.Equal(third.MessageID, first.MessageID) // the same message
	is.Equal(third.Status, "sent")             // sent again
	h.srv.Dev.Do(t, "GET", "/v1/messages", "").Decode(t, &p)
	is.Equal(p.TotalCount, 1) // still one message

	_, _, err = h.engine.Deliver(t.Context(), &messaging.Delivery{Channel: "in_app"})
	is.True(err != nil) // a delivery without a job is refused
	bad := h.delivery(j)
	bad.Channel = "fax"
	_, _, err = h.engine.Deliver(t.Context(), bad)
	is.True(err != nil) // and so is one of no channel
}

// TestDeliver_RepeatReplaysTheOutcome: a repeat call for a delivered job
// answers exactly what the first did, whether the outcome was kept (a
// provider's reply) or is the one the row implies and was not stored.
func TestDeliver_RepeatReplaysTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name, channel, providerID string
		stored                    bool // the outcome column keeps the document
	}{
		{name: "OK in_app, implied by the row", channel: "in_app", providerID: "service"},
		{name: "OK chat-webhook, with the provider's reply", channel: "chat", providerID: "chat-webhook", stored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t)
			srv := newHook(t)
			dev := h.srv.App.Development
			fields := map[string]any{}
			if tc.channel == "chat" {
				h.src.addIntegration(dev, "chat", tc.providerID, map[string]any{})
				fields["channels"] = []any{map[string]any{"providerId": tc.providerID,
					"credentials": map[string]any{"webhookUrl": srv.URL + "/chat"}}}
			}
			ada := h.src.addSubscriber(dev, "ada", fields)
			j := job{subscriber: ada, channel: tc.channel, jobID: sqldb.NewID(), controls: map[string]any{"body": "once"}}
			first := h.deliver(t, j)
			is.Equal(first.Status, "sent")            // delivered
			is.Equal(first.ProviderID, tc.providerID) // through the integration
			var column string
			is.NoErr(h.srv.App.DB.QueryRowContext(context.Background(), `SELECT outcome FROM messages WHERE id = ?`, first.MessageID).Scan(&column))
			is.Equal(column != "", tc.stored) // kept only when the row does not imply it

			second := h.deliver(t, j)
			is.Equal(second, first) // the same outcome, detail for detail
			if tc.channel == "chat" {
				is.Equal(len(srv.got()), 1) // the repeat did not send again
			}
		})
	}
}

// TestDeliver_OutcomeCommitsWithTheJob: a provider's send is recorded by
// the write Deliver returns, which the worker runs in the transaction that
// records the job's result. Until it commits, the message is unfinished and
// the job's next attempt sends again (a crash loses no send); once it has,
// no attempt sends again or records a second outcome.
func TestDeliver_OutcomeCommitsWithTheJob(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	srv := newHook(t)
	dev := h.srv.App.Development
	h.src.addIntegration(dev, "chat", "chat-webhook", map[string]any{})
	ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{map[string]any{
		"providerId": "chat-webhook", "credentials": map[string]any{"webhookUrl": srv.URL + "/chat"}}}})
	j := job{subscriber: ada, channel: "chat", jobID: sqldb.NewID(), controls: map[string]any{"body": "once"}}
	ctx := t.Context()
	outcomeOf := func() (n int, outcome string) {
		is.NoErr(h.srv.App.DB.QueryRowContext(ctx, `SELECT count(*), coalesce(max(outcome), '') FROM messages WHERE job_id = ?`,
			j.jobID).Scan(&n, &outcome))
		return n, outcome
	}

	// The process dies after the provider took the message, before the
	// job's commit: the write never runs.
	first, lost, err := h.engine.Deliver(ctx, h.delivery(j))
	is.NoErr(err)
	is.Equal(first.Status, "sent")
	is.True(lost != nil) // the outcome is left to the caller's transaction
	n, outcome := outcomeOf()
	is.Equal(n, 1)          // the message is stored before its send
	is.Equal(outcome, "{}") // unfinished: no outcome was recorded on the side
	is.Equal(len(srv.got()), 1)

	again, write, err := h.engine.Deliver(ctx, h.delivery(j))
	is.NoErr(err)
	is.Equal(len(srv.got()), 2)                // the unrecorded send is sent again, not lost
	is.Equal(again.MessageID, first.MessageID) // into the same message
	is.NoErr(h.srv.App.DB.Tx(ctx, func(tx *sql.Tx) error { return write(ctx, tx) }))
	n, outcome = outcomeOf()
	is.Equal(n, 1)           // one message for the job
	is.True(outcome != "{}") // its outcome recorded with the job's commit
	is.True(strings.Contains(outcome, `"status":"sent"`))

	replay, write, err := h.engine.Deliver(ctx, h.delivery(j))
	is.NoErr(err)
	is.True(write == nil)       // nothing more to record
	is.Equal(len(srv.got()), 2) // a recorded send is never sent twice
	is.Equal(replay, again)     // its recorded outcome answers
}

// TestDeliverInApp_RepeatReplaysTheOutcome: an in-app message stored in the
// caller's transaction keeps no outcome, and a later attempt of its job
// answers, byte for byte, what the first did.
func TestDeliverInApp_RepeatReplaysTheOutcome(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	j := job{subscriber: ada, jobID: sqldb.NewID(), controls: map[string]any{"body": "once"}, attempt: 1}
	first, write, err := h.engine.Deliver(t.Context(), h.delivery(j))
	is.NoErr(err)
	is.True(write != nil) // the caller stores the message
	is.NoErr(h.srv.App.DB.Tx(t.Context(), func(tx *sql.Tx) error { return write(t.Context(), tx) }))

	j.attempt = 2
	second, write, err := h.engine.Deliver(t.Context(), h.delivery(j))
	is.NoErr(err)
	is.True(write == nil)   // nothing more to store
	is.Equal(second, first) // the first answer, detail for detail
}

func TestDeliver_Concurrent(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	var wg sync.WaitGroup
	results := make([]outcome, 20)
	errs := make([]error, 20)
	for i := range results {
		wg.Go(func() {
			results[i], errs[i] = h.tryDeliver(job{subscriber: ada, payload: map[string]any{"i": i},
				controls: map[string]any{"body": "n={{ payload.i }} {{ subscriber.firstName | downcase }}"}})
		})
	}
	wg.Wait()
	for i, out := range results {
		is.NoErr(errs[i])            // attempted
		is.Equal(out.Status, "sent") // every concurrent delivery sent
	}
	var p page
	h.srv.Dev.Do(t, "GET", "/v1/messages?limit=100", "").Decode(t, &p)
	is.Equal(p.TotalCount, 20) // one message each
}

// emailWebhook makes an email-webhook integration the Development
// environment's email provider, posting to a hook it returns with ada, a
// subscriber to deliver to.
func emailWebhook(t *testing.T, h *harness) (*hook, map[string]any) {
	srv := newHook(t)
	dev := h.srv.App.Development
	h.src.addIntegration(dev, "email", "email-webhook", map[string]any{"webhookUrl": srv.URL, "from": "a@acme.test"})
	return srv, h.src.addSubscriber(dev, "ada", nil)
}

func TestDeliver_EmailBlocks(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	srv, ada := emailWebhook(t, h)
	out := h.deliver(t, job{subscriber: ada, channel: "email", payload: map[string]any{"name": "Bea"}, controls: map[string]any{
		"subject": "s", "layoutId": nil, "body": []any{
			map[string]any{"type": "text", "content": "Hi {{ payload.name }}", "styles": map[string]any{"textAlign": "center"}},
			map[string]any{"type": "button", "content": "Go", "url": "https://acme.test/{{ payload.name }}"},
		}}})
	is.Equal(out.Status, "sent") // delivered
	var sent map[string]any
	is.NoErr(json.Unmarshal(srv.got()[0].body, &sent))                                           // the webhook body
	is.True(strings.HasPrefix(sent["html"].(string), `<p style="text-align:center">Hi Bea</p>`)) // text block rendered
	is.True(strings.Contains(sent["html"].(string), `href="https://acme.test/Bea"`))             // button URL rendered
	is.Equal(sent["text"], "Hi Bea\nGo")                                                         // plain-text alternative

	var p page
	h.srv.Dev.Do(t, "GET", "/v1/messages", "").Decode(t, &p)
	var blocks []map[string]any
	is.NoErr(json.Unmarshal(p.Data[0].Content, &blocks)) // content is the EmailBlock array
	is.Equal(blocks[0]["content"], "Hi Bea")             // rendered
	is.Equal(blocks[1]["type"], "button")                // kept its kind
	is.Equal(blocks[1]["url"], "https://acme.test/Bea")  // and its rendered URL
}

// TestDeliver_WithoutSources is the store as app/wire.go builds it before the
// other domains are merged: in_app works, subscribers are found through
// their messages, and other channels fail for want of an integration.
func TestDeliver_WithoutSources(t *testing.T) {
	is := is.New(t)
	var store *messaging.Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		store = messaging.NewStore(app.DB, messaging.Sources{})
		messaging.AddRoutes(mux, store)
	})
	h := &harness{srv: srv, store: store, engine: messaging.NewDeliverer(store, platformtest.Loopback), src: newFakeSources()}
	ada := h.src.addSubscriber(srv.App.Development, "ada", nil)
	id := h.mustDeliver(t, job{subscriber: ada, controls: map[string]any{"body": "hi"}})
	out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
	is.Equal(out.Status, "error") // no integrations to send email through

	var p feedPage
	res := srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	is.Equal(res.Status, 200) // ada found through her message
	res.Decode(t, &p)
	is.Equal(p.Data[0].ID, id)                                                               // her message
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/bob/notifications/feed", "").Status, 404) // nobody else
	var list struct {
		Data []map[string]any `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?subscriberId=ada", "").Decode(t, &list)
	is.Equal(len(list.Data), 1) // listed
	_, embedded := list.Data[0]["subscriber"]
	is.True(!embedded) // nothing to embed without a source
}

// The trigger's email overrides reach an email-webhook body too, and a
// trigger without them leaves the body as the "What strict clients check"
// section of docs/api.md shapes it.
func TestDeliver_EmailWebhookOverrides(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	srv, ada := emailWebhook(t, h)
	controls := map[string]any{"subject": "s", "body": "b"}
	h.deliver(t, job{subscriber: ada, channel: "email", controls: controls})
	h.deliver(t, job{subscriber: ada, channel: "email", controls: controls, overrides: map[string]any{
		"email": map[string]any{"from": "sales@acme.test", "senderName": "Sales", "replyTo": "help@acme.test",
			"cc": []any{"boss@acme.test"}, "bcc": "audit@acme.test"}}})
	got := srv.got()
	is.Equal(len(got), 2) // both posted
	var plain, overridden map[string]any
	is.NoErr(json.Unmarshal(got[0].body, &plain))
	is.NoErr(json.Unmarshal(got[1].body, &overridden))
	is.Equal(plain["from"], "a@acme.test") // the integration's sender
	for _, key := range []string{"cc", "bcc", "replyTo"} {
		_, ok := plain[key]
		is.True(!ok) // no override, no key
	}
	is.Equal(overridden["from"], "sales@acme.test")       // sender overridden
	is.Equal(overridden["senderName"], "Sales")           // and named
	is.Equal(overridden["replyTo"], "help@acme.test")     // reply address
	is.Equal(overridden["cc"], []any{"boss@acme.test"})   // copies
	is.Equal(overridden["bcc"], []any{"audit@acme.test"}) // a single address is a list of one
	is.Equal(overridden["to"], "ada@example.com")         // the subscriber stays the recipient
}

// In-app text that holds markup is sanitized unless the step opts out
// (docs/api.md, "Step controls": disableOutputSanitization), and text
// without markup is stored as written.
func TestDeliver_InAppSanitization(t *testing.T) {
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	payload := map[string]any{"h": `<b>Hi</b> <img src="x.png" onerror="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">x</a>`}
	for _, tc := range []struct {
		name     string
		controls map[string]any
		body     string
	}{
		{"OK markup sanitized", map[string]any{"subject": "{{ payload.h }}", "body": "{{ payload.h }}", "avatar": "{{ payload.h }}",
			"primaryAction": map[string]any{"label": "{{ payload.h }}"}},
			`<b>Hi</b> <img src="x.png">x`},
		{"OK disableOutputSanitization keeps it", map[string]any{"subject": "{{ payload.h }}", "body": "{{ payload.h }}", "avatar": "{{ payload.h }}",
			"primaryAction": map[string]any{"label": "{{ payload.h }}"}, "disableOutputSanitization": true},
			payload["h"].(string)},
		{"OK text without markup as written", map[string]any{"subject": "Tom & Jerry <3", "body": "a < b && c > d"},
			"a < b && c > d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id := h.mustDeliver(t, job{subscriber: ada, controls: tc.controls, payload: payload})
			var content, contentJSON string
			var subject *string
			is.NoErr(h.srv.App.DB.QueryRowContext(context.Background(), `SELECT content, subject FROM messages WHERE id = ?`, id).Scan(&contentJSON, &subject))
			is.NoErr(json.Unmarshal([]byte(contentJSON), &content))
			is.Equal(content, tc.body) // the body
			if tc.name == "OK text without markup as written" {
				is.Equal(*subject, "Tom & Jerry <3") // and the subject
				return
			}
			is.Equal(*subject, tc.body) // the subject is sanitized alike
			var avatar, ctaJSON string
			is.NoErr(h.srv.App.DB.QueryRowContext(context.Background(), `SELECT avatar, cta FROM messages WHERE id = ?`, id).Scan(&avatar, &ctaJSON))
			var cta struct {
				Action struct {
					Buttons []struct{ Content string }
				}
			}
			is.NoErr(json.Unmarshal([]byte(ctaJSON), &cta))
			is.Equal(avatar, tc.body)                        // the avatar alike
			is.Equal(cta.Action.Buttons[0].Content, tc.body) // and a button's label
		})
	}
}

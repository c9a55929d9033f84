package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// stallingReceiver is a webhook endpoint that holds its first delivery
// unanswered until the test lets it go, as a slow receiver does while the
// sending process dies, and answers 204 to every later one.
type stallingReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	ids     []string
	release chan struct{}
}

func newStallingReceiver(t *testing.T) *stallingReceiver {
	r := &stallingReceiver{release: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		first := len(r.ids) == 1
		r.mu.Unlock()
		if first {
			select {
			case <-r.release:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		close(r.release)
		r.Close()
	})
	return r
}

// waitIDs polls until the receiver has been called n times and returns
// the webhook-id of each call.
func (r *stallingReceiver) waitIDs(t *testing.T, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		ids := append([]string(nil), r.ids...)
		r.mu.Unlock()
		if len(ids) >= n {
			return ids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the receiver was called fewer than %d times within %s", n, within)
	return nil
}

// raiseOne registers an endpoint at url for message.sent and triggers one
// in-app message through node.
func raiseOne(t *testing.T, c *heraldCluster, node int, url string) {
	t.Helper()
	c.must(t, node, 201, "POST", "/v2/webhooks/endpoints", `{"url":"`+url+`","eventTypes":["message.sent"]}`)
	c.must(t, node, 201, "POST", "/v2/workflows", `{"name":"Hooked","workflowId":"hooked","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	b := c.must(t, node, 201, "POST", "/v1/events/trigger", `{"name":"hooked","to":"ada"}`)
	var ack triggerAnswer
	json.Unmarshal(b, &ack)
	if ack.Status != "processed" {
		t.Fatalf("trigger: %s", b)
	}
}

// TestWebhooks_SIGKILLKeepsTheWebhookID kills Herald while a delivery is
// in flight: the next start sends the event again, under the same
// webhook-id, so the receiver can tell it is the same event.
func TestWebhooks_SIGKILLKeepsTheWebhookID(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds Herald")
	}
	is := is.New(t)
	c := newHeraldCluster(t, buildHeraldBinary(t, t.TempDir()), filepath.Join(t.TempDir(), "herald.db"), 1)
	rc := newStallingReceiver(t)
	is.NoErr(c.start(0)) // Herald is up
	raiseOne(t, c, 0, rc.URL)
	rc.waitIDs(t, 1, 30*time.Second) // the first attempt is in flight
	c.kill(0)
	is.NoErr(c.start(0)) // started again on the same database
	ids := rc.waitIDs(t, 2, 30*time.Second)
	is.Equal(ids[1], ids[0]) // the attempt after the crash carries the same webhook-id
}

// TestMultiInstance_WebhookDeliveredByAnother kills the instance that was
// delivering an event: another instance on the same PostgreSQL database
// takes the delivery over once the dead one's heartbeat is stale, under
// the same webhook-id.
func TestMultiInstance_WebhookDeliveredByAnother(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("needs TEST_DATABASE_URL: two Herald processes share one PostgreSQL database")
	}
	if testing.Short() {
		t.Skip("-short: builds Herald")
	}
	is := is.New(t)
	c := newHeraldCluster(t, buildHeraldBinary(t, t.TempDir()), sqldbtest.NewPostgresURL(t), 2)
	rc := newStallingReceiver(t)
	is.NoErr(c.start(0)) // the first instance, alone, so it is the one delivering
	raiseOne(t, c, 0, rc.URL)
	rc.waitIDs(t, 1, 30*time.Second) // its attempt is in flight
	is.NoErr(c.start(1))             // a second instance
	c.kill(0)
	ids := rc.waitIDs(t, 2, 60*time.Second)
	is.Equal(ids[1], ids[0]) // delivered by the other instance, under the same webhook-id
}

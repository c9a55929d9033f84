package webhooks_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/herald-notify/herald/app/apptest"
)

// receiver is an endpoint a test runs: it verifies every delivery with the
// Standard Webhooks library and keeps what it received. status says what
// it answers each delivery, by how many it received before (nil: 204).
type receiver struct {
	*httptest.Server
	t      testing.TB
	mu     sync.Mutex
	secret []string
	got    []received
	status func(n int) int
}

// received is one delivery a receiver got.
type received struct {
	ID       string // webhook-id
	Verified bool   // the signature verified under the receiver's secret
	Event    struct {
		ID            string          `json:"id"`
		Type          string          `json:"type"`
		Object        string          `json:"object"`
		Timestamp     string          `json:"timestamp"`
		EnvironmentID string          `json:"environmentId"`
		Data          json.RawMessage `json:"data"`
	}
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{t: t}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var got received
		got.ID = r.Header.Get("webhook-id")
		json.Unmarshal(body, &got.Event)
		rc.mu.Lock()
		for _, s := range rc.secret {
			wh, err := standardwebhooks.NewWebhook(s)
			if err == nil && wh.Verify(body, r.Header) == nil {
				got.Verified = true
			}
		}
		n := len(rc.got)
		rc.got = append(rc.got, got)
		status := rc.status
		rc.mu.Unlock()
		code := http.StatusNoContent
		if status != nil {
			code = status(n)
		}
		w.WriteHeader(code)
		w.Write([]byte(`{"answer":"from the receiver"}`))
	}))
	t.Cleanup(rc.Close)
	return rc
}

// verifyWith makes the receiver verify deliveries with secret, beside any
// it had.
func (rc *receiver) verifyWith(secret string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret = append(rc.secret, secret)
}

// answer sets what the receiver answers.
func (rc *receiver) answer(status func(n int) int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

// received returns what the receiver got so far.
func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// wait polls until the receiver holds at least n deliveries, and returns them.
func (rc *receiver) wait(n int) []received {
	rc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got := rc.received(); len(got) >= n {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	rc.t.Fatalf("receiver got %d deliveries, want %d", len(rc.received()), n)
	return nil
}

// ofType returns the deliveries of one event type.
func ofType(got []received, t string) []received {
	var out []received
	for _, g := range got {
		if g.Event.Type == t {
			out = append(out, g)
		}
	}
	return out
}

// endpoint is an endpoint as the API answers it.
type endpoint struct {
	ID             string   `json:"_id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	EventTypes     []string `json:"eventTypes"`
	Active         bool     `json:"active"`
	DisabledReason *string  `json:"disabledReason"`
	Secret         string   `json:"secret"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// delivery is a delivery log entry as the API answers it.
type delivery struct {
	ID        string `json:"_id"`
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	Status    string `json:"status"`
	Attempts  []struct {
		At              string `json:"at"`
		StatusCode      int    `json:"statusCode"`
		DurationMs      int64  `json:"durationMs"`
		ResponseExcerpt string `json:"responseExcerpt"`
	} `json:"attempts"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

// mustEndpoint registers an endpoint at the receiver, taking types (all
// when none), and has the receiver verify with its secret.
func mustEndpoint(t testing.TB, srv *apptest.Server, rc *receiver, types ...string) endpoint {
	t.Helper()
	body := map[string]any{"url": rc.URL, "description": "test receiver"}
	if len(types) > 0 {
		body["eventTypes"] = types
	}
	b, _ := json.Marshal(body)
	var e endpoint
	apptest.MustCreate(t, srv.Dev, "/v2/webhooks/endpoints", string(b)).Decode(t, &e)
	rc.verifyWith(e.Secret)
	return e
}

// deliveries reads an endpoint's delivery log.
func deliveries(t testing.TB, srv *apptest.Server, endpointID string) []delivery {
	t.Helper()
	var page struct {
		Data []delivery `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints/"+endpointID+"/deliveries?limit=100", "", 200).Decode(t, &page)
	return page.Data
}

// waitDelivery polls an endpoint's log until the delivery of eventType
// satisfies ok, and returns it.
func waitDelivery(t testing.TB, srv *apptest.Server, endpointID, eventType string, ok func(delivery) bool) delivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last []delivery
	for time.Now().Before(deadline) {
		last = deliveries(t, srv, endpointID)
		for _, d := range last {
			if d.EventType == eventType && ok(d) {
				return d
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s delivery as wanted in %+v", eventType, last)
	return delivery{}
}

// mustEndpointGet reads one endpoint.
func mustEndpointGet(t testing.TB, srv *apptest.Server, id string) endpoint {
	t.Helper()
	var e endpoint
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints/"+id, "", 200).Decode(t, &e)
	return e
}

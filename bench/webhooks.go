package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// hookReceiver is a webhook endpoint on loopback that answers each delivery
// after delay and keeps, per event, how long after the event was raised
// (its envelope's timestamp) the delivery arrived.
type hookReceiver struct {
	srv   *http.Server
	url   string
	delay time.Duration

	mu   sync.Mutex
	ids  map[string]bool
	lags []time.Duration
}

func startHookReceiver(delay time.Duration) (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String(), delay: delay, ids: map[string]bool{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(h.serve)}
	go h.srv.Serve(ln)
	return h, nil
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	b, _ := io.ReadAll(r.Body)
	var e struct {
		Timestamp time.Time `json:"timestamp"`
	}
	json.Unmarshal(b, &e)
	time.Sleep(h.delay)
	h.mu.Lock()
	if id := r.Header.Get("webhook-id"); !h.ids[id] {
		h.ids[id] = true
		h.lags = append(h.lags, arrived.Sub(e.Timestamp))
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// received is how many distinct events arrived, and the lags sorted.
func (h *hookReceiver) received() (int, []time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	lags := slices.Clone(h.lags)
	slices.Sort(lags)
	return len(h.ids), lags
}

func (h *hookReceiver) close() { h.srv.Close() }

// webhooks runs scenario 13: in-app triggers at 1,000/s, first with no
// webhook endpoint, then with two that take every event, one answering in
// 5 ms and one in 500 ms. The fast endpoint's delivery lag must stay low
// while the slow one falls behind in its own lane, and the trigger rate
// must hold. The fast endpoint must get each event once: as many distinct
// webhook-ids as the server raised events (two per stored message), no
// more and no fewer.
func (b *bench) webhooks(ctx context.Context) error {
	const rate = 1000.0
	n := int(rate) * 20
	if b.sz.triggers < 10_000 {
		n = int(rate) * 5
	}
	without, err := b.pacedTriggers(ctx, "webhooks-off", rate, n, nil, nil)
	if err != nil {
		return err
	}
	fast, err := startHookReceiver(5 * time.Millisecond)
	if err != nil {
		return err
	}
	defer fast.close()
	slow, err := startHookReceiver(500 * time.Millisecond)
	if err != nil {
		return err
	}
	defer slow.close()
	var events int
	createEndpoints := func(c *loadClient) error {
		for _, h := range []*hookReceiver{fast, slow} {
			status, body, err := c.do(ctx, request{method: "POST", path: "/v2/webhooks/endpoints", body: []byte(`{"url":"` + h.url + `"}`)})
			if err != nil || status != 201 {
				return fmt.Errorf("create endpoint: %d %s %v", status, body, err)
			}
		}
		return nil
	}
	// The server runs until the deliveries are in. The events expected are
	// counted from what the server stored, not from the triggers the
	// client saw answered: one it gave up on (its 30 s timeout) may still
	// have been accepted, and raises its events like any other.
	awaitDeliveries := func(c *loadClient) error {
		messages, err := storedMessages(ctx, c)
		if err != nil {
			return err
		}
		events = 2 * messages // message.sent and message.delivered
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if got, _ := fast.received(); got >= events {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second) // an event beyond those expected has time to show
		return nil
	}
	with, err := b.pacedTriggers(ctx, "webhooks-on", rate, n, createEndpoints, awaitDeliveries)
	if err != nil {
		return err
	}
	got, lags := fast.received()
	slowGot, _ := slow.received()
	p99 := percentile(lags, 0.99)
	sc := "13 webhooks"
	b.rep.add(row{Scenario: sc, Metric: fmt.Sprintf("triggers answered/s at %.0f/s, no endpoint (%d errors)", rate, without.Errors), Value: without.PerSec, Unit: "req/s", Target: "reported"})
	b.rep.add(row{Scenario: sc, Metric: fmt.Sprintf("triggers answered/s at %.0f/s, endpoints at 5 ms and 500 ms (%d errors)", rate, with.Errors),
		Value: with.PerSec, Unit: "req/s", Floor: without.PerSec, Target: ">= 0.9x without endpoints",
		Pass: b.result(with.PerSec >= 0.9*without.PerSec && with.Errors == 0)})
	b.rep.add(row{Scenario: sc, Metric: "trigger p99 latency, no endpoint", Value: ms(without.P99), Unit: "ms", Target: "reported"})
	b.rep.add(row{Scenario: sc, Metric: "trigger p99 latency, with the endpoints", Value: ms(with.P99), Unit: "ms", Target: "reported"})
	b.rep.add(row{Scenario: sc, Metric: fmt.Sprintf("delivery lag p99 at the 5 ms endpoint (%d of %d events, each once)", got, events),
		Value: ms(p99), Unit: "ms", Target: "<= 2000 ms", Pass: b.result(p99 <= 2*time.Second && got == events)})
	b.rep.add(row{Scenario: sc, Metric: "events the 500 ms endpoint had by then (its own lane, 16 at a time)", Value: float64(slowGot), Unit: "events", Target: "reported"})
	return nil
}

// storedMessages waits until the server's worker has stored the messages
// of every trigger it accepted (their count still for a second), and
// returns how many there are.
func storedMessages(ctx context.Context, c *loadClient) (int, error) {
	last, since := -1, time.Now()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		status, body, err := c.do(ctx, request{method: "GET", path: "/v1/messages?channel=in_app&limit=1"})
		if err != nil || status != 200 {
			return 0, fmt.Errorf("count messages: %d %s %v", status, body, err)
		}
		var page struct {
			TotalCount int `json:"totalCount"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, fmt.Errorf("count messages: %w", err)
		}
		if page.TotalCount != last {
			last, since = page.TotalCount, time.Now()
		} else if time.Since(since) >= time.Second {
			return last, nil
		}
	}
	return 0, fmt.Errorf("the stored messages did not settle within 5 minutes")
}

// pacedTriggers starts a server on a fresh database named name, creates the
// bench workflow and its recipients, runs setUp, then sends n in-app
// triggers open-loop at rate, and runs drain before it stops the server.
func (b *bench) pacedTriggers(ctx context.Context, name string, rate float64, n int, setUp, drain func(*loadClient) error) (loadResult, error) {
	db, err := b.database(ctx, name)
	if err != nil {
		return loadResult{}, err
	}
	srv, err := startPinned(ctx, b.pin.server, b.bin, db)
	if err != nil {
		return loadResult{}, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(benchWorkflow)}); err != nil || status != 201 {
		return loadResult{}, fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	if setUp != nil {
		if err := setUp(c); err != nil {
			return loadResult{}, err
		}
	}
	b.logf("scenario 13 (%s): %d triggers at %.0f/s", name, n, rate)
	res := c.paced(ctx, rate, n, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"w%d","payload":{"n":%d}}`, i%b.sz.recipients, i)}
	})
	if drain != nil {
		if err := drain(c); err != nil {
			return res, err
		}
	}
	return res, nil
}

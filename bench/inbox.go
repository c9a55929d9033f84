package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// inbox runs scenario 9: many subscribers, each with a live inbox socket
// on one Herald, the server's RSS with them open, and how soon a trigger
// accepted reaches its subscriber's socket as notification_received while
// triggers arrive at a steady rate.
func (b *bench) inbox(ctx context.Context) error {
	db, err := b.database(ctx, "inbox")
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, b.bin, db)
	if err != nil {
		return err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(benchWorkflow)}); err != nil || status != 201 {
		return fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	ident, err := environmentIdentifier(ctx, c)
	if err != nil {
		return err
	}

	// One session and one socket per subscriber; the session creates it.
	n := b.sz.sockets
	b.logf("scenario 9: %d inbox sessions and sockets", n)
	tokens := make([]string, n)
	var failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, b.sz.clients)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			status, body, err := c.do(ctx, request{method: "POST", path: "/v1/inbox/session",
				body: fmt.Appendf(nil, `{"applicationIdentifier":%q,"subscriber":{"subscriberId":"w%d"}}`, ident, i)})
			var s struct {
				Data struct {
					Token string `json:"token"`
				} `json:"data"`
			}
			if err != nil || status != 201 || json.Unmarshal(body, &s) != nil {
				failed.Add(1)
				return
			}
			tokens[i] = s.Data.Token
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d sessions failed", failed.Load())
	}

	received := &receipts{at: map[string]time.Time{}}
	socketCtx, closeSockets := context.WithCancel(ctx)
	defer closeSockets()
	ws := strings.Replace(srv.base, "http://", "ws://", 1) + "/socket.io/?EIO=4&transport=websocket&token="
	opened := make([]*websocket.Conn, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			conn, err := openSocket(socketCtx, ws+tokens[i])
			if err != nil {
				failed.Add(1)
				return
			}
			opened[i] = conn
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d sockets failed to open", failed.Load(), n)
	}
	for _, conn := range opened {
		go listen(socketCtx, conn, received)
	}
	time.Sleep(2 * time.Second) // let the sockets' start-up garbage settle
	rss, _ := srv.rssMB()
	b.rep.add(row{Scenario: "9 inbox sockets", Metric: fmt.Sprintf("server RSS with %d sockets open", n), Value: rss, Unit: "MB",
		Target: "<= 300 MB", Pass: b.result(rss <= 300)})

	// Triggers at a steady rate, each to one subscriber with a socket.
	b.logf("scenario 9: triggers at %.0f/s for %s", b.sz.inboxRate, b.sz.latencyFor)
	total := int(b.sz.inboxRate * b.sz.latencyFor.Seconds())
	accepted, sent := pacedTriggers(ctx, c, b.sz.inboxRate, total, n)
	// Every event still under way arrives within seconds.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && received.count() < total-sent.Errors {
		time.Sleep(50 * time.Millisecond)
	}
	var lat []time.Duration
	missing := 0
	received.mu.Lock()
	for tx, acc := range accepted {
		at, ok := received.at[tx]
		if !ok {
			missing++
			continue
		}
		// The in-app step runs in the trigger itself, and the event can
		// reach the socket before the client has read the 201: that is 0.
		lat = append(lat, max(at.Sub(acc), 0))
	}
	received.mu.Unlock()
	res := summarise(lat, missing+sent.Errors, time.Duration(0))
	b.rep.add(row{Scenario: "9 inbox sockets", Metric: fmt.Sprintf("p50 trigger accepted → notification_received at %.0f triggers/s", b.sz.inboxRate),
		Value: ms(res.P50), Unit: "ms", Target: "reported"})
	b.rep.add(row{Scenario: "9 inbox sockets", Metric: fmt.Sprintf("p99 (%d triggers, %d errors, %d events missing)", total, sent.Errors, missing),
		Value: ms(res.P99), Unit: "ms", Target: "<= 100 ms", Pass: b.result(res.P99 <= 100*time.Millisecond && missing == 0 && sent.Errors == 0)})
	// The trigger's own answer under the same load: a tail both share is
	// the machine's or the writer's, not the sockets'.
	b.rep.add(row{Scenario: "9 inbox sockets", Metric: fmt.Sprintf("p99 trigger answered, beside it (p50 %.2f ms)", ms(sent.P50)),
		Value: ms(sent.P99), Unit: "ms", Target: "reported"})
	rss, peak := srv.rssMB()
	b.rep.add(row{Scenario: "9 inbox sockets", Metric: fmt.Sprintf("server RSS after the triggers (peak %.0f MB)", peak), Value: rss, Unit: "MB", Target: "reported"})
	return nil
}

// environmentIdentifier reads the Development environment's public identifier.
func environmentIdentifier(ctx context.Context, c *loadClient) (string, error) {
	status, body, err := c.do(ctx, request{method: "GET", path: "/v1/environments"})
	if err != nil || status != 200 {
		return "", fmt.Errorf("environments: %d %s %v", status, body, err)
	}
	var envs []struct {
		Name       string `json:"name"`
		Identifier string `json:"identifier"`
	}
	if err := json.Unmarshal(body, &envs); err != nil {
		return "", err
	}
	for _, e := range envs {
		if e.Name == "Development" {
			return e.Identifier, nil
		}
	}
	return "", fmt.Errorf("no Development environment")
}

// openSocket connects as socket.io-client does: the open packet, then the
// namespace CONNECT and its answer.
func openSocket(ctx context.Context, url string) (*websocket.Conn, error) {
	dial, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dial, url, nil)
	if err != nil {
		return nil, err
	}
	if _, _, err := conn.Read(dial); err != nil { // 0{"sid":…}
		conn.CloseNow()
		return nil, err
	}
	if err := conn.Write(dial, websocket.MessageText, []byte("40")); err != nil {
		conn.CloseNow()
		return nil, err
	}
	_, msg, err := conn.Read(dial)
	if err != nil || !strings.HasPrefix(string(msg), "40{") {
		conn.CloseNow()
		return nil, fmt.Errorf("connect: %q %v", msg, err)
	}
	return conn, nil
}

// receipts are when each transaction's notification_received arrived.
type receipts struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (r *receipts) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// listen answers pings and notes each notification_received.
func listen(ctx context.Context, conn *websocket.Conn, r *receipts) {
	defer conn.CloseNow()
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		now := time.Now()
		switch {
		case string(msg) == "2":
			conn.Write(ctx, websocket.MessageText, []byte("3"))
		case strings.HasPrefix(string(msg), `42["notification_received"`):
			var ev []json.RawMessage
			var p struct {
				Message struct {
					TransactionID string `json:"transactionId"`
				} `json:"message"`
			}
			if json.Unmarshal(msg[2:], &ev) == nil && len(ev) == 2 && json.Unmarshal(ev[1], &p) == nil {
				r.mu.Lock()
				r.at[p.Message.TransactionID] = now
				r.mu.Unlock()
			}
		}
	}
}

// pacedTriggers sends total triggers open-loop at rate per second, each to
// one of the n subscribers with a socket, and returns when each was
// accepted (its 201 read), by transactionId.
func pacedTriggers(ctx context.Context, c *loadClient, rate float64, total, n int) (map[string]time.Time, loadResult) {
	var mu sync.Mutex
	accepted := make(map[string]time.Time, total)
	res := c.paced(ctx, rate, total, func(i int) request {
		tx := fmt.Sprintf("t%d", i)
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"w%d","payload":{"n":%d},"transactionId":%q}`, (i*7919)%n, i, tx),
			answered: func(_ int, at time.Time) {
				mu.Lock()
				accepted[tx] = at
				mu.Unlock()
			}}
	})
	return accepted, res
}

package main

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// pushDouble is a browser push service on loopback: it answers each push
// after delay and counts pushes by the subscription's path, so a lost or
// doubled push shows. It does not decrypt (the tests do): its own CPU is
// the load generator's, and what is measured is the server's.
type pushDouble struct {
	srv   *http.Server
	url   string
	delay time.Duration

	mu     sync.Mutex
	pushes map[string]int // path → pushes
	total  int
	bad    int // pushes without a VAPID signature or an aes128gcm body
	last   time.Time
}

func startPushDouble(delay time.Duration) (*pushDouble, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &pushDouble{url: "http://" + ln.Addr().String(), delay: delay, pushes: map[string]int{}}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve)}
	go d.srv.Serve(ln)
	return d, nil
}

func (d *pushDouble) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	time.Sleep(d.delay)
	ok := strings.HasPrefix(r.Header.Get("Authorization"), "vapid t=") && r.Header.Get("Content-Encoding") == "aes128gcm"
	d.mu.Lock()
	d.pushes[r.URL.Path]++
	d.total++
	if !ok {
		d.bad++
	}
	d.last = time.Now()
	d.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (d *pushDouble) counts() (distinct, total, bad int, last time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pushes), d.total, d.bad, d.last
}

func (d *pushDouble) close() { d.srv.Close() }

// webPush runs scenario 17: a broadcast of one push step to 2,000
// subscribers, each with a browser subscription at a push service double
// answering in 50 ms, sent through a web-push integration; every push is
// encrypted for its subscription and signed, so the server's CPU per push
// shows what that costs.
func (b *bench) webPush(ctx context.Context) error {
	const n, delay = 2_000, 50 * time.Millisecond
	b.logf("scenario 17: %d web pushes, push service answers after %s", n, delay)
	service, err := startPushDouble(delay)
	if err != nil {
		return err
	}
	defer service.close()
	db, err := b.database(ctx, "webpush-"+fmt.Sprint(time.Now().UnixNano()))
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, b.bin, db)
	if err != nil {
		return err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	for _, r := range []request{
		{method: "POST", path: "/v1/integrations", want: 201, body: []byte(`{"providerId":"web-push","channel":"push","active":true,
			"credentials":{"subject":"mailto:bench@bench.test"}}`)},
		{method: "POST", path: "/v2/workflows", want: 201, body: []byte(`{"name":"Bench push","workflowId":"bench-push","active":true,
			"steps":[{"name":"Push","type":"push","controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}}]}`)},
	} {
		if status, body, err := c.do(ctx, r); err != nil || status != r.want {
			return fmt.Errorf("set up %s: %d %s %v", r.path, status, body, err)
		}
	}
	// One browser's keys for every subscription: the server's work per
	// push (a one-time key agreement, the encryption, the signature) does
	// not depend on them.
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	made := c.run(ctx, b.sz.clients, n, func(i int) request {
		sub, _ := json.Marshal(map[string]any{"endpoint": fmt.Sprintf("%s/push/%d", service.url, i), "expirationTime": nil,
			"keys": map[string]string{"p256dh": base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
				"auth": base64.RawURLEncoding.EncodeToString(auth)}})
		body, _ := json.Marshal(map[string]any{"subscriberId": fmt.Sprintf("w%d", i),
			"channels": []any{map[string]any{"providerId": "web-push", "credentials": map[string]any{"deviceTokens": []string{string(sub)}}}}})
		return request{method: "POST", path: "/v1/subscribers", want: 201, body: body}
	})
	if made.Errors > 0 {
		return fmt.Errorf("create subscribers: %s", made)
	}
	cpu0 := srv.cpu()
	start := time.Now()
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v1/events/trigger/broadcast",
		body: []byte(`{"name":"bench-push","payload":{"n":1}}`)}); err != nil || status >= 300 {
		return fmt.Errorf("broadcast: %d %s %v", status, body, err)
	}
	// Wait until every push is in, or none arrives for 30 s.
	var distinct, total, bad int
	var last time.Time
	for seen, seenAt := -1, time.Now(); ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		distinct, _, _, last = service.counts()
		if distinct != seen {
			seen, seenAt = distinct, time.Now()
		}
		if distinct >= n || time.Since(seenAt) > 30*time.Second {
			break
		}
	}
	cpu := srv.cpu() - cpu0
	time.Sleep(2 * delay) // let a late duplicate arrive before counting
	distinct, total, bad, _ = service.counts()
	perSec := float64(distinct) / last.Sub(start).Seconds()
	perPush := 0.0
	if distinct > 0 {
		perPush = float64(cpu.Microseconds()) / float64(distinct)
	}
	const scenario = "17 web push"
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("web pushes sent/s, push service answers after %s (%d pushes)", delay, n),
		Value: perSec, Unit: "sends/s", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: "server CPU per push (broadcast, render, encryption, VAPID signature, send)",
		Value: perPush, Unit: "µs", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: "pushes lost", Value: float64(n - distinct), Unit: "pushes", Target: "0", Pass: b.result(distinct == n)})
	b.rep.add(row{Scenario: scenario, Metric: "pushes sent twice", Value: float64(total - distinct), Unit: "pushes", Target: "0", Pass: b.result(total == distinct)})
	b.rep.add(row{Scenario: scenario, Metric: "pushes unsigned or not aes128gcm", Value: float64(bad), Unit: "pushes", Target: "0", Pass: b.result(bad == 0)})
	return nil
}

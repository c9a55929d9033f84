package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// providerDouble is a provider's API on loopback: it answers each send
// after delay (or never, until the caller gives up, when hang), and counts
// sends by Herald's message id, so a lost or doubled send shows.
type providerDouble struct {
	srv   *http.Server
	url   string
	delay time.Duration
	hang  bool

	mu       sync.Mutex
	sends    map[string]int // Herald message id → sends
	total    int
	last     time.Time
	inflight int // requests being answered
	peak     int // the most at once
}

func startProviderDouble(delay time.Duration, hang bool) (*providerDouble, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &providerDouble{url: "http://" + ln.Addr().String(), delay: delay, hang: hang, sends: map[string]int{}}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve)}
	go d.srv.Serve(ln)
	return d, nil
}

func (d *providerDouble) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if d.hang {
		<-r.Context().Done() // Herald's client times out
		return
	}
	d.mu.Lock()
	d.inflight++
	d.peak = max(d.peak, d.inflight)
	d.mu.Unlock()
	time.Sleep(d.delay)
	var body struct {
		CustomArgs struct {
			ID string `json:"heraldMessageId"`
		} `json:"custom_args"`
	}
	json.Unmarshal(b, &body)
	d.mu.Lock()
	d.inflight--
	d.sends[body.CustomArgs.ID]++
	d.total++
	d.last = time.Now()
	d.mu.Unlock()
	w.Header().Set("X-Message-Id", "bench-"+body.CustomArgs.ID)
	w.WriteHeader(http.StatusAccepted)
}

func (d *providerDouble) counts() (distinct, total, peak int, last time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sends), d.total, d.peak, d.last
}

func (d *providerDouble) close() { d.srv.Close() }

// providers runs scenario 7: emails fanned out to a provider that answers
// after 100 ms, then 500 ms, then 100 ms again while a second channel's
// provider hangs.
func (b *bench) providers(ctx context.Context) error {
	n := 20_000
	if b.rep.Quick {
		n = 2_000
	}
	if _, err := b.emailRun(ctx, "fast", n, 100*time.Millisecond, smsNone); err != nil {
		return err
	}
	if os.Getenv("BENCH_FAST_ONLY") != "" {
		return nil
	}
	if _, err := b.emailRun(ctx, "slow", n/4, 500*time.Millisecond, smsNone); err != nil {
		return err
	}
	// The same email-then-sms workflow twice, its sms provider answering
	// and then hanging: the difference is the hang's alone.
	answering, err := b.emailRun(ctx, "beside an answering sms provider", n, 100*time.Millisecond, smsAnswers)
	if err != nil {
		return err
	}
	hanging, err := b.emailRun(ctx, "beside a hanging sms provider", n, 100*time.Millisecond, smsHangs)
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "7 provider fan-out", Metric: "email sends/s beside a hanging sms provider, as a share of beside an answering one",
		Value: 100 * hanging / answering, Unit: "%", Target: ">= 90%", Pass: b.result(hanging >= 0.9*answering)})
	return nil
}

// smsMode is whether an emailRun's workflow also sends an sms, and how its
// provider answers.
type smsMode int

const (
	smsNone smsMode = iota
	smsAnswers
	smsHangs
)

// emailRun broadcasts an email to n subscribers through a SendGrid
// integration pointed at a double answering after delay, waits until the
// double has every one, and reports the rate, peak RSS, lost and doubled
// sends. With an sms mode, the workflow then sends each subscriber an sms
// through a provider that answers after delay, or never.
func (b *bench) emailRun(ctx context.Context, name string, n int, delay time.Duration, sms smsMode) (float64, error) {
	b.logf("scenario 7 (%s): %d emails, provider answers after %s", name, n, delay)
	email, err := startProviderDouble(delay, false)
	if err != nil {
		return 0, err
	}
	defer email.close()
	db, err := b.database(ctx, "providers-"+fmt.Sprint(time.Now().UnixNano()))
	if err != nil {
		return 0, err
	}
	srv, err := startServer(ctx, b.bin, db)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	steps := `[{"name":"Email","type":"email","controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}}]`
	setup := []request{
		{method: "POST", path: "/v1/integrations", want: 201, body: fmt.Appendf(nil, `{"providerId":"sendgrid","channel":"email","active":true,
			"credentials":{"apiKey":"SG.bench","from":"no-reply@bench.test","baseUrl":%q}}`, email.url)},
	}
	if sms != smsNone {
		sms, err := startProviderDouble(delay, sms == smsHangs)
		if err != nil {
			return 0, err
		}
		defer sms.close()
		setup = append(setup, request{method: "POST", path: "/v1/integrations", want: 201, body: fmt.Appendf(nil, `{"providerId":"twilio","channel":"sms","active":true,
			"credentials":{"accountSid":"AC1","token":"t","from":"+15550000","baseUrl":%q}}`, sms.url)})
		steps = `[{"name":"Email","type":"email","controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}},
			{"name":"SMS","type":"sms","controlValues":{"body":"Order {{payload.n}}"}}]`
	}
	setup = append(setup, request{method: "POST", path: "/v2/workflows", want: 201,
		body: []byte(`{"name":"Bench email","workflowId":"bench-email","active":true,"steps":` + steps + `}`)})
	for _, r := range setup {
		if status, body, err := c.do(ctx, r); err != nil || status != r.want {
			return 0, fmt.Errorf("set up %s: %d %s %v", r.path, status, body, err)
		}
	}
	made := c.run(ctx, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201,
			body: fmt.Appendf(nil, `{"subscriberId":"e%d","email":"e%d@bench.test","phone":"+1555%07d"}`, i, i, i)}
	})
	if made.Errors > 0 {
		return 0, fmt.Errorf("create subscribers: %s", made)
	}
	// One broadcast fans out to every subscriber, so what is timed is the
	// sends, not the triggers (scenario 1 times those).
	srv.resetPeak()
	start := time.Now()
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v1/events/trigger/broadcast",
		body: []byte(`{"name":"bench-email","payload":{"n":1}}`)}); err != nil || status >= 300 {
		return 0, fmt.Errorf("broadcast: %d %s %v", status, body, err)
	}
	// Wait until every email is sent, or none arrives for 30 s.
	var distinct, total, peakSends int
	var last time.Time
	for seen, seenAt := -1, time.Now(); ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		distinct, total, _, last = email.counts()
		if distinct != seen {
			seen, seenAt = distinct, time.Now()
		}
		if distinct >= n || time.Since(seenAt) > 30*time.Second {
			break
		}
	}
	time.Sleep(2 * delay) // let a late duplicate arrive before counting
	distinct, total, peakSends, _ = email.counts()
	_, peak := srv.rssMB()
	perSec := float64(distinct) / last.Sub(start).Seconds()
	scenario := "7 provider fan-out"
	target, pass := "reported", (*bool)(nil)
	if name == "fast" {
		target, pass = ">= 1500 sends/s", b.result(perSec >= 1500)
	}
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("emails sent/s, provider answers after %s (%s, %d emails)", delay, name, n),
		Value: perSec, Unit: "sends/s", Target: target, Pass: pass})
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("most sends waiting on the provider at once (%s)", name), Value: float64(peakSends), Unit: "sends", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("peak RSS (%s)", name), Value: peak, Unit: "MB", Target: "<= 300 MB", Pass: b.result(peak <= 300)})
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("emails lost (%s)", name), Value: float64(n - distinct), Unit: "emails", Target: "0", Pass: b.result(distinct == n)})
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("emails sent twice (%s)", name), Value: float64(total - distinct), Unit: "emails", Target: "0", Pass: b.result(total == distinct)})
	return perSec, nil
}

package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/sqldb"
)

// DispatcherConfig tunes a Dispatcher; zero values take the defaults.
type DispatcherConfig struct {
	Guard *outbound.Guard // where endpoints may be reached; nil refuses private addresses
	// PerEndpoint is how many deliveries one endpoint has in flight at
	// most: a slow endpoint holds up only its own lane (default 16).
	PerEndpoint int
	Timeout     time.Duration // one attempt's limit (default 15 s)
	Poll        time.Duration // how often idle lanes look for due work (default 250 ms)
	Logger      *slog.Logger
}

// Dispatcher delivers the queued deliveries: one lane per active endpoint,
// each with at most PerEndpoint attempts in flight, so that a slow or dead
// endpoint delays nothing but its own deliveries. Results are recorded in
// batches by one settler.
type Dispatcher struct {
	store  *Store
	cfg    DispatcherConfig
	client *http.Client

	mu    sync.Mutex
	lanes map[string]*lane

	results chan settled
	wg      sync.WaitGroup
}

// settled is one attempt's result on its way to the settler.
type settled struct {
	d *delivery
	o outcome
}

// NewDispatcher returns a dispatcher of store's deliveries.
func NewDispatcher(store *Store, cfg DispatcherConfig) *Dispatcher {
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	transport := cfg.Guard.Transport(cfg.Timeout)
	transport.MaxIdleConnsPerHost = cfg.PerEndpoint
	return &Dispatcher{store: store, cfg: cfg, lanes: map[string]*lane{},
		client:  &http.Client{Transport: transport, Timeout: cfg.Timeout, CheckRedirect: noRedirects},
		results: make(chan settled, 1024)}
}

// noRedirects makes a redirect an answer like any other: a 3xx is not a
// success, and following it would reach a URL nobody registered.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// lane is one endpoint's deliveries in flight.
type lane struct {
	endpoint string
	target   chan target // the endpoint's URL and secrets as last read
	stop     context.CancelFunc
}

// target is where a lane posts and what it signs with.
type target struct {
	url     string
	secrets [][]byte
}

// Start runs the dispatcher until ctx is done; the returned function waits
// for the attempts in flight to be recorded.
func (p *Dispatcher) Start(ctx context.Context) func(context.Context) {
	if _, err := p.store.recoverLeases(ctx, true); err != nil {
		p.cfg.Logger.Error("recover webhook deliveries", "err", err)
	}
	settlerDone := make(chan struct{})
	go func() {
		defer close(settlerDone)
		p.settler()
	}()
	supervised := make(chan struct{})
	go func() {
		defer close(supervised)
		p.supervise(ctx)
	}()
	return func(wait context.Context) {
		<-supervised
		p.mu.Lock()
		for _, l := range p.lanes {
			l.stop()
		}
		p.mu.Unlock()
		done := make(chan struct{})
		go func() {
			p.wg.Wait()
			close(p.results)
			<-settlerDone
			close(done)
		}()
		select {
		case <-done:
		case <-wait.Done():
		}
	}
}

// supervise keeps one lane per active endpoint, reading the endpoints
// again whenever a raise or a change wakes it and at each poll, and on a
// shared database hands on the deliveries of instances that died.
func (p *Dispatcher) supervise(ctx context.Context) {
	poll := time.NewTicker(p.cfg.Poll)
	defer poll.Stop()
	rescued := time.Now()
	for {
		if err := p.refresh(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Error("read webhook endpoints", "err", err)
		}
		if p.store.db.Shared() && time.Since(rescued) > sqldb.InstanceTTL/3 {
			rescued = time.Now()
			if _, err := p.store.recoverLeases(ctx, false); err != nil && ctx.Err() == nil {
				p.cfg.Logger.Error("recover webhook deliveries", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.store.woken:

		case <-poll.C:

		}
	}
}

// refresh starts a lane for each active endpoint that has none, hands each
// lane its endpoint as it now is, and stops the lanes of endpoints gone or
// disabled.
func (p *Dispatcher) refresh(ctx context.Context) error {
	targets, err := p.store.targets(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, l := range p.lanes {
		if _, ok := targets[id]; !ok {
			l.stop()
			delete(p.lanes, id)
		}
	}
	for id, t := range targets {
		l := p.lanes[id]
		if l == nil {
			laneCtx, stop := context.WithCancel(ctx)
			l = &lane{endpoint: id, target: make(chan target, 1), stop: stop}
			p.lanes[id] = l
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.run(laneCtx, l)
			}()
		}
		select { // keep only the newest
		case <-l.target:
		default:
		}
		l.target <- t
	}
	return nil
}

// run is one lane: it claims due deliveries while it has room in flight,
// and posts each.
func (p *Dispatcher) run(ctx context.Context, l *lane) {
	var cur target
	inflight := 0
	done := make(chan struct{}, p.cfg.PerEndpoint)
	for {
		// Claims wait until half the lane is free, or all of it: one claim
		// then takes several deliveries, where a claim per finished
		// attempt would take the writer once a delivery.
		if cur.url != "" && inflight <= p.cfg.PerEndpoint/2 {
			if due, err := p.store.anyDue(ctx, l.endpoint); err == nil && due {
				claimed, err := p.store.claim(ctx, l.endpoint, p.cfg.PerEndpoint-inflight, p.cfg.Timeout+time.Minute)
				if err != nil && ctx.Err() == nil {
					p.cfg.Logger.Error("claim webhook deliveries", "endpoint_id", l.endpoint, "err", err)
				}
				for _, d := range claimed {
					inflight++
					p.wg.Add(1)
					go func(d *delivery, t target) {
						defer p.wg.Done()
						p.results <- settled{d, p.post(d, t)}
						done <- struct{}{}
					}(d, cur)
				}
				if len(claimed) > 0 && inflight <= p.cfg.PerEndpoint/2 {
					continue // more may be due
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case t := <-l.target:
			cur = t
		case <-done:
			inflight--
		}
	}
}

// post makes one attempt: the event's body, signed with every secret the
// endpoint has now, under the same webhook-id as every other attempt.
func (p *Dispatcher) post(d *delivery, t target) outcome {
	start := time.Now()
	o := outcome{attempt: Attempt{At: sqldb.FormatTime(p.store.now())}}
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(d.Payload))
	if err != nil {
		o.attempt.ResponseExcerpt = "invalid URL: " + err.Error()
		return o
	}
	// The signature's timestamp is the wall clock's: receivers compare it
	// with theirs to refuse replays.
	for k, v := range signedHeaders(d.EventID, time.Now(), d.Payload, t.secrets) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Webhooks/1")
	res, err := p.client.Do(req)
	o.attempt.DurationMs = time.Since(start).Milliseconds()
	if err != nil {
		var refused *outbound.RefusedError
		if errors.As(err, &refused) {
			o.refused = refused.Error()
		}
		o.attempt.ResponseExcerpt = excerpt([]byte(err.Error()))
		return o
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, excerptLimit+utf8.UTFMax))
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // lets the connection be reused
	o.attempt.StatusCode = res.StatusCode
	o.attempt.ResponseExcerpt = excerpt(body)
	o.ok = res.StatusCode >= 200 && res.StatusCode < 300
	o.gone = res.StatusCode == http.StatusGone
	return o
}

// excerptLimit is how much of an answer the delivery log keeps.
const excerptLimit = 500

// excerpt is the start of b as valid text.
func excerpt(b []byte) string {
	if len(b) > excerptLimit {
		b = b[:excerptLimit]
	}
	return strings.ToValidUTF8(string(b), "")
}

// signedHeaders are the Standard Webhooks headers of one attempt: the
// message id, the time, and a v1 signature per secret (docs/webhooks.md,
// "Verifying a delivery").
func signedHeaders(id string, at time.Time, body []byte, secrets [][]byte) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, key := range secrets {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": strings.Join(sigs, " ")}
}

// settleBatch is the most results one settle transaction records.
const settleBatch = 256

// settler records results as they come, many to a transaction.
func (p *Dispatcher) settler() {
	for first := range p.results {
		batch := map[*delivery]outcome{first.d: first.o}
	more:
		for len(batch) < settleBatch {
			select {
			case r, ok := <-p.results:
				if !ok {
					break more
				}
				batch[r.d] = r.o
			default:
				break more
			}
		}
		// A fresh context: results in flight at a stop are still recorded.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := p.store.settle(ctx, batch); err != nil {
			// Their leases run out and they are attempted again.
			p.cfg.Logger.Error("record webhook deliveries", "count", len(batch), "err", err)
		}
		cancel()
		for d, o := range batch {
			if o.refused != "" {
				p.cfg.Logger.Warn("webhook endpoint refused by the outbound guard", "endpoint_id", d.EndpointID,
					"reason", o.refused)
			}
		}
	}
}

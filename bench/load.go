package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// request is one HTTP call a load run makes; the generator picks them by
// index so each client can vary its target (a random subscriber, say).
type request struct {
	method string
	path   string
	body   []byte
	want   int // expected status
	// auth, when set, is the Authorization header in place of the
	// client's API key (an inbox session's bearer token).
	auth string
	// answered, when set, is told each answer's status and when it came
	// (paced only).
	answered func(status int, at time.Time)
}

// loadResult summarises one load run.
type loadResult struct {
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	PerSec   float64       `json:"per_sec"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
}

// loadClient drives a server over loopback with a fixed API key, or, for
// the console's pages, a session's cookie.
type loadClient struct {
	base   string
	key    string
	cookie string
	http   *http.Client
}

func newLoadClient(base, key string, conns int) *loadClient {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	return &loadClient{base: base, key: key, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// do sends one request and returns its status and body.
func (c *loadClient) do(ctx context.Context, r request) (int, []byte, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// status sends one request and returns its status. The body is read and
// dropped without keeping it, so the connection is reused and the load
// generator spends as little of the shared CPU on a response as it can.
func (c *loadClient) status(ctx context.Context, r request) (int, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

func (c *loadClient) send(ctx context.Context, r request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, bytesReader(r.body))
	if err != nil {
		return nil, err
	}
	switch {
	case r.auth != "":
		req.Header.Set("Authorization", r.auth)
	case c.cookie != "":
		req.Header.Set("Cookie", c.cookie)
	default:
		req.Header.Set("Authorization", "ApiKey "+c.key)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.http.Do(req)
}

// run sends n requests from `clients` goroutines (or until ctx ends) and
// measures each one's latency. next(i) builds the i-th request.
func (c *loadClient) run(ctx context.Context, clients, n int, next func(i int) request) loadResult {
	return runSpread(ctx, []*loadClient{c}, clients, n, next)
}

// runSpread is run over several servers, as a load balancer spreads
// requests: request i goes to servers[i % len(servers)].
func runSpread(ctx context.Context, servers []*loadClient, clients, n int, next func(i int) request) loadResult {
	var (
		issued atomic.Int64
		errs   atomic.Int64
		mu     sync.Mutex
		lat    = make([]time.Duration, 0, n)
		wg     sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, n/clients+1)
			for ctx.Err() == nil {
				i := int(issued.Add(1)) - 1
				if i >= n {
					break
				}
				r := next(i)
				t0 := time.Now()
				status, err := servers[i%len(servers)].status(ctx, r)
				local = append(local, time.Since(t0))
				if err != nil || status != r.want {
					errs.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	return summarise(lat, int(errs.Load()), elapsed)
}

// paced sends n requests open-loop at rate per second: request i leaves at
// start + i/rate whether or not earlier ones have answered, so a slow
// answer delays no later request and every latency is counted from when
// its request was due (no coordinated omission). This is how latency is
// measured beside a closed-loop run's throughput: at a rate the server
// sustains, the figure is the service time, not the queue that any closed
// loop of clients builds at saturation.
func (c *loadClient) paced(ctx context.Context, rate float64, n int, next func(i int) request) loadResult {
	interval := time.Duration(float64(time.Second) / rate)
	var (
		errs atomic.Int64
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, n)
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 256) // bounds the goroutines should the server stall
	)
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := next(i)
			status, err := c.status(ctx, r)
			d := time.Since(due)
			if err != nil || status != r.want {
				errs.Add(1)
			} else if r.answered != nil {
				r.answered(status, due.Add(d))
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return summarise(lat, int(errs.Load()), time.Since(start))
}

func summarise(lat []time.Duration, errs int, elapsed time.Duration) loadResult {
	slices.Sort(lat)
	r := loadResult{Requests: len(lat), Errors: errs, Elapsed: elapsed}
	if elapsed > 0 {
		r.PerSec = float64(len(lat)) / elapsed.Seconds()
	}
	r.P50, r.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return r
}

// percentile returns the p-quantile of sorted values (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d req, %d errors, %.0f/s, p50 %s, p99 %s", r.Requests, r.Errors, r.PerSec, r.P50, r.P99)
}

func bytesReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"
)

// Scenario 12: retention keeping up. A steady trigger rate runs against a
// server whose every retention is one minute, and the database's size is
// sampled: once the first records have expired and been swept twice, the
// size must stay flat (the largest sample at most 1.2 times the smallest),
// since the sweep removes what the trigger rate adds and the space it frees
// is written again.

// retentionRate is scenario 12's trigger rate, per second.
const retentionRate = 50

// retentionKeep is every retention of scenario 12's server.
const retentionKeep = time.Minute

// retentionWarmUp is how long scenario 12 runs before its window: the
// first records expire after retentionKeep and the sweep, a minute apart
// at that retention, has removed them twice, so the database holds what
// it holds at steady state.
const retentionWarmUp = retentionKeep + 2*time.Minute

// retention runs scenario 12 on a fresh database of the store measured.
func (b *bench) retention(ctx context.Context) error {
	db, err := b.database(ctx, "retention")
	if err != nil {
		return err
	}
	keep := retentionKeep.String()
	srv, err := startPinned(ctx, b.pin.server, b.bin, db, "HERALD_ACTIVITY_RETENTION="+keep,
		"HERALD_IN_APP_RETENTION="+keep, "HERALD_MESSAGE_RETENTION="+keep)
	if err != nil {
		return err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(benchWorkflow)}); err != nil || status != 201 {
		return fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	size, closeSize, err := b.sizer(ctx, db)
	if err != nil {
		return err
	}
	defer closeSize()
	total := retentionWarmUp + b.sz.retentionWindow
	b.logf("scenario 12: %d triggers/s for %s, every retention %s, the database's size sampled", retentionRate, total, keep)
	n := int(total.Seconds() * retentionRate)
	sampled := make(chan []sizeSample, 1)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go func() { sampled <- sampleSizes(sampleCtx, size, 10*time.Second) }()
	sent := c.paced(ctx, retentionRate, n, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d}}`, i%100, i)}
	})
	stopSampling()
	samples := <-sampled
	if ctx.Err() != nil {
		return ctx.Err()
	}
	b.retentionRows(sent, samples)
	return nil
}

// sizeSample is the database's size at a moment of scenario 12.
type sizeSample struct {
	at    time.Duration // since the triggers began
	bytes int64
}

// sampleSizes reads the size every interval until ctx is done.
func sampleSizes(ctx context.Context, size func(context.Context) (int64, error), interval time.Duration) []sizeSample {
	var samples []sizeSample
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if n, err := size(ctx); err == nil {
			samples = append(samples, sizeSample{at: time.Since(start), bytes: n})
		}
		select {
		case <-ctx.Done():
			return samples
		case <-tick.C:
		}
	}
}

// retentionRows reports scenario 12: the size when the window opens and
// when it closes, its smallest and largest sample in the window, judged,
// and every sample, minute by minute.
func (b *bench) retentionRows(sent loadResult, samples []sizeSample) {
	const scenario = "12 retention"
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("triggers accepted/s (%d sent, %d errors)", sent.Requests, sent.Errors),
		Value: sent.PerSec, Unit: "triggers/s", Target: "reported"})
	var window []sizeSample
	var minutes []string
	for _, s := range samples {
		if s.at >= retentionWarmUp {
			window = append(window, s)
		}
		if s.at%time.Minute < 10*time.Second {
			minutes = append(minutes, fmt.Sprintf("%.1f", mb(s.bytes)))
		}
	}
	b.rep.add(row{Scenario: scenario, Metric: "database size each minute from the start (MB): " + strings.Join(minutes, ", "), Target: "reported"})
	if len(window) == 0 {
		b.rep.add(row{Scenario: scenario, Metric: "error: no sample after the warm-up", Target: "reported"})
		return
	}
	low, high := window[0].bytes, window[0].bytes
	for _, s := range window {
		low, high = min(low, s.bytes), max(high, s.bytes)
	}
	span := fmt.Sprintf("%s to %s", window[0].at.Round(time.Second), window[len(window)-1].at.Round(time.Second))
	b.rep.add(row{Scenario: scenario, Metric: "database size when the window opens, " + window[0].at.Round(time.Second).String(),
		Value: mb(window[0].bytes), Unit: "MB", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: "database size when the window closes, " + window[len(window)-1].at.Round(time.Second).String(),
		Value: mb(window[len(window)-1].bytes), Unit: "MB", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("largest size over smallest, %s (%.1f and %.1f MB)", span, mb(high), mb(low)),
		Value: float64(high) / float64(low), Unit: "x", Target: "<= 1.2x", Pass: b.result(float64(high) <= 1.2*float64(low))})
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// sizer answers a function that reads the size of the database db on the
// store measured: the file and its WAL on SQLite, pg_database_size on
// PostgreSQL; and a function that releases what it holds.
func (b *bench) sizer(ctx context.Context, db string) (func(context.Context) (int64, error), func(), error) {
	if b.store != storePostgres {
		return func(context.Context) (int64, error) {
			var total int64
			for _, path := range []string{db, db + "-wal"} {
				if info, err := os.Stat(path); err == nil {
					total += info.Size()
				}
			}
			return total, nil
		}, func() {}, nil
	}
	conn, err := sql.Open("pgx", db)
	if err != nil {
		return nil, nil, err
	}
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return func(ctx context.Context) (n int64, err error) {
		err = conn.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
		return n, err
	}, func() { conn.Close() }, nil
}

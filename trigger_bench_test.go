package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// benchApp is Herald in-process on a file database, as bench/ runs it,
// with the one-step in-app workflow "bench-inbox" of scenario 1.
type benchApp struct {
	db   *sqldb.DB
	post func(path string, body []byte) int // answers the status
	get  func(path string) int              // answers the status
}

func startBenchApp(b *testing.B) *benchApp {
	serverGC(b)
	ctx, cancel := context.WithCancel(context.Background())
	dir := b.TempDir()
	db, err := sqldb.Open(ctx, filepath.Join(dir, "trigger.db"))
	if err != nil {
		b.Fatal(err)
	}
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		b.Fatal(err)
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: readBenchKey}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	secret := []byte("trigger-bench-secret-0123456789abcdef0")
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db)
	var stoppers []func(context.Context)
	err = start(ctx, mux, deps{db: db, logger: logger, secret: secret, now: time.Now, environments: envs, stoppers: &stoppers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		for _, stop := range stoppers {
			stop(context.Background())
		}
		db.Close()
	})
	h := platform.NewHandler(logger, db, mux, platform.ServerConfig{Secret: secret,
		Limits: platform.RateLimits{Write: -1}}) // measured past the per-key write limit
	do := func(method, path string, body []byte) int {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "ApiKey "+readBenchKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	app := &benchApp{db: db,
		post: func(path string, body []byte) int { return do("POST", path, body) },
		get:  func(path string) int { return do("GET", path, nil) },
	}
	wf := `{"name":"Bench inbox","workflowId":"bench-inbox","active":true,"steps":[{"name":"Inbox","stepId":"inbox","type":"in_app",
		"controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}}]}`
	if code := app.post("/v2/workflows", []byte(wf)); code != http.StatusCreated {
		b.Fatalf("create workflow: %d", code)
	}
	return app
}

// addSubscribers creates subscribers r0 to r(n-1).
func (app *benchApp) addSubscribers(b *testing.B, n int) {
	for i := range n {
		if code := app.post("/v1/subscribers", fmt.Appendf(nil, `{"subscriberId":"r%d","firstName":"R%d"}`, i, i)); code != http.StatusCreated {
			b.Fatalf("create subscriber: %d", code)
		}
	}
}

// count answers a count(*) query.
func (app *benchApp) count(b *testing.B, query string) int64 {
	var n int64
	app.scan(b, query, &n)
	return n
}

// scan reads the one row query answers into dest.
func (app *benchApp) scan(b *testing.B, query string, dest ...any) {
	if err := app.db.QueryRowContext(context.Background(), query).Scan(dest...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTrigger measures scenario 1 of bench/ in-process: triggers of a
// one-step in-app workflow for 1,000 known subscribers, from as many
// goroutines as bench/ has clients, on a file database, so a CPU profile
// shows what one trigger costs without the HTTP client beside it:
//
//	go test -run '^$' -bench Trigger -cpuprofile cpu.out .
func BenchmarkTrigger(b *testing.B) {
	benchTrigger(b, func(i int64) []byte {
		return fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d}}`, i%benchRecipients, i)
	})
}

// BenchmarkTriggerContext is BenchmarkTrigger with a context of one key,
// a tenant of 100, as a multi-tenant product sends every trigger; its
// notification gets an entry in notification_contexts, which lists a
// tenant's notifications (GET /v1/notifications?contextKeys=).
func BenchmarkTriggerContext(b *testing.B) {
	benchTrigger(b, func(i int64) []byte {
		return fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d},"context":{"tenant":"t%d"}}`, i%benchRecipients, i, i%100)
	})
}

// BenchmarkTriggerObject is BenchmarkTrigger with each recipient named by
// a subscriber object, as clients that keep their users' details in step
// send it: the same fields every time, so every upsert changes nothing.
func BenchmarkTriggerObject(b *testing.B) {
	benchTrigger(b, func(i int64) []byte {
		r := i % benchRecipients
		return fmt.Appendf(nil, `{"name":"bench-inbox","to":{"subscriberId":"r%d","firstName":"R%d"},"payload":{"n":%d}}`, r, r, i)
	})
}

// BenchmarkTriggerNewcomers is BenchmarkTrigger with every 20th trigger
// addressed to a subscriber not seen before, which the trigger creates, as
// a service that keeps signing up users sees (and as scenario 2 of bench/
// sends its probes).
func BenchmarkTriggerNewcomers(b *testing.B) {
	benchTrigger(b, func(i int64) []byte {
		if i%20 == 0 {
			return fmt.Appendf(nil, `{"name":"bench-inbox","to":"new%d","payload":{"n":%d}}`, i, i)
		}
		return fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d}}`, i%benchRecipients, i)
	})
}

// benchRecipients is how many subscribers the trigger benchmarks address.
const benchRecipients = 1000

// benchTrigger runs a trigger benchmark: request(i) is the body of the
// i-th trigger, the first numbered 1.
func benchTrigger(b *testing.B, request func(i int64) []byte) {
	app := startBenchApp(b)
	app.addSubscribers(b, benchRecipients)
	var seq atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 cores, as bench/ runs
	cpu0, written0 := cpuTime(), writtenBytes()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			if code := app.post("/v1/events/trigger", request(i)); code != http.StatusCreated {
				b.Errorf("trigger: %d", code)
				return
			}
		}
	})
	b.StopTimer()
	// The writer is the bottleneck in-process, so ns/op hides work saved
	// elsewhere; CPU time per trigger shows it.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	// Bytes written to files (the WAL, and the database by checkpoints)
	// depend on the rows and pages a trigger touches, not on how busy the
	// machine is, so they show a change to the rows where CPU time is noise.
	if w := writtenBytes(); w > 0 {
		b.ReportMetric(float64(w-written0)/1024/float64(b.N), "written-KB/op")
	}
	// The first step is in-app, so each trigger stores its message before
	// it answers: a count short of the triggers is a lost delivery.
	if n := app.count(b, `SELECT count(*) FROM messages WHERE channel = 'in_app'`); n != seq.Load() {
		b.Fatalf("%d in-app messages after %d triggers", n, seq.Load())
	}
}

// BenchmarkTriggerMulticast measures one trigger to 100 subscribers (the
// most `to` may name), one request at a time, with the recipients named
// four ways: by known subscriberIds, the same 100 each time; by known
// subscriberIds, another 100 each time out of twice as many subscribers as
// the documents' cache keeps, so that they are read from the database, as
// a first trigger after a start or one to a large audience reads them; as
// subscriber objects seen for the first time (the trigger creates them);
// and as the same objects again (every upsert changes nothing).
func BenchmarkTriggerMulticast(b *testing.B) {
	const n, many = 100, 20_000
	to := func(object func(r int) string) []byte {
		parts := make([]string, n)
		for r := range parts {
			parts[r] = object(r)
		}
		return []byte("[" + strings.Join(parts, ",") + "]")
	}
	cases := []struct {
		name  string
		known int // subscribers created before the triggers
		to    func(i int) []byte
	}{
		{"ids", n, func(int) []byte { return to(func(r int) string { return fmt.Sprintf(`"r%d"`, r) }) }},
		{"ids_uncached", many, func(i int) []byte {
			return to(func(r int) string { return fmt.Sprintf(`"r%d"`, (i*n+r)%many) })
		}},
		{"new", n, func(i int) []byte {
			return to(func(r int) string {
				return fmt.Sprintf(`{"subscriberId":"m%d-%d","firstName":"M%d","email":"m%d-%d@example.com"}`, i, r, r, i, r)
			})
		}},
		{"same", n, func(int) []byte {
			return to(func(r int) string { return fmt.Sprintf(`{"subscriberId":"r%d","firstName":"R%d"}`, r, r) })
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			app := startBenchApp(b)
			app.addSubscribers(b, c.known)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				body := fmt.Appendf(nil, `{"name":"bench-inbox","to":%s,"payload":{"n":%d}}`, c.to(i), i)
				if code := app.post("/v1/events/trigger", body); code != http.StatusCreated {
					b.Fatalf("trigger: %d", code)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			if got := app.count(b, `SELECT count(*) FROM messages`); got != int64(b.N*n) {
				b.Fatalf("%d messages after %d triggers to %d subscribers", got, b.N, n)
			}
		})
	}
}

// BenchmarkBroadcast measures a broadcast's fan-out: the in-app workflow to
// every one of 20,000 subscribers, twice the subscriber documents' cache,
// so that the broadcast reads them from the database as one to a large
// audience does. It reports subscribers written per second; their in-app
// steps are left to the worker.
func BenchmarkBroadcast(b *testing.B) {
	app := startBenchApp(b)
	subscribers := benchEnvInt("HERALD_BENCH_BROADCAST_SUBSCRIBERS", 20_000)
	app.addSubscribers(b, subscribers)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Appendf(nil, `{"name":"bench-inbox","payload":{"n":%d},"transactionId":"b%d"}`, i, i)
		if code := app.post("/v1/events/trigger/broadcast", body); code != http.StatusOK {
			b.Fatalf("broadcast: %d", code)
		}
	}
	b.StopTimer()
	app.reportFanOut(b, subscribers, cpu0)
}

// reportFanOut reports b.N fan-outs to subscribers each, since cpu0, and
// checks that each wrote a notification per subscriber.
func (app *benchApp) reportFanOut(b *testing.B, subscribers int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N*subscribers)/b.Elapsed().Seconds(), "subscribers/s")
	// The process's CPU, including the worker delivering in-app steps
	// meanwhile: the fan-out's own share is less.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*subscribers), "cpu-us/subscriber")
	if n := app.count(b, `SELECT count(*) FROM notifications`); n != int64(b.N*subscribers) {
		b.Fatalf("%d notifications after %d fan-outs to %d subscribers", n, b.N, subscribers)
	}
}

// serverGC runs b under the collector settings `herald serve` sets
// (tuneGC). At Go's default the collector runs about three times
// as often, and an in-process profile would overstate its share (set
// GOGC=100 to compare).
func serverGC(b *testing.B) {
	percent := debug.SetGCPercent(-1) // reads the setting, restored at once
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	tuneGC(os.Getenv)
	b.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// writtenBytes is what this process has passed to write calls so far
// (wchar in /proc/self/io), or 0 where that file does not exist.
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

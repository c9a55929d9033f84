package activity_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herald-notify/herald/app/apptest"
)

// BenchmarkTrigger measures scenario 1 of bench/ in-process: triggers of a
// one-step in-app workflow for 1,000 known subscribers, from as many
// goroutines as bench/ has clients, on a file database, so a CPU profile
// shows what one trigger costs without the HTTP client beside it:
//
//	go test -run '^$' -bench Trigger -cpuprofile cpu.out ./activity
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
	bench := apptest.StartBench(b)
	bench.AddSubscribers(b, benchRecipients)
	var seq atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 cores, as bench/ runs
	cpu0, written0, wire0 := cpuTime(), writtenBytes(), bench.DB.WireStats()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			if code := bench.Post("/v1/events/trigger", request(i)); code != http.StatusCreated {
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
	// On PostgreSQL, the writer's statements and the round trips it waited
	// for, per trigger, the worker's included.
	if wire := bench.DB.WireStats(); wire.Statements > 0 {
		b.ReportMetric(float64(wire.Statements-wire0.Statements)/float64(b.N), "stmts/op")
		b.ReportMetric(float64(wire.RoundTrips-wire0.RoundTrips)/float64(b.N), "roundtrips/op")
	}
	// The first step is in-app, so each trigger stores its message before
	// it answers: a count short of the triggers is a lost delivery.
	if n := bench.Count(b, `SELECT count(*) FROM messages WHERE channel = 'in_app'`); n != seq.Load() {
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
			bench := apptest.StartBench(b)
			bench.AddSubscribers(b, c.known)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				body := fmt.Appendf(nil, `{"name":"bench-inbox","to":%s,"payload":{"n":%d}}`, c.to(i), i)
				if code := bench.Post("/v1/events/trigger", body); code != http.StatusCreated {
					b.Fatalf("trigger: %d", code)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			if got := bench.Count(b, `SELECT count(*) FROM messages`); got != int64(b.N*n) {
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
	bench := apptest.StartBench(b)
	subscribers := apptest.BenchSize("HERALD_BENCH_BROADCAST_SUBSCRIBERS", 20_000)
	bench.AddSubscribers(b, subscribers)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Appendf(nil, `{"name":"bench-inbox","payload":{"n":%d},"transactionId":"b%d"}`, i, i)
		if code := bench.Post("/v1/events/trigger/broadcast", body); code != http.StatusOK {
			b.Fatalf("broadcast: %d", code)
		}
	}
	b.StopTimer()
	reportFanOut(b, bench, subscribers, cpu0)
}

// reportFanOut reports b.N fan-outs to subscribers each, since cpu0, and
// checks that each wrote a notification per subscriber.
func reportFanOut(b *testing.B, bench *apptest.Bench, subscribers int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N*subscribers)/b.Elapsed().Seconds(), "subscribers/s")
	// The process's CPU, including the worker delivering in-app steps
	// meanwhile: the fan-out's own share is less.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*subscribers), "cpu-us/subscriber")
	if n := bench.Count(b, `SELECT count(*) FROM notifications`); n != int64(b.N*subscribers) {
		b.Fatalf("%d notifications after %d fan-outs to %d subscribers", n, b.N, subscribers)
	}
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

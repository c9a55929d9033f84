package activity_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-notify/herald/app/apptest"
)

// BenchmarkTopicFanOut is BenchmarkBroadcast's fan-out reached through a
// topic holding every subscriber: bench/ scenario 7 in-process, to compare
// the two under a profiler.
func BenchmarkTopicFanOut(b *testing.B) {
	bench := apptest.StartBench(b)
	subscribers := apptest.BenchSize("HERALD_BENCH_BROADCAST_SUBSCRIBERS", 20_000)
	bench.AddSubscribers(b, subscribers)
	for i := 0; i < subscribers; i += 100 {
		ids := make([]string, 0, 100)
		for k := i; k < min(i+100, subscribers); k++ {
			ids = append(ids, fmt.Sprintf(`"r%d"`, k))
		}
		if code := bench.Post("/v1/topics/everyone/subscribers", []byte(`{"subscribers":[`+strings.Join(ids, ",")+`]}`)); code != http.StatusOK {
			b.Fatalf("fill topic: %d", code)
		}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Appendf(nil, `{"name":"bench-inbox","to":{"type":"Topic","topicKey":"everyone"},"payload":{"n":%d},"transactionId":"t%d"}`, i, i)
		if code := bench.Post("/v1/events/trigger", body); code != http.StatusCreated {
			b.Fatalf("trigger: %d", code)
		}
	}
	b.StopTimer()
	reportFanOut(b, bench, subscribers, cpu0)
}

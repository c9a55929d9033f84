package platform

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-notify/herald/sqldb"
)

// Metrics is Herald's Prometheus registry: the HTTP edge counts its
// requests there, each domain registers its own instruments on it
// (MustRegister), and the Go runtime, the process and the database's pools
// report there too. A nil *Metrics ignores every report and registration,
// so tests and tools need none.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.HistogramVec
}

// NewMetrics returns a registry with the HTTP edge's instruments, the Go
// runtime's and the process's, and db's two pools.
func NewMetrics(db *sqldb.DB) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_http_request_duration_seconds",
			Help: "HTTP requests by route pattern, method and status, and how long they took.",
		}, []string{"route", "method", "status"}),
	}
	m.reg.MustRegister(m.requests,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if db != nil {
		m.reg.MustRegister(db.Collectors()...)
	}
	return m
}

// MustRegister adds a part's instruments to the registry. It panics when
// one is invalid or its name is taken: both are mistakes in the code.
func (m *Metrics) MustRegister(cs ...prometheus.Collector) {
	if m != nil {
		m.reg.MustRegister(cs...)
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	// A collector that fails (the queue's read, say) drops its own series
	// from the scrape, not every other one.
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveRequest counts one HTTP request. pattern is the ServeMux pattern
// that served it ("" when none matched, which is reported as "unmatched" so
// that probing unknown paths cannot grow the label set).
func (m *Metrics) ObserveRequest(pattern, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	route := "unmatched"
	if pattern != "" {
		route = pattern
		if _, path, ok := strings.Cut(pattern, " "); ok {
			route = path
		}
	} else if !knownMethod(method) {
		method = "other"
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Observe(d.Seconds())
}

func knownMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// Gauge registers a gauge read from fn at each scrape, for a part that
// knows a level rather than counting events, such as the inbox's live
// sockets. It fails when name is taken or invalid.
func (m *Metrics) Gauge(name, help string, fn func() float64) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

package platform

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is Herald's Prometheus registry (docs/operations.md, "Metrics"):
// what the HTTP stack, the queue and the providers did, and the database
// pools. Domains report to it through interfaces they declare, with plain
// strings for labels; a nil *Metrics ignores every report, so tests and
// tools need none.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.HistogramVec
	triggers *prometheus.CounterVec
	jobs     *prometheus.CounterVec
	sends    *prometheus.HistogramVec
}

// NewMetrics returns a registry with Herald's instruments, the Go runtime's
// and the process's, and db's two pools.
func NewMetrics(db *DB) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_http_request_duration_seconds",
			Help: "HTTP requests by route pattern, method and status, and how long they took.",
		}, []string{"route", "method", "status"}),
		triggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_triggers_total",
			Help: "Trigger events answered, by the status of the answer (processed, trigger_not_active, …).",
		}, []string{"status"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_jobs_finished_total",
			Help: "Jobs that reached a final status, by worker lane and status.",
		}, []string{"lane", "status"}),
		sends: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_sends_duration_seconds",
			Help: "Sends through a provider, by provider and outcome (sent, partial, failed), and how long they took.",
		}, []string{"provider", "outcome"}),
	}
	m.reg.MustRegister(m.requests, m.triggers, m.jobs, m.sends,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if db != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(db.W, "writer"), collectors.NewDBStatsCollector(db.R, "reader"))
	}
	return m
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

// TriggerAnswered counts one trigger event answered with status.
func (m *Metrics) TriggerAnswered(status string) {
	if m != nil {
		m.triggers.WithLabelValues(status).Inc()
	}
}

// JobFinished counts one job that reached final status in lane.
func (m *Metrics) JobFinished(lane, status string) {
	if m != nil {
		m.jobs.WithLabelValues(lane, status).Inc()
	}
}

// SendDone counts one send through provider.
func (m *Metrics) SendDone(provider, outcome string, d time.Duration) {
	if m != nil {
		m.sends.WithLabelValues(provider, outcome).Observe(d.Seconds())
	}
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

// LaneQueue is one worker lane's backlog at a moment.
type LaneQueue struct {
	Lane      string
	Due       int           // jobs due now and not claimed
	OldestDue time.Duration // how long the longest-waiting of them has been due; 0 when none
}

// Queue registers read, which reports the queue's backlog, to be called at
// each scrape (with a bounded wait) rather than kept up to date on every
// write: the queue's own writes stay as they are.
func (m *Metrics) Queue(read func(ctx context.Context) ([]LaneQueue, error)) {
	if m != nil {
		m.reg.MustRegister(&queueCollector{read: read})
	}
}

var (
	queueDueDesc = prometheus.NewDesc("herald_queue_due_jobs",
		"Jobs due to run and not yet claimed, by worker lane.", []string{"lane"}, nil)
	queueAgeDesc = prometheus.NewDesc("herald_queue_oldest_due_seconds",
		"How long the job due longest has waited, by worker lane; 0 when none is due.", []string{"lane"}, nil)
)

type queueCollector struct {
	read func(ctx context.Context) ([]LaneQueue, error)
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDueDesc
	ch <- queueAgeDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lanes, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDueDesc, err)
		return
	}
	for _, l := range lanes {
		ch <- prometheus.MustNewConstMetric(queueDueDesc, prometheus.GaugeValue, float64(l.Due), l.Lane)
		ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, l.OldestDue.Seconds(), l.Lane)
	}
}

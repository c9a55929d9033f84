package webhooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// metrics counts the events raised and the attempts' outcomes.
type metrics struct {
	events     *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	logger     *slog.Logger
}

// Observe registers the webhook metrics on m (docs/webhooks.md,
// "Metrics"): events raised by type; deliveries settled by event type,
// endpoint and outcome; the queue's due deliveries and how long the
// oldest has waited, read at each scrape. It logs each endpoint it
// disables to logger. A nil m counts nothing; call it before serving.
func (s *Store) Observe(m *platform.Metrics, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s.metrics = &metrics{logger: logger}
	if m == nil {
		return s
	}
	s.metrics.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_webhook_events_total",
		Help: "Webhook events raised with at least one endpoint to deliver to, by event type.",
	}, []string{"type"})
	s.metrics.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_webhook_attempts_total",
		Help: "Webhook delivery attempts, by event type, endpoint and the delivery's status after it (succeeded, pending: to be retried, failed).",
	}, []string{"type", "endpoint", "outcome"})
	m.MustRegister(s.metrics.events, s.metrics.deliveries, &queueCollector{read: s.queueStats})
	return s
}

func (m *metrics) raised(t string) {
	if m != nil && m.events != nil {
		m.events.WithLabelValues(t).Inc()
	}
}

func (m *metrics) delivered(d *delivery, status string) {
	if m != nil && m.deliveries != nil {
		m.deliveries.WithLabelValues(d.EventType, d.EndpointID, status).Inc()
	}
}

// disabled logs an endpoint a settle disabled: its owner must act.
func (m *metrics) disabled(g disabledEndpoint) {
	if m != nil {
		m.logger.Warn("webhook endpoint disabled", "endpoint_id", g.id, "environment_id", g.env, "reason", g.reason)
	}
}

// queueStats reads how many deliveries are due and unclaimed, and how long
// the oldest of them has been due.
func (s *Store) queueStats(ctx context.Context) (int, time.Duration, error) {
	now := s.now()
	ts := sqldb.FormatTime(now)
	var n int
	var oldest *string
	err := s.db.QueryRowContext(ctx, `SELECT count(*), min(run_at) FROM webhook_deliveries
		WHERE run_at IS NOT NULL AND run_at <= ? AND lease_until <= ?`, ts, ts).Scan(&n, &oldest)
	if err != nil || oldest == nil {
		return n, 0, err
	}
	if t, err := sqldb.ParseTime(*oldest); err == nil && now.After(t) {
		return n, now.Sub(t), nil
	}
	return n, 0, nil
}

var (
	queueDueDesc = prometheus.NewDesc("herald_webhook_due_deliveries",
		"Webhook deliveries due and not yet claimed.", nil, nil)
	queueAgeDesc = prometheus.NewDesc("herald_webhook_oldest_due_seconds",
		"How long the webhook delivery due longest has waited; 0 when none is due.", nil, nil)
)

// queueCollector reports the delivery queue at each scrape.
type queueCollector struct {
	read func(ctx context.Context) (int, time.Duration, error)
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDueDesc
	ch <- queueAgeDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, age, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDueDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueDueDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, age.Seconds())
}

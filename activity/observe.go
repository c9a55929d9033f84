package activity

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// metrics counts what triggers and the worker do.
type metrics struct {
	triggers *prometheus.CounterVec
	jobs     *prometheus.CounterVec
}

// Observe registers the store's metrics on m: trigger events answered, jobs
// finished, and the queue's backlog, read at each scrape rather than kept
// up to date on every write. A nil m counts nothing. Call it before the
// store serves.
func (s *Store) Observe(m *platform.Metrics) *Store {
	if m == nil {
		return s
	}
	s.metrics = &metrics{
		triggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_triggers_total",
			Help: "Trigger events answered, by the status of the answer (processed, trigger_not_active, …).",
		}, []string{"status"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_jobs_finished_total",
			Help: "Jobs that reached a final status, by worker lane and status.",
		}, []string{"lane", "status"}),
	}
	m.MustRegister(s.metrics.triggers, s.metrics.jobs, &queueCollector{read: s.queueStats})
	return s
}

// laneNames are the lanes as metrics label them.
var laneNames = [laneCount]string{laneLocal: "local", laneEmail: "email", laneSMS: "sms", laneChat: "chat", lanePush: "push"}

// noteTrigger counts an answered trigger event.
func (s *Store) noteTrigger(res *triggerResult) {
	if s.metrics != nil && res != nil {
		s.metrics.triggers.WithLabelValues(res.Status).Inc()
	}
}

// noteSettled counts a job the worker or a trigger ran to a final status.
// It counts when the result is decided, before it is committed: a result
// whose commit fails (a lost lease, mostly) runs again and counts again.
func (s *Store) noteSettled(j *job, st settlement) {
	if s.metrics != nil && st.runAt.IsZero() && st.status != statusQueued {
		s.metrics.jobs.WithLabelValues(laneNames[laneOf(j.Type)], st.status).Inc()
	}
}

// laneQueue is one worker lane's backlog at a moment.
type laneQueue struct {
	lane      string
	due       int           // jobs due now and not claimed
	oldestDue time.Duration // how long the longest-waiting of them has been due; 0 when none
}

// queueStats reports each lane's due backlog: jobs due and not claimed, and
// how long the one due longest has waited. It reads the claim index's range
// of due jobs, which is as long as the backlog.
func (s *Store) queueStats(ctx context.Context) ([]laneQueue, error) {
	now := s.now()
	ts := sqldb.FormatTime(now)
	rows, err := s.db.QueryContext(ctx, `
		SELECT `+laneSQL+`, count(*), min(run_at) FROM jobs
		WHERE run_at IS NOT NULL AND run_at <= ? AND lease_until <= ?
		GROUP BY 1`, ts, ts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]laneQueue, laneCount)
	for i := range out {
		out[i].lane = laneNames[i]
	}
	for rows.Next() {
		var lane, n int
		var oldest string
		if err := rows.Scan(&lane, &n, &oldest); err != nil {
			return nil, err
		}
		if lane < 0 || lane >= laneCount {
			continue
		}
		out[lane].due = n
		if t, err := time.Parse(time.RFC3339Nano, oldest); err == nil && now.After(t) {
			out[lane].oldestDue = now.Sub(t)
		}
	}
	return out, rows.Err()
}

var (
	queueDueDesc = prometheus.NewDesc("herald_queue_due_jobs",
		"Jobs due to run and not yet claimed, by worker lane.", []string{"lane"}, nil)
	queueAgeDesc = prometheus.NewDesc("herald_queue_oldest_due_seconds",
		"How long the job due longest has waited, by worker lane; 0 when none is due.", []string{"lane"}, nil)
)

// queueCollector reports the queue's backlog at each scrape, with a bounded
// wait for the read.
type queueCollector struct {
	read func(ctx context.Context) ([]laneQueue, error)
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
		ch <- prometheus.MustNewConstMetric(queueDueDesc, prometheus.GaugeValue, float64(l.due), l.lane)
		ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, l.oldestDue.Seconds(), l.lane)
	}
}

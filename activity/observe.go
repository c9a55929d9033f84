package activity

import (
	"context"
	"time"

	"github.com/herald-notify/herald/platform"
)

// Observer learns what triggers and the queue do, for metrics
// (docs/operations.md, "Metrics"). *platform.Metrics is one.
type Observer interface {
	TriggerAnswered(status string)
	JobFinished(lane, status string)
}

// Observe makes the store report to o. Call it before the store serves.
func (s *Store) Observe(o Observer) *Store {
	s.observer = o
	return s
}

// laneNames are the lanes as metrics label them.
var laneNames = [laneCount]string{laneLocal: "local", laneEmail: "email", laneSMS: "sms", laneChat: "chat", lanePush: "push"}

// noteTrigger reports an answered trigger event.
func (s *Store) noteTrigger(res *triggerResult) {
	if s.observer != nil && res != nil {
		s.observer.TriggerAnswered(res.Status)
	}
}

// noteSettled reports a job the worker or a trigger ran to a final status.
// It counts when the result is decided, before it is committed: a result
// whose commit fails (a lost lease, mostly) runs again and counts again.
func (s *Store) noteSettled(j *job, st settlement) {
	if s.observer != nil && st.runAt.IsZero() && st.status != statusQueued {
		s.observer.JobFinished(laneNames[laneOf(j.Type)], st.status)
	}
}

// QueueStats reports each lane's due backlog: jobs due and not claimed, and
// how long the one due longest has waited. It reads the claim index's range
// of due jobs, which is as long as the backlog.
func (s *Store) QueueStats(ctx context.Context) ([]platform.LaneQueue, error) {
	now := s.now()
	ts := platform.FormatTime(now)
	rows, err := s.db.R.QueryContext(ctx, `
		SELECT `+laneSQL+`, count(*), min(run_at) FROM jobs
		WHERE run_at IS NOT NULL AND run_at <= ? AND lease_until <= ?
		GROUP BY 1`, ts, ts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]platform.LaneQueue, laneCount)
	for i := range out {
		out[i].Lane = laneNames[i]
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
		out[lane].Due = n
		if t, err := time.Parse(time.RFC3339Nano, oldest); err == nil && now.After(t) {
			out[lane].OldestDue = now.Sub(t)
		}
	}
	return out, rows.Err()
}

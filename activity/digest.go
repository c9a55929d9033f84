package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// Stages of a job that runs more than once.
const (
	stageDelaying  = "delaying"  // a delay job waiting for its time
	stageDigesting = "digesting" // a digest master collecting events
)

// digestEvent is one event a digest collected, as following steps see it in
// steps.<stepId>.events.
type digestEvent struct {
	ID      string          `json:"id"`
	Time    string          `json:"time"`
	Payload json.RawMessage `json:"payload"`
}

// openDigest runs a digest job for the first time, in one transaction so two
// events of one key never both become masters: it merges into the waiting
// master of its key when there is one; otherwise a backoff digest with no
// event inside its backoff window passes its event on at once; otherwise it
// becomes the master and waits until `until`. Other processes sharing the
// database decide their events of the key one at a time with it
// (lockGroup).
func (s *Store) openDigest(j *job, cfg digestConfig, until time.Time, payload json.RawMessage, details []detail, extended ...detail) write {
	return func(ctx context.Context, tx *sql.Tx) error {
		if err := s.lockGroup(ctx, tx, "digest", j); err != nil {
			return err
		}
		var masterID, masterNotification string
		err := tx.QueryRowContext(ctx, `
			SELECT id, notification_id FROM jobs
			WHERE group_key = ? AND group_key <> '' AND type = 'digest' AND status = 'delayed' AND stage = ? AND id <> ?
			ORDER BY created_at, id LIMIT 1`, j.GroupKey, stageDigesting, j.ID).Scan(&masterID, &masterNotification)
		switch {
		case err == nil:
			return s.mergeDigest(ctx, tx, j, masterID, masterNotification, details)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("find digest master: %w", err)
		}
		if w, ok := cfg.backoff(); ok {
			created, err := sqldb.ParseTime(j.CreatedAt)
			if err != nil {
				return err
			}
			since, err := w.before(created)
			if err != nil {
				return err
			}
			var recent int
			err = tx.QueryRowContext(ctx, `
				SELECT count(*) FROM jobs
				WHERE group_key = ? AND group_key <> '' AND type = 'digest' AND id <> ? AND created_at >= ? AND created_at <= ?`,
				j.GroupKey, j.ID, sqldb.FormatTime(since), j.CreatedAt).Scan(&recent)
			if err != nil {
				return fmt.Errorf("count backoff events: %w", err)
			}
			if recent == 0 {
				meta := withEvents(j.Digest, []digestEvent{{ID: j.ID, Time: j.CreatedAt, Payload: payload}})
				return s.settleTx(ctx, tx, j, settlement{status: statusSkipped, digest: meta, then: thenRelease,
					details: append(details, detail{Status: detailSuccess, Detail: "Digest was skipped, first backoff event", Source: sourceInternal})})
			}
		}
		raw, _ := json.Marshal(map[string]string{"digestUntil": sqldb.FormatTime(until)})
		return s.settleTx(ctx, tx, j, settlement{status: statusDelayed, stage: stageDigesting, runAt: until,
			details: append(append(details, detail{Status: detailPending, Detail: "Step digested", Source: sourceInternal, Raw: raw}), extended...)})
	}
}

// mergeDigest marks j merged into the master: the following jobs of j's
// notification are skipped and the notification points at the master's.
func (s *Store) mergeDigest(ctx context.Context, tx *sql.Tx, j *job, masterID, masterNotification string, details []detail) error {
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET merged_digest_id = ? WHERE id = ? AND lease_owner = ?`, masterID, j.ID, j.Lease); err != nil {
		return fmt.Errorf("merge digest: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE notifications SET digested_notification_id = ?, updated_at = ? WHERE id = ?`,
		masterNotification, sqldb.FormatTime(s.now()), j.NotificationID); err != nil {
		return fmt.Errorf("mark notification digested: %w", err)
	}
	raw, _ := json.Marshal(map[string]string{"mergedDigestId": masterID, "digestedNotificationId": masterNotification})
	return s.settleTx(ctx, tx, j, settlement{status: statusMerged, then: thenSkip,
		thenDetail: "Step skipped: its digest was merged with other digest",
		details:    append(details, detail{Status: detailSuccess, Detail: "Digest was merged with other digest", Source: sourceInternal, Raw: raw})})
}

// fireDigest ends a master's window: its events are its own and every merged
// one's, oldest first; they are stored on the job for the following steps.
// It holds the key's lock (lockGroup), so that no event merges into the
// master between its read of the events and its end.
func (s *Store) fireDigest(j *job, payload json.RawMessage) write {
	return func(ctx context.Context, tx *sql.Tx) error {
		if err := s.lockGroup(ctx, tx, "digest", j); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
			SELECT j.id, j.created_at, `+sqldb.ValueColumn("n.payload")+` FROM jobs j JOIN notifications n ON n.id = j.notification_id
			WHERE j.merged_digest_id = ? AND j.status = 'merged'
			ORDER BY j.created_at, j.id`, j.ID)
		if err != nil {
			return fmt.Errorf("collect digest events: %w", err)
		}
		events := []digestEvent{{ID: j.ID, Time: j.CreatedAt, Payload: payload}}
		for rows.Next() {
			var e digestEvent
			var p string
			if err := rows.Scan(&e.ID, &e.Time, &p); err != nil {
				rows.Close()
				return err
			}
			e.Payload = json.RawMessage(p)
			events = append(events, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		raw, _ := json.Marshal(map[string]int{"eventCount": len(events)})
		return s.settleTx(ctx, tx, j, settlement{status: statusCompleted, digest: withEvents(j.Digest, events), then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: "Digest triggered events", Source: sourceInternal, Raw: raw}}})
	}
}

// lockGroup serialises, until tx ends, the read-then-write decisions of
// kind (a digest's master, a throttle's count) on j's group across
// processes sharing the database: there two workers deciding one key at
// once would both find no master, or both count under the limit.
// SQLite's one writer serialises them already; there it does nothing.
func (s *Store) lockGroup(ctx context.Context, tx *sql.Tx, kind string, j *job) error {
	if j.GroupKey == "" {
		return nil // a job without a key is matched with no other
	}
	if err := s.db.LockKey(ctx, tx, kind+"|"+j.EnvironmentID+"|"+j.GroupKey); err != nil {
		return fmt.Errorf("lock %s group: %w", kind, err)
	}
	return nil
}

// withEvents returns the digest metadata with its events set.
func withEvents(meta json.RawMessage, events []digestEvent) json.RawMessage {
	m := map[string]any{}
	json.Unmarshal(meta, &m)
	if m["type"] == nil {
		m["type"] = "regular"
	}
	m["events"] = events
	b, _ := json.Marshal(m)
	return b
}

// throttle lets a throttle job pass while fewer than the threshold of its
// key's throttle jobs passed within the window, and otherwise skips it and
// the steps after it. Count and decision share one transaction, and
// processes sharing the database count a key one at a time (lockGroup).
func (s *Store) throttle(j *job, cfg throttleConfig, details []detail) write {
	now := s.now()
	since, err := cfg.window().before(now)
	if err != nil {
		return s.settled(j, settlement{status: statusFailed, then: thenCancel,
			thenDetail: fmt.Sprintf("Step canceled because step %q failed", j.StepID),
			details:    append(details, detail{Status: detailFailed, Detail: "Invalid throttle configuration: " + err.Error(), Source: sourcePayload})})
	}
	return func(ctx context.Context, tx *sql.Tx) error {
		if err := s.lockGroup(ctx, tx, "throttle", j); err != nil {
			return err
		}
		var passed int
		err := tx.QueryRowContext(ctx, `
			SELECT count(*) FROM jobs
			WHERE group_key = ? AND group_key <> '' AND type = 'throttle' AND status = 'completed' AND `+jobUpdatedColumn("jobs", notificationCreated)+` > ?`,
			j.GroupKey, sqldb.FormatTime(since)).Scan(&passed)
		if err != nil {
			return fmt.Errorf("count throttle: %w", err)
		}
		raw, _ := json.Marshal(map[string]int{"executions": passed, "threshold": cfg.threshold()})
		if passed >= cfg.threshold() {
			return s.settleTx(ctx, tx, j, settlement{status: statusSkipped, then: thenSkip,
				thenDetail: "Step skipped because the throttle limit was reached",
				details:    append(details, detail{Status: detailWarning, Detail: "Step throttled: the limit for this window was reached", Source: sourceInternal, Raw: raw})})
		}
		return s.settleTx(ctx, tx, j, settlement{status: statusCompleted, then: thenRelease,
			details: append(details, detail{Status: detailSuccess, Detail: "Step passed the throttle", Source: sourceInternal, Raw: raw})})
	}
}

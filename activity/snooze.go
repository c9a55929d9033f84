package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// An inbox snooze ends through the job queue, so that it ends even when
// Herald was stopped at the time: a job of type unsnooze, due when the
// snooze ends, on the snoozed message's notification. It sits at position
// -1, out of the notification's step chain: nothing releases it and it
// releases nothing, and the activity views leave it out.

// stepUnsnooze is the type of a job that ends a snooze.
const stepUnsnooze = "unsnooze"

// Unsnoozer brings a snoozed message back; messaging.Store satisfies it
// (WorkerConfig.Unsnoozer).
type Unsnoozer interface {
	EndSnooze(ctx context.Context, environmentID, messageID string, until time.Time) error
}

var _ messaging.SnoozeTimer = (*Store)(nil)

// ScheduleUnsnooze queues the job that ends the message's snooze at
// s.Until, in place of any it had (messaging.SnoozeTimer).
func (s *Store) ScheduleUnsnooze(ctx context.Context, sn messaging.Snooze) (err error) {
	defer platform.Wrap(&err, "schedule unsnooze of %s", sn.MessageID)
	// The end of the snooze rides in the step snapshot's controlVariables,
	// where every job's control values are read from (claimQuery).
	step, err := json.Marshal(map[string]any{"controlVariables": map[string]string{"until": sqldb.FormatTime(sn.Until)}})
	if err != nil {
		return err
	}
	now := sqldb.FormatTime(s.now())
	err = s.db.RetryTx(ctx, func(txn *sql.Tx) error {
		// A job belongs to a notification; an in-app message is kept
		// longer than its notification (docs/retention.md).
		var one int
		err := txn.QueryRowContext(ctx, `SELECT 1 FROM notifications WHERE id = ?`, sn.NotificationID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return messaging.ErrSnoozeExpired
		}
		if err != nil {
			return err
		}
		// Two instances snoozing one message at once would each delete
		// the other's job before either inserts its own: both would stay.
		if err := s.db.LockKey(ctx, txn, "unsnooze|"+sn.EnvironmentID+"|"+sn.MessageID); err != nil {
			return err
		}
		if _, err := txn.ExecContext(ctx, `DELETE FROM jobs WHERE environment_id = ? AND type = ? AND step_id = ? AND lease_owner = ''`,
			sn.EnvironmentID, stepUnsnooze, sn.MessageID); err != nil {
			return err
		}
		_, err = txn.ExecContext(ctx, `INSERT INTO jobs (id, environment_id, notification_id,
			position, type, step_id, step, provider_id, status, run_at, created_at, updated_at)
			VALUES (?, ?, ?, -1, ?, ?, ?, '', 'queued', ?, ?, ?)`,
			sqldb.NewIDAt(s.now()), sn.EnvironmentID, sn.NotificationID, stepUnsnooze, sn.MessageID, string(step),
			sqldb.FormatTime(sn.Until), now, now)
		return err
	})
	if err != nil {
		return err
	}
	s.wake(laneOf(stepUnsnooze))
	return nil
}

// CancelUnsnooze drops the job that would end the message's snooze
// (messaging.SnoozeTimer): it was unsnoozed by hand.
func (s *Store) CancelUnsnooze(ctx context.Context, environmentID, messageID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM jobs WHERE environment_id = ? AND type = ? AND step_id = ? AND lease_owner = ''`,
		environmentID, stepUnsnooze, messageID)
	if err != nil {
		return fmt.Errorf("cancel unsnooze of %s: %w", messageID, err)
	}
	return nil
}

// runUnsnooze runs an unsnooze job: the message comes back, and the job
// is done. A message gone or snoozed again for longer is left as it is.
func (w *Worker) runUnsnooze(ctx context.Context, j *job) (write, error) {
	u := w.cfg.Unsnoozer
	if u == nil {
		return w.store.settled(j, settlement{status: statusCompleted}), nil
	}
	var c struct {
		Until string `json:"until"`
	}
	json.Unmarshal(j.Controls, &c)
	until, err := sqldb.ParseTime(c.Until)
	if err != nil {
		until = w.store.now()
	}
	if err := u.EndSnooze(ctx, j.EnvironmentID, j.StepID, until); err != nil {
		return nil, err
	}
	return w.store.settled(j, settlement{status: statusCompleted}), nil
}

package activity

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's notifications
// (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM notifications WHERE environment_id = ?`, environmentID).Scan(&n)
	return map[string]int64{"notifications": n}, err
}

// PurgeEnvironment deletes the environment's notifications, their jobs,
// execution details and fan-outs, and its deleted subscribers' summaries
// (platform.EnvironmentPurger): the
// notifications with what hangs on them a batch at a time, the rest at
// the end.
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	err := s.db.InBatches(ctx, `SELECT id FROM notifications WHERE environment_id = ? LIMIT ?`, environmentID,
		func(tx *sql.Tx, ids []any) error {
			in := sqldb.Placeholders(len(ids))
			for _, q := range []string{
				`DELETE FROM execution_details WHERE notification_id IN (` + in + `)`,
				`DELETE FROM jobs WHERE notification_id IN (` + in + `)`,
				`DELETE FROM notifications WHERE id IN (` + in + `)`,
			} {
				if _, err := tx.ExecContext(ctx, q, ids...); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		// Details carry no environment: those of jobs left without their
		// notification go by the jobs'.
		if _, err := tx.ExecContext(ctx, `DELETE FROM execution_details WHERE notification_id IN
			(SELECT notification_id FROM jobs WHERE environment_id = ?)`, environmentID); err != nil {
			return err
		}
		return sqldb.DeleteByEnvironment(ctx, tx, environmentID, "jobs", "notification_contexts",
			"notification_topics", "activity_broadcasts", "activity_transactions", "deleted_subscribers", "notifications")
	})
}

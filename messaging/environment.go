package messaging

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's messages
// (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE environment_id = ?`, environmentID).Scan(&n)
	return map[string]int64{"messages": n}, err
}

// PurgeEnvironment deletes the environment's messages and the payloads
// they share, a batch at a time (platform.EnvironmentPurger).
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	return s.db.InBatches(ctx, `SELECT id FROM messages WHERE environment_id = ? LIMIT ?`, environmentID,
		func(tx *sql.Tx, ids []any) error {
			in := sqldb.Placeholders(len(ids))
			if _, err := tx.ExecContext(ctx, `DELETE FROM message_payloads WHERE notification_id IN (
				SELECT notification_id FROM messages WHERE id IN (`+in+`))`, ids...); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id IN (`+in+`)`, ids...); err != nil {
				return err
			}
			return s.allPagesChanged(ctx, tx)
		})
}

package integrations

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's integrations beside the
// in-app one every environment is seeded with (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM integrations
		WHERE environment_id = ? AND deleted = 0 AND provider_id <> 'service'`, environmentID).Scan(&n)
	return map[string]int64{"integrations": n}, err
}

// PurgeEnvironment deletes the environment's integrations and the
// receipts they took (platform.EnvironmentPurger).
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	defer s.changed()
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM receipt_tokens WHERE integration_id IN (
			SELECT id FROM integrations WHERE environment_id = ?)`, environmentID); err != nil {
			return err
		}
		if err := sqldb.DeleteByEnvironment(ctx, tx, environmentID, "integrations"); err != nil {
			return err
		}
		return s.peers.Changed(ctx, tx)
	})
}

package webhooks

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's webhook endpoints
// (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM webhook_endpoints WHERE environment_id = ?`, environmentID).Scan(&n)
	return map[string]int64{"webhook endpoints": n}, err
}

// PurgeEnvironment deletes the environment's webhook endpoints, events
// and deliveries (platform.EnvironmentPurger).
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := sqldb.DeleteByEnvironment(ctx, tx, environmentID, "webhook_deliveries", "webhook_events", "webhook_endpoints"); err != nil {
			return err
		}
		return s.changed(ctx, tx)
	})
}

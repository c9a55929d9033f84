package subscribers

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's subscribers, topics and
// contexts (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	out := map[string]int64{}
	for what, table := range map[string]string{"subscribers": "subscribers", "topics": "topics", "contexts": "contexts"} {
		var n int64
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE environment_id = ?`, environmentID).Scan(&n); err != nil {
			return nil, err
		}
		out[what] = n
	}
	return out, nil
}

// PurgeEnvironment deletes the environment's subscribers (their search
// index goes with them), preferences, topics and contexts
// (platform.EnvironmentPurger).
//
// Every cached subscriber, preference and context is dropped, here and in the
// other processes: a cached subscriber would keep its inbox token working.
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	c := cacheFor(s.db)
	defer c.reset()
	// Subscribers a batch at a time: each takes its search index rows with
	// it, and its open inbox sockets' records.
	err := s.db.InBatches(ctx, `SELECT id FROM subscribers WHERE environment_id = ? LIMIT ?`, environmentID,
		func(tx *sql.Tx, ids []any) error {
			in := sqldb.Placeholders(len(ids))
			if _, err := tx.ExecContext(ctx, `DELETE FROM subscriber_sockets WHERE subscriber_ref IN (`+in+`)`, ids...); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM subscribers WHERE id IN (`+in+`)`, ids...)
			return err
		})
	if err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := sqldb.DeleteByEnvironment(ctx, tx, environmentID, "topic_subscribers", "topics", "subscriber_preferences",
			"contexts", "subscribers"); err != nil {
			return err
		}
		if err := c.written.Changed(ctx, tx); err != nil {
			return err
		}
		if err := c.preferencesWritten.Changed(ctx, tx); err != nil {
			return err
		}
		return c.contextsWritten.Changed(ctx, tx)
	})
}

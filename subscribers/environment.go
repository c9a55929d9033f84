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
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	defer s.changed(environmentID)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return sqldb.DeleteByEnvironment(ctx, tx, environmentID, "topic_subscribers", "topics", "subscriber_preferences",
			"contexts", "subscribers")
	})
}

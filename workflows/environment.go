package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentHoldings counts the environment's workflows and
// translations; its default group and layout are what every environment
// is seeded with (platform.EnvironmentPurger).
func (s *Store) EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error) {
	var workflows, translations int64
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM workflows WHERE environment_id = ? AND deleted = 0),
		(SELECT count(*) FROM translations WHERE environment_id = ?)`, environmentID, environmentID).Scan(&workflows, &translations)
	return map[string]int64{"workflows": workflows, "translations": translations}, err
}

// PurgeEnvironment deletes the environment's workflows, their versions,
// layouts, translations and groups (platform.EnvironmentPurger).
func (s *Store) PurgeEnvironment(ctx context.Context, environmentID string) error {
	defer s.changed()
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := sqldb.DeleteByEnvironment(ctx, tx, environmentID, "workflow_versions", "workflows", "translations",
			"layouts", "notification_groups"); err != nil {
			return err
		}
		return s.peers.Changed(ctx, tx)
	})
}

// EnvironmentTags are the tags the environment's workflows carry, each
// once, in order (platform.EnvironmentTagger).
func (s *Store) EnvironmentTags(ctx context.Context, environmentID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT tags FROM workflows WHERE environment_id = ? AND deleted = 0`, environmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var tags []string
		if err := json.Unmarshal([]byte(raw), &tags); err != nil {
			return nil, fmt.Errorf("workflow tags: %w", err)
		}
		for _, t := range tags {
			seen[t] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

package webhooks

import (
	"context"
	"database/sql"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// Sweep removes, in one transaction, up to limit finished deliveries
// created before before, in creation order from cursor on, then the events
// older than that no delivery is left to send (docs/retention.md). It
// returns where the next batch starts, "" when this one was the last.
func (s *Store) Sweep(ctx context.Context, before time.Time, cursor string, limit int) (next string, removed map[string]int64, err error) {
	cut := sqldb.FormatTime(before)
	removed = map[string]int64{}
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE created_at < ? AND id > ? AND run_at IS NULL ORDER BY created_at, id LIMIT ?)
			RETURNING id`, cut, cursor, limit)
		if err != nil {
			return err
		}
		var n int64
		next = ""
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			n++
			next = max(next, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n < int64(limit) {
			next = ""
		}
		removed["webhook_deliveries"] = n
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE id IN (
			SELECT id FROM webhook_events e WHERE created_at < ?
			  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) ORDER BY created_at, id LIMIT ?)`, cut, limit)
		if err != nil {
			return err
		}
		removed["webhook_events"], _ = res.RowsAffected()
		return nil
	})
	return next, removed, err
}

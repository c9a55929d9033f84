package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
)

// LockKeys takes LockKey's lock on each of keys until tx ends, in one
// statement: a batch waits on one round trip, not one per key, and the
// keys are locked in one order, so two batches never wait on each other.
// It does nothing on SQLite.
func (db *DB) LockKeys(ctx context.Context, tx *sql.Tx, keys ...string) error {
	if !db.Postgres || len(keys) == 0 {
		return nil
	}
	b, _ := json.Marshal(keys) // strings cannot fail to marshal
	_, err := tx.ExecContext(ctx, `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
		FROM (SELECT DISTINCT k FROM jsonb_array_elements_text(CAST(? AS jsonb)) AS j(k) ORDER BY k) AS l`, string(b))
	return err
}

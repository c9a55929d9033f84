package sqldb

import (
	"context"
	"database/sql"
	"fmt"
)

// DeleteByEnvironment deletes in tx every row of each table whose
// environment_id is env: what a domain does with its tables when an
// environment is deleted. The tables are the caller's own names, never
// input.
func DeleteByEnvironment(ctx context.Context, tx *sql.Tx, env string, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE environment_id = ?`, env); err != nil {
			return fmt.Errorf("delete %s of environment %s: %w", t, env, err)
		}
	}
	return nil
}

// DeleteValues deletes the values stored in environment env (StoreValue),
// once nothing of it names them any more.
func (db *DB) DeleteValues(ctx context.Context, env string) error {
	return db.Tx(ctx, func(tx *sql.Tx) error {
		return DeleteByEnvironment(ctx, tx, env, "stored_values")
	})
}

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
	return db.InBatches(ctx, `SELECT id FROM stored_values WHERE environment_id = ? LIMIT ?`, env,
		func(tx *sql.Tx, ids []any) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM stored_values WHERE id IN (`+Placeholders(len(ids))+`)`, ids...)
			return err
		})
}

// DeleteBatch is how many records one transaction of an environment's
// deletion removes: the writer is held for one batch at a time, so the
// other environments' writes go on between them.
const DeleteBatch = 1000

// InBatches runs fn in one write transaction per batch of the ids that
// selectIDs finds (a one-column query taking the environment and a
// limit), until it finds none. fn must delete what it is given, or the
// same ids come back.
func (db *DB) InBatches(ctx context.Context, selectIDs, env string, fn func(tx *sql.Tx, ids []any) error) error {
	for {
		done := false
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, selectIDs, env, DeleteBatch)
			if err != nil {
				return err
			}
			var ids []any
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(ids) == 0 {
				done = true
				return nil
			}
			return fn(tx, ids)
		})
		if err != nil || done {
			return err
		}
	}
}

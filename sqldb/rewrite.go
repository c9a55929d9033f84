package sqldb

import (
	"context"
	"database/sql"
	"strings"
)

// Rewrite changes, a batch of rows at a time, values an earlier version
// stored in a form this one no longer keeps (a secret stored plain, a
// field no longer kept).
type Rewrite struct {
	Table   string   // keyed by its id column
	Columns []string // the columns Value may change
	Where   string   // which rows may need it, with Args
	Args    []any
	// Value is what to write in Columns[i] of row id, which holds v; ok
	// false leaves it as it is.
	Value func(i int, id string, v sql.NullString) (_ string, ok bool)
}

// rewriteBatch is how many rows RewriteRows reads, and changes in one
// transaction, at a time.
const rewriteBatch = 500

// RewriteRows applies rw to every row that needs it, in id order, and
// returns how many rows it changed. A value is replaced only while the row
// still holds what was read: a write meanwhile, or another instance
// rewriting the same row, wins. Rows that Value rewrites no longer match
// Where, so a second run finds nothing to do.
func (db *DB) RewriteRows(ctx context.Context, rw Rewrite) (changed int, err error) {
	after := ""
	for {
		ids, values, err := db.rewriteRead(ctx, rw, after)
		if err != nil || len(ids) == 0 {
			return changed, err
		}
		n, err := db.rewriteWrite(ctx, rw, ids, values)
		changed += n
		if err != nil {
			return changed, err
		}
		after = ids[len(ids)-1]
	}
}

// rewriteRead reads the next batch of rows after after that match rw's
// Where: their ids, and each row's values in rw.Columns' order.
func (db *DB) rewriteRead(ctx context.Context, rw Rewrite, after string) (ids []string, values [][]sql.NullString, err error) {
	args := append(append([]any{after}, rw.Args...), rewriteBatch)
	rows, err := db.QueryContext(ctx, `SELECT id, `+strings.Join(rw.Columns, ", ")+` FROM `+rw.Table+`
		WHERE id > ? AND (`+rw.Where+`) ORDER BY id LIMIT ?`, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		row := make([]sql.NullString, len(rw.Columns))
		dst := []any{&id}
		for i := range row {
			dst = append(dst, &row[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, nil, err
		}
		ids, values = append(ids, id), append(values, row)
	}
	return ids, values, rows.Err()
}

// rewriteWrite writes, in one transaction, the values Value gives for the
// rows read, each only while its row still holds what was read, and
// returns how many rows it changed.
func (db *DB) rewriteWrite(ctx context.Context, rw Rewrite, ids []string, values [][]sql.NullString) (int, error) {
	var changed int
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		changed = 0
		for r, id := range ids {
			var n int64
			for i, col := range rw.Columns {
				v, ok := rw.Value(i, id, values[r][i])
				if !ok {
					continue
				}
				res, err := tx.ExecContext(ctx, `UPDATE `+rw.Table+` SET `+col+` = ? WHERE id = ? AND `+col+` = ?`,
					v, id, values[r][i].String)
				if err != nil {
					return err
				}
				d, err := res.RowsAffected()
				if err != nil {
					return err
				}
				n += d
			}
			if n > 0 {
				changed++
			}
		}
		return nil
	})
	return changed, err
}

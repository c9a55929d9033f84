package platform

import (
	"context"
	"database/sql"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// PlainColumn is a text column whose values a Sealer seals bound to their
// row's id, and which rows written before it was sealed hold plain.
type PlainColumn struct {
	Name   string
	Sealer *Sealer // nil: the column is not sealed
	Keep   string  // a value that holds nothing secret and stays as it is, besides NULL and ""
}

// plain reports whether v is a value of c still to seal.
func (c PlainColumn) plain(v sql.NullString) bool {
	return v.Valid && v.String != "" && v.String != c.Keep && !strings.HasPrefix(v.String, SealedPrefix)
}

// sealBatch is how many rows SealPlainRows reads, and seals in one
// transaction, at a time.
const sealBatch = 500

// SealPlainRows seals every value of columns that a row of table (keyed
// by its id column) still holds plain, a batch at a time, and returns how
// many rows it changed. A value is replaced only while it still holds what
// was read: a write meanwhile, or another instance sealing the same row,
// wins, and the value is sealed either way. Run again, it finds nothing to
// do; a column without a Sealer is left as it is.
func SealPlainRows(ctx context.Context, db *sqldb.DB, table string, columns ...PlainColumn) (sealed int, err error) {
	defer Wrap(&err, "seal the %s stored plain", table)
	var sealing []PlainColumn
	for _, c := range columns {
		if c.Sealer != nil {
			sealing = append(sealing, c)
		}
	}
	if len(sealing) == 0 {
		return 0, nil
	}
	after := ""
	for {
		ids, values, err := plainRows(ctx, db, table, sealing, after)
		if err != nil || len(ids) == 0 {
			return sealed, err
		}
		n, err := sealRows(ctx, db, table, sealing, ids, values)
		sealed += n
		if err != nil {
			return sealed, err
		}
		after = ids[len(ids)-1]
	}
}

// plainRows reads the next batch of rows after after, by id, that hold a
// value of columns plain: their ids, and each row's values in columns'
// order.
func plainRows(ctx context.Context, db *sqldb.DB, table string, columns []PlainColumn, after string) (ids []string, values [][]sql.NullString, err error) {
	names, conds, args := make([]string, len(columns)), make([]string, len(columns)), []any{after}
	for i, c := range columns {
		names[i] = c.Name
		conds[i] = "(" + c.Name + " IS NOT NULL AND " + c.Name + " NOT IN ('', ?) AND " +
			c.Name + " NOT LIKE '" + SealedPrefix + "%')"
		args = append(args, c.Keep)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, `+strings.Join(names, ", ")+` FROM `+table+`
		WHERE id > ? AND (`+strings.Join(conds, " OR ")+`) ORDER BY id LIMIT ?`, append(args, sealBatch)...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		row := make([]sql.NullString, len(columns))
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

// sealRows seals, in one transaction, the plain values of the rows read,
// each only while its row still holds it, and returns how many rows it
// changed.
func sealRows(ctx context.Context, db *sqldb.DB, table string, columns []PlainColumn, ids []string, values [][]sql.NullString) (int, error) {
	var changed int
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		changed = 0
		for r, id := range ids {
			var n int64
			for i, c := range columns {
				v := values[r][i]
				if !c.plain(v) {
					continue
				}
				res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+c.Name+` = ? WHERE id = ? AND `+c.Name+` = ?`,
					c.Sealer.SealText([]byte(v.String), []byte(id)), id, v.String)
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

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

// SealPlainRows seals every value of columns that a row of table (keyed
// by its id column) still holds plain, and returns how many rows it
// changed (sqldb.RewriteRows: a write meanwhile, or another instance
// sealing the same row, wins, and the value is sealed either way). Run
// again, it finds nothing to do; a column without a Sealer is left as it
// is.
func SealPlainRows(ctx context.Context, db *sqldb.DB, table string, columns ...PlainColumn) (sealed int, err error) {
	defer Wrap(&err, "seal the %s stored plain", table)
	rw := sqldb.Rewrite{Table: table}
	var sealing []PlainColumn
	var where []string
	for _, c := range columns {
		if c.Sealer == nil {
			continue
		}
		sealing, rw.Columns = append(sealing, c), append(rw.Columns, c.Name)
		where = append(where, "("+c.Name+" IS NOT NULL AND "+c.Name+" NOT IN ('', ?) AND "+
			c.Name+" NOT LIKE '"+SealedPrefix+"%')")
		rw.Args = append(rw.Args, c.Keep)
	}
	if len(sealing) == 0 {
		return 0, nil
	}
	rw.Where = strings.Join(where, " OR ")
	rw.Value = func(i int, id string, v sql.NullString) (string, bool) {
		if !sealing[i].plain(v) {
			return "", false
		}
		return sealing[i].Sealer.SealText([]byte(v.String), []byte(id)), true
	}
	return db.RewriteRows(ctx, rw)
}

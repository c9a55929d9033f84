package platform

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// Sealer seals values a domain keeps at rest that are secrets of their own
// (a subscriber's chat webhook URL, its push device tokens), with a key
// derived from the installation secret for one purpose.
type Sealer struct{ s *sealer }

// NewSealer returns a Sealer for purpose, or nil when secret is empty: a
// store without a secret keeps its values as they are rather than under a
// key no other process, nor the next start, could derive.
func NewSealer(secret []byte, purpose string) *Sealer {
	if len(secret) == 0 {
		return nil
	}
	return &Sealer{s: newSealer(secret, purpose)}
}

// SealedPrefix begins a text column that SealText wrote; base64 of the
// sealed bytes follows. A column without it was written plain, by a
// version that did not seal it, and is read as it is.
const SealedPrefix = "sealed:v1:"

// ErrNoSecret means a column is sealed and no secret was given to open it.
var ErrNoSecret = errors.New("sealed, and no secret was given to open it")

// SealText is plain sealed for a text column, bound to context (the row's
// key) so that a column copied onto another row does not open. A nil
// Sealer keeps plain as it is.
func (s *Sealer) SealText(plain, context []byte) string {
	if s == nil {
		return string(plain)
	}
	sealed := s.s.seal(plain, context)
	b := make([]byte, 0, len(SealedPrefix)+base64.RawStdEncoding.EncodedLen(len(sealed)))
	return string(base64.RawStdEncoding.AppendEncode(append(b, SealedPrefix...), sealed))
}

// OpenText is the plain text of column: opened when SealText wrote it for
// the same context, the column itself when it was written plain. It fails
// with ErrNoSecret when a nil Sealer meets a sealed column; its errors
// never hold the column.
func (s *Sealer) OpenText(column string, context []byte) ([]byte, error) {
	rest, sealed := strings.CutPrefix(column, SealedPrefix)
	if !sealed {
		return []byte(column), nil
	}
	if s == nil {
		return nil, ErrNoSecret
	}
	b, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("sealed value is not base64")
	}
	n := s.s.aead.NonceSize()
	if len(b) < n {
		return nil, errors.New("sealed value too short")
	}
	// Opened in place: the decoded bytes are this call's own.
	plain, err := s.s.aead.Open(b[n:n], b[:n], b[n:], context)
	if err != nil {
		return nil, fmt.Errorf("sealed value does not open: %w", err)
	}
	return plain, nil
}

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

package sqldb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A trigger repeats its payload, overrides and workflow in every
// notification and message it makes: a broadcast to N subscribers would
// store each N times. A value of ValueThreshold bytes or more is therefore
// stored once per environment in stored_values, keyed by its hash, and the
// column that holds it holds its key instead: "@" and the hash, which no
// JSON document starts with. A smaller value stays in its column, where it
// costs less than a key and a lookup.
//
// A stored value has no owner: it goes once no column names it and it was
// last stored more than ValueGrace ago (SweepValues).

// ValueThreshold is the size from which a value is stored apart.
const ValueThreshold = 1024

// largeValue is the size from which StoreValue looks for a value before
// writing it.
const largeValue = 64 << 10

// ValueGrace is how long a stored value is kept after it was last stored,
// whether or not a row names it: longer than any write transaction, so a
// sweep never takes a value a transaction under way is about to name.
const ValueGrace = time.Hour

// valueTouch is how stale a value's used_at may be before storing it again
// moves it on: a stored value's row is rewritten at most this often.
const valueTouch = time.Minute

// IsValueKey reports whether a column's text is a stored value's key.
func IsValueKey(s string) bool { return strings.HasPrefix(s, "@") }

// ValueKey is the key of body in env.
func ValueKey(env string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(env))
	h.Write([]byte{0})
	h.Write(body)
	return "@" + hex.EncodeToString(h.Sum(nil)[:16])
}

// StoreValue answers what a column holds for body: body itself when small,
// its key otherwise, with body stored in tx under that key.
//
// The key's row, when it exists, is touched rather than written again: on a
// shared database the UPDATE locks it until tx ends, so a sweep deleting it
// meanwhile waits and then finds it touched; one that committed first
// leaves no row, and the INSERT writes it anew.
// TestStoredValues_SweepNeverTakesANamedValue races the two on PostgreSQL.
func (db *DB) StoreValue(ctx context.Context, tx *sql.Tx, env string, body []byte, now time.Time) (string, error) {
	if len(body) < ValueThreshold {
		return string(body), nil
	}
	key := ValueKey(env, body)
	ts := FormatTime(now)
	res, err := tx.ExecContext(ctx, `UPDATE stored_values SET used_at = ? WHERE id = ? AND used_at < ?`,
		ts, key, FormatTime(now.Add(-valueTouch)))
	if err != nil {
		return "", fmt.Errorf("touch stored value: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return key, nil
	}
	if len(body) >= largeValue {
		// Not touched: absent, or stored within valueTouch, when no sweep
		// can take it before tx ends (ValueGrace). A large body (a
		// trigger's files, each batch of a broadcast storing them again)
		// is then not sent to the database only to be discarded.
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM stored_values WHERE id = ?`, key).Scan(&one)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("find stored value: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stored_values (id, environment_id, body, used_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, key, env, string(body), ts); err != nil {
		return "", fmt.Errorf("store value: %w", err)
	}
	return key, nil
}

// ValueColumn is an SQL expression reading col, a column StoreValue wrote:
// its value, looked up when col holds a key.
func ValueColumn(col string) string {
	return `CASE WHEN ` + col + ` LIKE '@%' THEN (SELECT sv.body FROM stored_values sv WHERE sv.id = ` + col + `) ELSE ` + col + ` END`
}

// ValueRef is a column StoreValue writes: Table.Column. Each such column
// has a partial index on itself WHERE Column LIKE '@%', so that a sweep
// finds whether a key is named without reading the table.
type ValueRef struct{ Table, Column string }

// SweepValues deletes, in one write transaction, at most limit of env's
// stored values last stored before before that no column of refs names,
// starting after cursor ("" at first); next is "" once none is left.
func (db *DB) SweepValues(ctx context.Context, env string, refs []ValueRef, before time.Time, cursor string, limit int) (next string, removed int64, err error) {
	var unused []string
	for _, r := range refs {
		unused = append(unused, `NOT EXISTS (SELECT 1 FROM `+r.Table+` WHERE `+r.Column+` = stored_values.id AND `+r.Column+` LIKE '@%')`)
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM stored_values
			WHERE environment_id = ? AND id > ? ORDER BY environment_id, id LIMIT ?`, env, cursor, limit)
		if err != nil {
			return err
		}
		var ids []string
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
		if len(ids) == limit {
			next = ids[len(ids)-1]
		}
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `DELETE FROM stored_values WHERE id = ? AND used_at < ? AND `+
				strings.Join(unused, " AND "), id, FormatTime(before))
			if err != nil {
				return fmt.Errorf("delete stored value: %w", err)
			}
			n, _ := res.RowsAffected()
			removed += n
		}
		return nil
	})
	return next, removed, err
}

// Size is the bytes the database holds: PostgreSQL's size of it, or the
// SQLite file's pages in use.
func (db *DB) Size(ctx context.Context) (int64, error) {
	var n int64
	q := `SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`
	if db.Postgres {
		q = `SELECT pg_database_size(current_database())`
	}
	err := db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

package activity

import (
	"context"
	"database/sql"
	"sync"
)

// statements caches the writer's prepared statements by SQL text. SQLite
// spends more time parsing a small INSERT than running it, and the hot
// writes (trigger inserts, claims, settlements) run thousands of times a
// second with the same text.
//
// A statement is prepared on the one writer connection, which a goroutine
// inside a write transaction already holds: preparing there would wait on
// itself. So statements are prepared by warm, outside any transaction, and
// a transaction only uses them (exec falls back to an unprepared statement
// for text that was never warmed).
type statements struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

// warm prepares every query not prepared yet. It must not be called while
// this goroutine holds a write transaction.
func (c *statements) warm(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		if c.get(q) != nil {
			continue
		}
		// Prepared without holding mu: preparing waits for the writer,
		// whose holder may be reading the cache.
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if c.m[q] == nil {
			c.m[q], st = st, nil
		}
		c.mu.Unlock()
		if st != nil {
			st.Close()
		}
	}
	return nil
}

func (c *statements) get(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// exec runs query in tx, prepared when it was warmed.
func (c *statements) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := c.get(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// queryRow runs a one-row query in tx, prepared when it was warmed.
func (c *statements) queryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := c.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// query runs query on the writer outside a transaction, prepared when it
// was warmed.
func (c *statements) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.get(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

// row runs a one-row query prepared on the pool, preparing it on first use.
// Only for the read pool: preparing there never waits on a connection the
// caller holds.
func (c *statements) row(ctx context.Context, query string, args ...any) *sql.Row {
	if err := c.warm(ctx, query); err != nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return c.get(query).QueryRowContext(ctx, args...)
}

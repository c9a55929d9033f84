package platform

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxReadStmts bounds how many distinct queries the read pool keeps
// prepared. Hot queries are a handful of fixed texts; the bound only stops a
// query built from unbounded input (a payload filter, an IN list) from
// growing the cache without end. Past it, queries run unprepared as before.
const maxReadStmts = 512

// readStmts caches prepared statements of the read pool by SQL text.
// database/sql prepares a cached *sql.Stmt lazily on each pool connection
// and reuses it there, so a hot read is parsed and planned once per
// connection instead of once per call: for a short indexed query, parsing
// and planning cost more CPU than running it.
type readStmts struct {
	m sync.Map // query → *sql.Stmt
	n atomic.Int32
	// mu serialises preparing, so two callers of a new query do not both
	// prepare it.
	mu sync.Mutex
}

// ReadStmt returns a prepared statement for query on the read pool, cached
// for the life of db, or nil with a nil error when the cache is full (the
// caller then runs the query unprepared). Inside a read transaction use
// tx.StmtContext(ctx, stmt), which reuses the statement already prepared on
// the transaction's connection.
func (db *DB) ReadStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := db.stmts.m.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if s, ok := db.stmts.m.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	if db.stmts.n.Load() >= maxReadStmts {
		return nil, nil
	}
	s, err := db.R.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	db.stmts.m.Store(query, s)
	db.stmts.n.Add(1)
	return s, nil
}

// Query runs a read on the read pool through a cached prepared statement.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := db.ReadStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return db.R.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRow is Query for at most one row; errors surface at Scan.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := db.ReadStmt(ctx, query)
	if err != nil || s == nil {
		// A failed prepare is reported by running the query unprepared,
		// whose Scan returns the same error.
		return db.R.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// TxQuery runs a read inside tx, a transaction on the read pool, through
// the cached statement for query.
func (db *DB) TxQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	s, err := db.ReadStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return tx.QueryContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

// TxQueryRow is TxQuery for at most one row; errors surface at Scan.
func (db *DB) TxQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	s, err := db.ReadStmt(ctx, query)
	if err != nil || s == nil {
		return tx.QueryRowContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// closeStmts closes every cached statement.
func (db *DB) closeStmts() {
	db.stmts.m.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		db.stmts.m.Delete(k)
		return true
	})
}

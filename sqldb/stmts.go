package sqldb

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxReadStmts bounds how many distinct queries the read pool keeps
// prepared. Hot queries are a handful of fixed texts; the bound only stops a
// query built from unbounded input (a payload filter, an IN list) from
// growing the cache without end. Past it, queries run unprepared.
const maxReadStmts = 512

// readStmts caches prepared statements of the read pool by SQL text.
// database/sql prepares a cached *sql.Stmt lazily on each pool connection
// and reuses it there, so a hot read is parsed and planned once per
// connection instead of once per call: for a short indexed query, parsing
// and planning cost more CPU than running it.
//
// A statement is prepared in the background the first time its query is
// seen, and that call runs unprepared: preparing on the pool takes a
// connection, and a caller inside a read transaction already holds one, so
// waiting for another could deadlock once every connection is held so.
type readStmts struct {
	m       sync.Map // query → *sql.Stmt
	pending sync.Map // query → struct{}, while its prepare runs
	n       atomic.Int32
}

// ReadStmt returns the prepared statement for query on the read pool, or
// nil when it is not prepared (yet): the caller then runs the query
// unprepared. It never waits for a connection. Inside a read transaction
// use tx.StmtContext(ctx, stmt), which reuses the statement already
// prepared on the transaction's connection.
func (db *DB) ReadStmt(query string) *sql.Stmt {
	if s, ok := db.stmts.m.Load(query); ok {
		return s.(*sql.Stmt)
	}
	if db.stmts.n.Load() >= maxReadStmts {
		return nil
	}
	if _, busy := db.stmts.pending.LoadOrStore(query, struct{}{}); busy {
		return nil
	}
	db.stmts.n.Add(1)
	go func() {
		defer db.stmts.pending.Delete(query)
		s, err := db.r.PrepareContext(context.Background(), query)
		if err != nil {
			// The query fails unprepared as well, where its caller sees why.
			db.stmts.n.Add(-1)
			return
		}
		db.stmts.m.Store(query, s)
	}()
	return nil
}

// Query runs a read on the read pool through a cached prepared statement.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s := db.ReadStmt(query)
	if s == nil {
		return db.r.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRow is Query for at most one row; errors surface at Scan.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s := db.ReadStmt(query)
	if s == nil {
		return db.r.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// TxQuery runs a read inside tx, a transaction on the read pool, through
// the cached statement for query.
func (db *DB) TxQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	s := db.ReadStmt(query)
	if s == nil {
		return tx.QueryContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

// TxQueryRow is TxQuery for at most one row; errors surface at Scan.
func (db *DB) TxQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	s := db.ReadStmt(query)
	if s == nil {
		return tx.QueryRowContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// writeStmts caches the writer's prepared statements by SQL text. SQLite
// spends more time parsing a small INSERT than running it, and the hot
// writes (trigger inserts, claims, settlements, in-app messages) run
// thousands of times a second with the same text.
//
// A statement is prepared on the one writer connection, which a goroutine
// inside a write transaction already holds: preparing there would wait on
// itself. So statements are prepared by PrepareWrites, outside any
// transaction, and a transaction only uses them (WriteExec and the others
// run a query that was never prepared unprepared).
type writeStmts struct {
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

// PrepareWrites prepares on the writer every query not prepared yet. It
// must not be called while this goroutine holds a write transaction.
//
// On PostgreSQL it prepares nothing: pgx already prepares each statement
// the first time its connection runs it and keeps it, by its text, for the
// connection's life. A database/sql statement on top would cost a lookup
// and an allocation per call and save no parsing.
func (db *DB) PrepareWrites(ctx context.Context, queries ...string) error {
	if db.Postgres {
		return nil
	}
	for _, q := range queries {
		if db.WriteStmt(q) != nil {
			continue
		}
		// Prepared without holding mu: preparing waits for the writer,
		// whose holder may be reading the cache.
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		db.writes.mu.Lock()
		if db.writes.m == nil {
			db.writes.m = map[string]*sql.Stmt{}
		}
		if db.writes.m[q] == nil {
			db.writes.m[q], st = st, nil
		}
		db.writes.mu.Unlock()
		if st != nil {
			st.Close()
		}
	}
	return nil
}

// WriteStmt returns query prepared on the writer, or nil when PrepareWrites
// has not prepared it.
func (db *DB) WriteStmt(query string) *sql.Stmt {
	db.writes.mu.RLock()
	defer db.writes.mu.RUnlock()
	return db.writes.m[query]
}

// WriteExec runs query in tx, a write transaction, prepared when it was.
func (db *DB) WriteExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := db.WriteStmt(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// WriteQueryRow is WriteExec for a query of at most one row.
func (db *DB) WriteQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := db.WriteStmt(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// WriteQuery runs query on the writer outside a transaction (an UPDATE …
// RETURNING, say), prepared when it was.
func (db *DB) WriteQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.WriteStmt(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.w.QueryContext(ctx, query, args...)
}

// closeStmts closes every cached statement, the reads' and the writer's.
func (db *DB) closeStmts() {
	db.stmts.m.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		db.stmts.m.Delete(k)
		return true
	})
	db.writes.mu.Lock()
	defer db.writes.mu.Unlock()
	for q, st := range db.writes.m {
		st.Close()
		delete(db.writes.m, q)
	}
}

// BeginSnapshot begins a read-only transaction on the read pool whose every
// statement sees the same committed state (the dialect's SnapshotTx): a page
// and its count then agree.
func (db *DB) BeginSnapshot(ctx context.Context) (*sql.Tx, error) {
	return db.r.BeginTx(ctx, db.Dialect().SnapshotTx())
}

package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// On PostgreSQL every statement is a round trip: the writer sends it and
// waits for the answer before it sends the next. A trigger writes several
// rows whose statements need nothing back, and a group commit writes many
// triggers; waiting for each in turn costs both processes a system call
// and a context switch per statement, and leaves the one writer idle for
// most of each. So a write transaction may hold statements back (WriteLater)
// and send them, in order, in one pipeline with the next statement that
// needs an answer, or with the COMMIT. Their errors surface there, which
// the transaction then fails with: PostgreSQL fails a transaction at its
// first failed statement anyway.
//
// BEGIN is held back the same way, so a transaction costs the round trips
// of its answered statements plus one for the last pipeline and COMMIT.

// laterKey marks a context whose statement the connection may hold back.
type laterKey struct{}

// WriteLater runs query in tx, a write transaction of Tx, like WriteExec,
// except that on PostgreSQL the statement is sent with the transaction's
// next statement or its COMMIT, whichever comes first: use it for a write
// whose result the caller does not read. An error it meets fails that
// later statement or the commit instead, never this call; the caller must
// not recover from a failure within the transaction (with a savepoint,
// say) around a held statement. A statement that takes a lock others wait
// on must not be held either: it would take the lock only as it commits.
// On SQLite it runs now.
func (db *DB) WriteLater(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	if !db.Postgres {
		_, err := db.WriteExec(ctx, tx, query, args...)
		return err
	}
	_, err := tx.ExecContext(context.WithValue(ctx, laterKey{}, true), query, args...)
	return err
}

// returningKey marks a context whose statement returns rows its caller
// reads: its value is the caller's function for each row.
type returningKey struct{}

// WriteReturning runs query, a write in tx whose rows the caller reads (an
// INSERT … RETURNING), and calls row for each row it returns with a
// function that scans that row into dest. On PostgreSQL the statements
// held before it go in the same pipeline, so that it costs no round trip
// more than an answered WriteExec; database/sql's own queries cannot, as
// their rows are read after the call returns.
func (db *DB) WriteReturning(ctx context.Context, tx *sql.Tx, query string, row func(scan func(dest ...any) error) error, args ...any) error {
	if !db.Postgres {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	_, err := tx.ExecContext(context.WithValue(ctx, returningKey{}, row), query, args...)
	return err
}

// returning is the row function a context of WriteReturning carries.
func returning(ctx context.Context) func(scan func(dest ...any) error) error {
	row, _ := ctx.Value(returningKey{}).(func(scan func(dest ...any) error) error)
	return row
}

// WireStats counts the writer's traffic on PostgreSQL; zero on SQLite.
type WireStats struct {
	Statements int64 // statements sent, BEGIN and COMMIT included
	RoundTrips int64 // times the writer waited for the server's answers
}

// WireStats reports the statements and round trips of the writer so far.
func (db *DB) WireStats() WireStats {
	if db.wire == nil {
		return WireStats{}
	}
	return WireStats{Statements: db.wire.statements.Load(), RoundTrips: db.wire.roundTrips.Load()}
}

// wireCounts is WireStats, counted by the writer's connections.
type wireCounts struct {
	statements, roundTrips atomic.Int64
}

func (w *wireCounts) sent(statements int) {
	if w != nil {
		w.statements.Add(int64(statements))
		w.roundTrips.Add(1)
	}
}

// held is a statement the connection holds back.
type held struct {
	query string // translated
	args  []any
}

// heldResult answers a held statement: its count is not known yet.
type heldResult struct{}

func (heldResult) LastInsertId() (int64, error) {
	return 0, errors.New("no LastInsertId on PostgreSQL")
}
func (heldResult) RowsAffected() (int64, error) {
	return 0, errors.New("a statement held for the pipeline has no count yet")
}

// pgTx is a transaction of pgConn whose BEGIN waits, with the statements
// held after it, for the first answered statement or the commit.
type pgTx struct {
	c *pgConn
}

// beginSQL is the BEGIN for opts, or false for options left to pgx.
func beginSQL(opts driver.TxOptions) (string, bool) {
	if opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return "", false
	}
	return "BEGIN", true
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.pending != nil {
		return nil, errors.New("begin: a transaction is already open on this connection")
	}
	begin, ok := beginSQL(opts)
	if !ok || c.wire == nil {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	c.pending = append(make([]held, 0, 16), held{query: begin})
	c.begun = false
	return &pgTx{c: c}, nil
}

func (t *pgTx) Commit() error {
	c := t.c
	defer c.endTx()
	if !c.begun && len(c.pending) == 1 {
		return nil // nothing was written: there is nothing to commit
	}
	tag, err := c.flush(context.Background(), held{query: "COMMIT"})
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("commit: the server answered %s", tag)
	}
	if err != nil {
		c.abort()
		return err
	}
	return nil
}

func (t *pgTx) Rollback() error {
	c := t.c
	defer c.endTx()
	if !c.begun {
		return nil // the BEGIN was never sent
	}
	c.pending = nil
	_, err := c.Conn.Conn().Exec(context.Background(), "ROLLBACK")
	c.wire.sent(1)
	return err
}

// endTx forgets the transaction's held statements.
func (c *pgConn) endTx() {
	c.pending, c.begun = nil, false
}

// abort rolls back what a failed pipeline left open.
func (c *pgConn) abort() {
	conn := c.Conn.Conn()
	if conn.IsClosed() || conn.PgConn().TxStatus() == 'I' {
		return
	}
	conn.Exec(context.Background(), "ROLLBACK")
	c.wire.sent(1)
}

// flush sends the held statements and last in one pipeline and returns
// last's command tag, or the first error the server answered.
func (c *pgConn) flush(ctx context.Context, last held) (pgconn.CommandTag, error) {
	return c.flushRows(ctx, last, nil)
}

// flushRows is flush, calling row for each row last returns when row is
// not nil (WriteReturning). Outside a pipelined transaction it sends last
// alone.
func (c *pgConn) flushRows(ctx context.Context, last held, row func(scan func(dest ...any) error) error) (pgconn.CommandTag, error) {
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(c.pending)+1)}
	for _, h := range c.pending {
		b.Queue(h.query, h.args...)
	}
	b.Queue(last.query, last.args...)
	if c.pending != nil {
		c.pending = c.pending[:0]
		c.begun = true
	}
	c.wire.sent(len(b.QueuedQueries))
	br := c.Conn.Conn().SendBatch(ctx, b)
	var tag pgconn.CommandTag
	var first error
	for i := range b.QueuedQueries {
		var t pgconn.CommandTag
		var err error
		if i == len(b.QueuedQueries)-1 && row != nil && first == nil {
			t, err = readRows(br, row)
		} else {
			t, err = br.Exec()
		}
		if err != nil && first == nil {
			first = err
		}
		tag = t
	}
	if err := br.Close(); err != nil && first == nil {
		first = err
	}
	return tag, first
}

// readRows reads the next result of br, a query's, calling row for each
// of its rows.
func readRows(br pgx.BatchResults, row func(scan func(dest ...any) error) error) (pgconn.CommandTag, error) {
	rows, err := br.Query()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return pgconn.CommandTag{}, err
		}
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

// holding reports whether statements wait to be sent before the next one.
func (c *pgConn) holding() bool { return len(c.pending) > 0 }

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if row := returning(ctx); row != nil {
		tag, err := c.flushRows(ctx, held{query: translate(query), args: namedArgs(args)}, row)
		if err != nil {
			return nil, err
		}
		return driver.RowsAffected(tag.RowsAffected()), nil
	}
	if c.pending == nil {
		c.wire.sent(1)
		return c.Conn.ExecContext(ctx, translate(query), args)
	}
	h := held{query: translate(query), args: namedArgs(args)}
	if ctx.Value(laterKey{}) != nil {
		c.pending = append(c.pending, h)
		return heldResult{}, nil
	}
	tag, err := c.flush(ctx, h)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.holding() {
		// A query's rows are read as they come, so what is held goes
		// first, in a round trip of its own.
		if err := c.flushHeld(ctx); err != nil {
			return nil, err
		}
	}
	c.wire.sent(1)
	return c.Conn.QueryContext(ctx, translate(query), args)
}

// flushHeld sends the held statements alone.
func (c *pgConn) flushHeld(ctx context.Context) error {
	last := c.pending[len(c.pending)-1]
	c.pending = c.pending[:len(c.pending)-1]
	_, err := c.flush(ctx, last)
	return err
}

// namedArgs are database/sql's arguments as pgx takes them; the driver's
// CheckNamedValue passes every value through unchanged.
func namedArgs(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// pgStmt is a statement prepared on pgConn: it sends what the connection
// holds first, so statements reach the server in the order they were run.
type pgStmt struct {
	*stdlib.Stmt
	c     *pgConn
	query string // translated
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.c.pending != nil || returning(ctx) != nil {
		return s.c.ExecContext(ctx, s.query, args)
	}
	s.c.wire.sent(1)
	return s.Stmt.ExecContext(ctx, args)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.c.holding() {
		if err := s.c.flushHeld(ctx); err != nil {
			return nil, err
		}
	}
	s.c.wire.sent(1)
	return s.Stmt.QueryContext(ctx, args)
}

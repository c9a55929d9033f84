package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// pipelineTables makes a parent table and a child table whose rows need
// their parent, so statements sent out of order fail.
func pipelineTables(t *testing.T, db *sqldb.DB) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `CREATE TABLE pl_parent (id INTEGER PRIMARY KEY)`)
	is.NoErr(err) // parent table made
	_, err = db.ExecContext(ctx, `CREATE TABLE pl_child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES pl_parent (id))`)
	is.NoErr(err) // child table made
}

func pipelineCount(t *testing.T, db *sqldb.DB, table string) int {
	t.Helper()
	var n int
	is.New(t).NoErr(db.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n)) // counted
	return n
}

// TestWriteLater_OK: held statements reach the database in the order they
// were run, before a statement that answers and before the commit, and a
// read inside the transaction sees them.
func TestWriteLater_OK(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	pipelineTables(t, db)
	before := db.WireStats()
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		for i := range 3 {
			if err := db.WriteLater(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, i); err != nil {
				return err
			}
			if err := db.WriteLater(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, 10+i, i); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pl_child`).Scan(&n); err != nil {
			return err
		}
		if n != 3 {
			return errors.New("a read in the transaction missed held rows")
		}
		res, err := db.WriteExec(ctx, tx, `UPDATE pl_child SET parent = ? WHERE id >= ?`, 0, 11)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 2 {
			return errors.New("the answered statement did not see the held rows")
		}
		return db.WriteLater(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, 20, 2)
	})
	is.NoErr(err)                                  // committed
	is.Equal(pipelineCount(t, db, "pl_parent"), 3) // every held parent stored
	is.Equal(pipelineCount(t, db, "pl_child"), 4)  // the held child after the last answered statement too
	if db.Postgres {
		got := db.WireStats()
		// BEGIN, 6 inserts, the count, the UPDATE, an insert, COMMIT: in
		// three round trips (the held rows, the count, the UPDATE), plus
		// the last insert with COMMIT.
		is.Equal(got.Statements-before.Statements, int64(11)) // every statement sent
		is.Equal(got.RoundTrips-before.RoundTrips, int64(4))  // in four round trips
	}
}

// TestWriteLater_ErrFailsItsTransaction: a held statement that fails fails
// the transaction, whether a later statement or the commit sends it, and
// leaves nothing of it written; the connection then serves the next
// transaction.
func TestWriteLater_ErrFailsItsTransaction(t *testing.T) {
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	pipelineTables(t, db)
	for _, tc := range []struct {
		name  string
		after func(tx *sql.Tx) error // what runs after the failing held statement
	}{
		{"ErrAtCommit", func(tx *sql.Tx) error { return nil }},
		{"ErrAtNextStatement", func(tx *sql.Tx) error {
			_, err := db.WriteExec(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, 101)
			return err
		}},
		{"ErrAtRead", func(tx *sql.Tx) error {
			var n int
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM pl_parent`).Scan(&n)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := db.Tx(ctx, func(tx *sql.Tx) error {
				if err := db.WriteLater(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, 100); err != nil {
					return err
				}
				// No parent 999: the child fails its foreign key.
				if err := db.WriteLater(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, 100, 999); err != nil {
					return err
				}
				return tc.after(tx)
			})
			is.True(err != nil)                            // the failed held statement failed the transaction
			is.Equal(pipelineCount(t, db, "pl_parent"), 0) // nothing of it written
			is.NoErr(db.Tx(ctx, func(tx *sql.Tx) error {
				return db.WriteLater(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, 1)
			})) // the next transaction commits
			is.Equal(pipelineCount(t, db, "pl_parent"), 1) // and is stored
			_, err = db.ExecContext(ctx, `DELETE FROM pl_parent`)
			is.NoErr(err) // cleaned up
		})
	}
}

// TestGroupCommit_HeldStatementFailsOnlyItsWrite: in a group commit, a
// write whose held statement fails fails alone and leaves nothing of
// itself; the writes beside it are stored whole, and on PostgreSQL the
// batch costs fewer round trips than statements.
func TestGroupCommit_HeldStatementFailsOnlyItsWrite(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	pipelineTables(t, db)
	g := sqldb.NewGroupCommit(db, 16)
	before := db.WireStats()
	errs := make([]error, 48)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent := i
			if i%10 == 7 {
				parent = 100_000 // no such parent: the child fails
			}
			errs[i] = g.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
				if err := db.WriteLater(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, i); err != nil {
					return err
				}
				if err := db.WriteLater(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, i, parent); err != nil {
					return err
				}
				return db.WriteLater(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, 1000+i, i)
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		is.Equal(err != nil, i%10 == 7) // only the writes with a failing statement fail
		var parents, children int
		is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM pl_parent WHERE id = ?`, i).Scan(&parents))                   // counted
		is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM pl_child WHERE id = ? OR id = ?`, i, 1000+i).Scan(&children)) // counted
		if err != nil {
			is.Equal(parents+children, 0) // a failed write left nothing
		} else {
			is.Equal(parents+children, 3) // a write that succeeded is whole
		}
	}
	if db.Postgres {
		got := db.WireStats()
		statements, trips := got.Statements-before.Statements, got.RoundTrips-before.RoundTrips
		is.True(statements >= 3*int64(len(errs))) // every write's statements were sent
		is.True(trips*3 < statements)             // held statements shared round trips
	}
}

// TestWriteReturning_OK: a write's returned rows are read, after the
// statements held before it, which it sends in the same round trip.
func TestWriteReturning_OK(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	pipelineTables(t, db)
	_, err := db.ExecContext(ctx, `INSERT INTO pl_parent (id) VALUES (2)`)
	is.NoErr(err) // a parent taken before
	before := db.WireStats()
	var got []int
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		if err := db.WriteLater(ctx, tx, `INSERT INTO pl_parent (id) VALUES (?)`, 1); err != nil {
			return err
		}
		return db.WriteReturning(ctx, tx, `INSERT INTO pl_parent (id) VALUES (1), (2), (3), (3), (4)
			ON CONFLICT (id) DO NOTHING RETURNING id`, func(scan func(...any) error) error {
			var id int
			if err := scan(&id); err != nil {
				return err
			}
			got = append(got, id)
			return nil
		})
	})
	is.NoErr(err) // committed
	slices.Sort(got)
	is.Equal(got, []int{3, 4})                     // only the rows that got in came back, a duplicate once
	is.Equal(pipelineCount(t, db, "pl_parent"), 4) // 1 held, 2 before, 3 and 4 returned
	if db.Postgres {
		wire := db.WireStats()
		// BEGIN, the held insert and the returning one in one round trip,
		// COMMIT in another.
		is.Equal(wire.Statements-before.Statements, int64(4))
		is.Equal(wire.RoundTrips-before.RoundTrips, int64(2))
	}
}

// TestGroupCommit_PrepareSeesTheBatchItems: Prepare runs first in each
// transaction with the items of the writes it holds, in order; when the
// batch fails, with each write's item alone as the write runs again.
func TestGroupCommit_PrepareSeesTheBatchItems(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	pipelineTables(t, db)
	g := sqldb.NewGroupCommit(db, 16)
	type item struct{ id, prepared int }
	// Prepare writes each item's parent in one statement; a write adds
	// the child, which fails for the write whose parent was not prepared.
	g.Prepare = func(ctx context.Context, tx *sql.Tx, items []any) error {
		q, args := `INSERT INTO pl_parent (id) VALUES `, []any{}
		for i, it := range items {
			it := it.(*item)
			it.prepared++
			if i > 0 {
				q += ", "
			}
			q += "(?)"
			args = append(args, it.id)
		}
		_, err := db.WriteExec(ctx, tx, q, args...)
		return err
	}
	items := make([]*item, 32)
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i := range items {
		items[i] = &item{id: i}
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent := i
			if i == 13 {
				parent = 100_000 // no such parent: the write fails, alone
			}
			errs[i] = g.DoItem(ctx, items[i], func(ctx context.Context, tx *sql.Tx) error {
				_, err := db.WriteExec(ctx, tx, `INSERT INTO pl_child (id, parent) VALUES (?, ?)`, i, parent)
				return err
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		is.Equal(err != nil, i == 13) // only the failing write failed
		is.True(items[i].prepared >= 1)
	}
	is.Equal(pipelineCount(t, db, "pl_parent"), len(items)-1) // every other write's prepared parent committed
	is.Equal(pipelineCount(t, db, "pl_child"), len(items)-1)
}

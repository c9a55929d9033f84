// Package sqldbtest gives tests a fresh database migrated to the latest
// schema: in memory on SQLite, or a database of its own on the PostgreSQL
// server TEST_DATABASE_URL names, alone or shared by several simulated
// Herald processes.
package sqldbtest

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// NewDB opens a fresh in-memory database migrated to the latest schema,
// closed by t.Cleanup; a fresh PostgreSQL database when TEST_DATABASE_URL
// is set.
func NewDB(t testing.TB) *sqldb.DB {
	t.Helper()
	if OnPostgres() {
		return openDB(t, NewPostgresURL(t))
	}
	return openDB(t, sqldb.MemoryPath)
}

// NewFileDB is NewDB on a file in t.TempDir(), in WAL mode as Herald runs:
// there readers go on beside an open write transaction, where an in-memory
// database blocks them.
func NewFileDB(t testing.TB) *sqldb.DB {
	t.Helper()
	if OnPostgres() {
		return NewDB(t) // PostgreSQL's readers never wait on a writer
	}
	return openDB(t, filepath.Join(t.TempDir(), "herald.db"))
}

func openDB(t testing.TB, path string) *sqldb.DB {
	t.Helper()
	db, err := sqldb.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if db.Postgres {
		err = sqldb.Migrate(db, migrations.FS)
	} else {
		err = copyMigrated(db)
	}
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// migrated is an in-memory SQLite database migrated once per test
// process, which every SQLite test database starts as a copy of: copying
// its pages is much cheaper than running every migration again, as the
// PostgreSQL tests clone a migrated template database. It stays open
// until the process ends.
var migrated struct {
	once sync.Once
	db   *sqldb.DB
	err  error
}

// copyMigrated makes db a copy of the migrated database, whose schema is
// the one sqldb.Migrate gives.
func copyMigrated(db *sqldb.DB) error {
	migrated.once.Do(func() {
		migrated.db, migrated.err = sqldb.Open(context.Background(), sqldb.MemoryPath)
		if migrated.err == nil {
			migrated.err = sqldb.Migrate(migrated.db, migrations.FS)
		}
	})
	if migrated.err != nil {
		return migrated.err
	}
	return db.CopyFrom(context.Background(), migrated.db)
}

// SkipUnlessShared skips a test of several Herald processes on one
// database: on SQLite one process owns the database.
func SkipUnlessShared(t testing.TB) {
	t.Helper()
	if !OnPostgres() {
		t.Skip("PostgreSQL only: on SQLite one process owns the database, so there is no other instance to tell")
	}
}

// NewSharedDBs opens n *sqldb.DB on one fresh PostgreSQL database, as n
// Herald processes sharing it hold them: each with its own pools, instance
// ID and listener. All are closed by t.Cleanup. It skips the test on SQLite
// (SkipUnlessShared).
func NewSharedDBs(t testing.TB, n int) []*sqldb.DB {
	t.Helper()
	SkipUnlessShared(t)
	url := NewPostgresURL(t)
	dbs := make([]*sqldb.DB, n)
	for i := range dbs {
		db, err := sqldb.Open(context.Background(), url)
		if err != nil {
			t.Fatalf("open instance %d: %v", i, err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// WriteTx begins a write transaction on db and hands it over, for a test
// that holds the writer, or a lock, while something else runs. end commits
// it when commit is true and rolls it back otherwise, answering the
// commit's error; it is called with false at cleanup, and only the first
// call counts.
func WriteTx(t testing.TB, db *sqldb.DB) (tx *sql.Tx, end func(commit bool) error) {
	t.Helper()
	txs, ends, done := make(chan *sql.Tx), make(chan bool), make(chan error, 1)
	go func() {
		done <- db.Tx(context.Background(), func(tx *sql.Tx) error {
			txs <- tx
			if !<-ends {
				return errRollback
			}
			return nil
		})
	}()
	select {
	case tx = <-txs:
	case err := <-done:
		t.Fatalf("begin a write transaction: %v", err)
	}
	var once sync.Once
	var err error
	end = func(commit bool) error {
		once.Do(func() {
			ends <- commit
			if err = <-done; errors.Is(err, errRollback) {
				err = nil
			}
		})
		return err
	}
	t.Cleanup(func() { end(false) })
	return tx, end
}

// errRollback makes Tx roll back a transaction WriteTx handed over.
var errRollback = errors.New("rolled back")

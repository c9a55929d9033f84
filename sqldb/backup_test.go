package sqldb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// openFile opens and migrates the SQLite database at path, closed when
// the test ends.
func openFile(t *testing.T, path string) *sqldb.DB {
	t.Helper()
	db := openUnclosed(t, path)
	t.Cleanup(func() { db.Close() })
	return db
}

// openUnclosed is openFile for a database the test closes itself.
func openUnclosed(t *testing.T, path string) *sqldb.DB {
	t.Helper()
	db, err := sqldb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		t.Fatal(err)
	}
	return db
}

func countRows(t *testing.T, db *sqldb.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM kv`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBackup_RestoreRoundTrip(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	live := openFile(t, filepath.Join(dir, "live.db"))
	_, err := live.ExecContext(ctx, `CREATE TABLE kv (k TEXT PRIMARY KEY)`)
	is.NoErr(err)
	_, err = live.ExecContext(ctx, `INSERT INTO kv VALUES ('a'), ('b')`)
	is.NoErr(err)

	backup := filepath.Join(dir, "backup.db")
	is.NoErr(live.Backup(ctx, backup))       // a copy while the database is open
	is.NoErr(sqldb.CheckBackup(ctx, backup)) // whole, and Herald's
	is.NoErr(live.Backup(ctx, backup))       // an existing copy is replaced
	_, err = os.Stat(filepath.Join(dir, ".backup.db.tmp"))
	is.True(errors.Is(err, os.ErrNotExist)) // no temporary file is left behind
	_, err = live.ExecContext(ctx, `INSERT INTO kv VALUES ('after')`)
	is.NoErr(err)

	target := filepath.Join(dir, "target.db")
	replaced, err := sqldb.Restore(ctx, backup, target)
	is.NoErr(err)          // restored into a new path
	is.Equal(replaced, "") // nothing was there to keep
	restored := openUnclosed(t, target)
	is.Equal(countRows(t, restored), 2) // the rows committed before the backup, not those after
	_, err = restored.ExecContext(ctx, `INSERT INTO kv VALUES ('c')`)
	is.NoErr(err)
	is.NoErr(restored.Close())

	replaced, err = sqldb.Restore(ctx, backup, target)
	is.NoErr(err)                                    // restored over an existing database
	is.Equal(replaced, target+".before-restore")     // which is kept
	is.Equal(countRows(t, openFile(t, replaced)), 3) // whole, with its last write
	is.Equal(countRows(t, openFile(t, target)), 2)   // and the backup is in its place
	_, err = os.Stat(backup)
	is.NoErr(err) // the backup is copied, not moved
}

func TestRestore_Refused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	is.New(t).NoErr(openFile(t, filepath.Join(dir, "live.db")).Backup(ctx, good))
	notSQLite := filepath.Join(dir, "notes.txt")
	os.WriteFile(notSQLite, []byte("not a database, but long enough to have a header of some kind......................................................"), 0o600)
	foreign := filepath.Join(dir, "foreign.db")
	fdb, err := sqldb.Open(ctx, foreign)
	if err != nil {
		t.Fatal(err)
	}
	fdb.ExecContext(ctx, `CREATE TABLE t (x)`)
	fdb.Close()

	running := filepath.Join(dir, "running.db")
	unlock, err := sqldb.LockServer(running)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	for _, tc := range []struct {
		name, src, dest string
		want            error
	}{
		{"ErrServerRunning", good, running, sqldb.ErrServerRunning},
		{"ErrMissingBackup", filepath.Join(dir, "missing.db"), filepath.Join(dir, "a.db"), os.ErrNotExist},
		{"ErrNotSQLite", notSQLite, filepath.Join(dir, "b.db"), nil},
		{"ErrNotHerald", foreign, filepath.Join(dir, "c.db"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := sqldb.Restore(ctx, tc.src, tc.dest)
			is.True(err != nil) // refused
			if tc.want != nil {
				is.True(errors.Is(err, tc.want)) // for the reason expected
			}
			if tc.dest != running {
				_, err = os.Stat(tc.dest)
				is.True(errors.Is(err, os.ErrNotExist)) // nothing written
			}
		})
	}
}

func TestLockServer_OneHolder(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	unlock, err := sqldb.LockServer(path)
	is.NoErr(err) // the first takes it
	_, err = sqldb.LockServer(path + "?_pragma=busy_timeout(1)")
	is.True(errors.Is(err, sqldb.ErrServerRunning)) // the same file, named as a URI, is held
	unlock()
	unlock2, err := sqldb.LockServer(path)
	is.NoErr(err) // free once released
	unlock2()
	unlock3, err := sqldb.LockServer(sqldb.MemoryPath)
	is.NoErr(err) // memory has nothing to lock
	unlock3()
}

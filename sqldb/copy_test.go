package sqldb_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// TestCopyFrom_OK: a copy holds the source's rows, on every connection of
// the copy (the readers read the writer's in-memory database), keeps a
// file's WAL mode, and leaves the source as it was when written to.
func TestCopyFrom_OK(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	src := openFile(t, sqldb.MemoryPath)
	_, err := src.ExecContext(ctx, `CREATE TABLE kv (k TEXT PRIMARY KEY)`)
	is.NoErr(err)
	_, err = src.ExecContext(ctx, `INSERT INTO kv VALUES ('a'), ('b')`)
	is.NoErr(err)

	for _, path := range []string{sqldb.MemoryPath, filepath.Join(t.TempDir(), "copy.db")} {
		dst, err := sqldb.Open(ctx, path)
		is.NoErr(err)
		t.Cleanup(func() { dst.Close() })
		is.NoErr(dst.CopyFrom(ctx, src))
		is.Equal(countRows(t, dst), 2) // read on the reader pool

		_, err = dst.ExecContext(ctx, `INSERT INTO kv VALUES ('c')`)
		is.NoErr(err)
		is.Equal(countRows(t, dst), 3)
		is.Equal(countRows(t, src), 2) // the source is not the copy
		if path != sqldb.MemoryPath {
			var mode string
			is.NoErr(dst.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
			is.Equal(mode, "wal")
		}
	}
}

package sqldb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

// readerMmapSize is the mmap_size of a connection of db's read pool.
func readerMmapSize(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	if err := db.r.QueryRow("PRAGMA mmap_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOpen_ReadersMapNothingByDefault(t *testing.T) {
	is := is.New(t)
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "herald.db"))
	is.NoErr(err)
	defer db.Close()
	is.Equal(readerMmapSize(t, db), int64(0)) // pages are read, not mapped once per reader
}

func TestOpen_WithMmapSizeMapsThatMuch(t *testing.T) {
	is := is.New(t)
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "herald.db"), WithMmapSize(8<<20))
	is.NoErr(err)
	defer db.Close()
	is.Equal(readerMmapSize(t, db), int64(8<<20))
}

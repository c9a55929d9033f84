package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBackupPostgres is what Backup returns on PostgreSQL, whose own tools
// (pg_dump, or the server's continuous archiving) copy a live database
// better than Herald could through SQL.
var ErrBackupPostgres = errors.New("the database is PostgreSQL: back it up with pg_dump, and restore with pg_restore (docs/install.md, \"Backups\")")

// Backup writes a consistent copy of the SQLite database to dest while it
// is in use. VACUUM INTO reads one snapshot inside a read transaction, so
// the copy holds every transaction committed before it began and none
// after, while the writer goes on beside it (WAL); it runs on a connection
// of its own, never holding the writer. The copy is written to a temporary
// file beside dest and renamed into place, so dest is never a half-written
// file, and an existing dest is replaced only by a whole copy.
func (db *DB) Backup(ctx context.Context, dest string) error {
	if db.Postgres {
		return ErrBackupPostgres
	}
	return vacuumInto(ctx, db.dsn, dest)
}

// vacuumInto copies the SQLite database dsn opens into dest, through a
// temporary file beside it.
func vacuumInto(ctx context.Context, dsn, dest string) error {
	tmp := filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp")
	// VACUUM INTO refuses a file that exists and is not empty: a copy
	// an earlier run left behind when it was stopped half-way is stale.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy the database to %s: %w", dest, err)
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(dest))
	return nil
}

// CheckBackup opens the SQLite file at path and checks that it is whole
// (PRAGMA integrity_check) and a Herald database (it has the migrations'
// version table).
func CheckBackup(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer conn.Close()
	var result string
	if err := conn.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&result); err != nil {
		return fmt.Errorf("%s is not a SQLite database: %w", path, err)
	}
	if result != "ok" {
		return fmt.Errorf("%s fails SQLite's integrity check: %s", path, result)
	}
	var tables int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&tables); err != nil {
		return err
	}
	if tables == 0 {
		return fmt.Errorf("%s is a SQLite database but not Herald's: it has no schema_migrations table", path)
	}
	return nil
}

// Restore puts the backup at src in place of the SQLite database at dest,
// refusing with ErrServerRunning while a server holds dest's lock
// (LockServer), which it holds itself meanwhile. The backup is checked
// first (CheckBackup) and copied, never moved, so it stays a backup. The
// database it replaces is kept beside it, its files renamed together
// (dest.before-restore, with its -wal and -shm) so that it still opens
// whole; the last restore's is replaced. The database's own -wal and -shm
// go with it: left behind, SQLite would apply the old WAL to the restored
// file.
func Restore(ctx context.Context, src, dest string) (replaced string, err error) {
	dest = filePath(dest)
	unlock, err := LockServer(dest)
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := CheckBackup(ctx, src); err != nil {
		return "", err
	}
	tmp := dest + ".restoring"
	if err := vacuumInto(ctx, "file:"+src+"?mode=ro", tmp); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if _, err := os.Stat(dest); err == nil {
		replaced = dest + ".before-restore"
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(replaced + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			if err := os.Rename(dest+suffix, replaced+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", err
	}
	syncDir(filepath.Dir(dest))
	return replaced, nil
}

// filePath is the file a SQLite setting names, without the options a URI
// may add after "?".
func filePath(path string) string {
	file, _, _ := strings.Cut(path, "?")
	return file
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename in dir durable; where a directory cannot be
// synced (Windows) the rename stands as the file system keeps it.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

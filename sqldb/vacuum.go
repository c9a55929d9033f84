package sqldb

import (
	"context"
	"fmt"
	"strings"
)

// vacuumStep is how many free pages one incremental_vacuum gives back:
// 4 MB at 4 KB pages, a few milliseconds of the writer at a time.
const vacuumStep = 1024

// FreePages answers how many pages of the file are free and could be given
// back to the file system by Vacuum: 0 on PostgreSQL, and on a database
// created without auto_vacuum=INCREMENTAL (Open sets it for a new file),
// whose free pages are only ever reused.
func (db *DB) FreePages(ctx context.Context) (int, error) {
	if db.Postgres {
		return 0, nil
	}
	var mode int
	if err := db.w.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		return 0, err
	}
	var free int
	if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return 0, fmt.Errorf("free pages: %w", err)
	}
	return free, nil
}

// Vacuum follows a retention sweep that deleted rows of tables. On SQLite
// a deleted row's page is free at once, and Vacuum gives up to unused of
// the file's free pages back to the file system, in steps of vacuumStep,
// each a write of its own; the sweep passes the pages no write reused
// since the sweep before. On PostgreSQL a deleted row's space is reused
// only once a vacuum has passed, so Vacuum vacuums tables: autovacuum
// would too, but only when the server runs it, and up to its naptime
// later.
func (db *DB) Vacuum(ctx context.Context, unused int, tables []string) error {
	if db.Postgres {
		if len(tables) == 0 {
			return nil
		}
		// Names, not values: the sweep's own tables, never a request's.
		if _, err := db.r.ExecContext(ctx, `VACUUM `+strings.Join(tables, ", ")); err != nil {
			return fmt.Errorf("vacuum %s: %w", strings.Join(tables, ", "), err)
		}
		return nil
	}
	free, err := db.FreePages(ctx)
	if err != nil {
		return err
	}
	for left := min(unused, free); left > 0 && ctx.Err() == nil; left -= vacuumStep {
		if _, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, min(left, vacuumStep))); err != nil {
			return fmt.Errorf("incremental vacuum: %w", err)
		}
	}
	return nil
}

package sqldb

import (
	"context"
	"fmt"
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

// Vacuum gives up to pages of the file's free pages back to the file
// system, in steps of vacuumStep, each a write of its own; a retention
// sweep calls it with the pages no write reused since the sweep before.
// PostgreSQL has no such step: its autovacuum makes the dead rows' space
// reusable.
func (db *DB) Vacuum(ctx context.Context, pages int) error {
	free, err := db.FreePages(ctx)
	if err != nil {
		return err
	}
	for left := min(pages, free); left > 0 && ctx.Err() == nil; left -= vacuumStep {
		if _, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, min(left, vacuumStep))); err != nil {
			return fmt.Errorf("incremental vacuum: %w", err)
		}
	}
	return nil
}

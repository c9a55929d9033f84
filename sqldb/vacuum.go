package sqldb

import (
	"context"
	"fmt"
)

// vacuumStep is how many free pages one incremental_vacuum gives back:
// 4 MB at 4 KB pages, a few milliseconds of the writer at a time.
const vacuumStep = 1024

// Vacuum gives the file's free pages back to the file system in steps of
// vacuumStep, each a write of its own, when the database was created with
// auto_vacuum=INCREMENTAL (Open sets it for a new file); a retention sweep
// calls it after removing rows. A database created before keeps its free
// pages for new rows; docs/retention.md says how to convert it. PostgreSQL
// has no such step: its autovacuum makes the dead rows' space reusable.
func (db *DB) Vacuum(ctx context.Context) error {
	if db.Postgres {
		return nil
	}
	var mode int
	if err := db.w.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		return err
	}
	var free int
	if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return fmt.Errorf("free pages: %w", err)
	}
	// As many steps as the pages free now need: pages freed meanwhile wait
	// for the next sweep, and a step that frees nothing cannot loop.
	for steps := (free + vacuumStep - 1) / vacuumStep; steps > 0 && ctx.Err() == nil; steps-- {
		if _, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumStep)); err != nil {
			return fmt.Errorf("incremental vacuum: %w", err)
		}
	}
	return nil
}

package sqldb

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// CopyFrom replaces the SQLite database's contents with src's, page by
// page through SQLite's online backup API, on the writer's connection so
// that every connection of db sees the copy. Tests use it to start each
// database from one migrated once, rather than running every migration
// again.
func (db *DB) CopyFrom(ctx context.Context, src *DB) error {
	if db.Postgres || src.Postgres {
		return errors.New("copy a database: SQLite only")
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(srcURI string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("copy a database: the driver's connection (%T) cannot restore", dc)
		}
		b, err := r.NewRestore(src.dsn)
		if err != nil {
			return fmt.Errorf("copy a database: %w", err)
		}
		for {
			more, err := b.Step(-1)
			if err != nil {
				b.Finish()
				return fmt.Errorf("copy a database: %w", err)
			}
			if !more {
				return b.Finish()
			}
		}
	})
}

package subscribers_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestMigrations_UpDown proves 000002's down file undoes its up file: the
// tables, index and triggers go away, and the up file applies again.
func TestMigrations_UpDown(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // open
	t.Cleanup(func() { db.Close() })
	objects := func() int {
		var n int
		is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'subscribers%'`).Scan(&n)) // count schema objects
		return n
	}
	is.NoErr(sqldb.Migrate(db, migrations.FS)) // up
	up := objects()
	is.True(up > 0)                                // tables, indexes, triggers exist
	is.NoErr(sqldb.MigrateDown(db, migrations.FS)) // down
	is.Equal(objects(), 0)                         // nothing of subscribers left
	is.NoErr(sqldb.Migrate(db, migrations.FS))     // up again
	is.Equal(objects(), up)                        // the same schema
}

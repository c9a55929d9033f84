package messaging_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestMigrations runs every migration up, down and up again, proving that
// 000005's down file undoes its up file.
func TestMigrations(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // database opened
	t.Cleanup(func() { db.Close() })
	is.NoErr(sqldb.Migrate(db, migrations.FS))     // up
	is.NoErr(sqldb.MigrateDown(db, migrations.FS)) // down
	var n int
	is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages%'`).Scan(&n))
	is.Equal(n, 0)                             // the table and its indexes are gone
	is.NoErr(sqldb.Migrate(db, migrations.FS)) // and up again
}

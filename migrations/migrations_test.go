package migrations_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestMigrations runs every migration up, every one down, and up again, so a
// down file that forgets a table or an up file that cannot be re-applied fails.
func TestMigrations(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // open
	defer db.Close()

	is.NoErr(sqldb.Migrate(db, migrations.FS))     // all up
	is.True(tableCount(t, db) > 0)                 // tables exist
	is.NoErr(sqldb.MigrateDown(db, migrations.FS)) // all down
	is.Equal(tableCount(t, db), 0)                 // nothing left but golang-migrate's version table
	is.NoErr(sqldb.Migrate(db, migrations.FS))     // up again from scratch
}

func tableCount(t *testing.T, db *sqldb.DB) int {
	t.Helper()
	return count(t, db, `SELECT count(*) FROM sqlite_schema
		WHERE type IN ('table', 'index', 'trigger', 'view') AND name NOT LIKE 'sqlite_%' AND tbl_name != 'schema_migrations'`)
}

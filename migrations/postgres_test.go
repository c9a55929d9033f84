package migrations_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestPostgres_SameVersion fails when a migration was added for one
// database and not the other: both folders must end at the same version.
func TestPostgres_SameVersion(t *testing.T) {
	latest := func(dir string) string {
		names, err := fs.Glob(migrations.FS, dir+"*.up.sql")
		if err != nil || len(names) == 0 {
			t.Fatalf("no migrations in %q: %v", dir, err)
		}
		slices.Sort(names)
		name := names[len(names)-1][len(dir):]
		return name[:strings.IndexByte(name, '_')]
	}
	if s, p := latest(""), latest("postgres/"); s != p {
		t.Errorf("SQLite's migrations end at %s, PostgreSQL's at %s: add the twin in migrations/postgres/", s, p)
	}
}

// siteOnly are the tables one database has and the other has not: SQLite's
// substring index (PostgreSQL uses pg_trgm), and the instances that beat on
// a shared database.
var siteOnly = map[string]bool{"subscriber_suffixes": true, "suffix_positions": true, "instances": true, "schema_migrations": true}

// TestPostgres_SameTables checks that the PostgreSQL migrations build the
// tables and columns the SQLite ones do, so one set of SQL serves both.
func TestPostgres_SameTables(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("needs TEST_DATABASE_URL")
	}
	ctx := context.Background()
	lite, err := sqldb.Open(ctx, sqldb.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if err := sqldb.Migrate(lite, migrations.FS); err != nil {
		t.Fatal(err)
	}
	pg := sqldbtest.NewDB(t)

	want := columns(t, lite, `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	got := columns(t, pg, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema()`)
	if !slices.Equal(got, want) {
		t.Errorf("PostgreSQL's tables differ from SQLite's\n got %v\nwant %v", got, want)
	}
}

// columns is "table.column" for each row of query, sorted, site-only tables
// left out.
func columns(t *testing.T, db *sqldb.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		if !siteOnly[table] {
			out = append(out, fmt.Sprintf("%s.%s", table, column))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPostgres_SweptTablesAutovacuum: every table retention deletes from
// is vacuumed once 1% of it is dead, so the space a sweep frees is reused
// within minutes instead of after a fifth of the table, and keeps the
// empty pages at its end for the next rows.
func TestPostgres_SweptTablesAutovacuum(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("needs TEST_DATABASE_URL")
	}
	pg := sqldbtest.NewDB(t)
	for _, table := range []string{"notifications", "jobs", "execution_details", "notification_contexts",
		"notification_topics", "activity_transactions", "messages", "message_payloads", "stored_values"} {
		var options string
		err := pg.QueryRowContext(context.Background(), `SELECT coalesce(array_to_string(reloptions, ','), '')
			FROM pg_class WHERE oid = to_regclass(?)`, table).Scan(&options)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, want := range []string{"autovacuum_vacuum_scale_factor=0.01", "vacuum_truncate=false"} {
			if !strings.Contains(options, want) {
				t.Errorf("%s: reloptions %q, want %s", table, options, want)
			}
		}
	}
}

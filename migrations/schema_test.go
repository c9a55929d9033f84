package migrations_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

var update = flag.Bool("update", false, "rewrite schema.sql from the migrations")

// TestSchema checks that schema.sql is the schema every migration builds, as
// SQLite reports it, so that the file a reader opens to see the tables is
// true. After adding a migration:
//
//	go test ./migrations -run TestSchema -update
func TestSchema(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		t.Fatal(err)
	}
	got := currentSchema(t, db)
	if *update {
		if err := os.WriteFile("schema.sql", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatalf("%v; write it with: go test ./migrations -run TestSchema -update", err)
	}
	if string(want) != got {
		t.Fatalf("schema.sql differs from the schema the migrations build; regenerate it with:\n\tgo test ./migrations -run TestSchema -update\nwant:\n%s", got)
	}
}

// currentSchema is every table, index, trigger and view of db as SQLite
// stores its statement, grouped by table, the table first, in name order:
// an order that does not change when a migration rebuilds a table.
// golang-migrate's version table and SQLite's own are left out.
func currentSchema(t *testing.T, db *sqldb.DB) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT sql FROM sqlite_schema
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND tbl_name != 'schema_migrations'
		ORDER BY tbl_name, type != 'table', type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("-- The schema every migration builds, as SQLite reports it. Generated:\n")
	b.WriteString("-- go test ./migrations -run TestSchema -update\n")
	for rows.Next() {
		var sql string
		if err := rows.Scan(&sql); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n" + sql + ";\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

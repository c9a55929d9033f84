package sqldbtest

import (
	"context"
	"strings"
	"testing"
)

// QueryPlan answers SQLite's plan for query on a fresh database migrated to
// the latest schema, its steps joined by "; ". SQLite has no statistics
// there, as on a database Herald created, so a test can check which index
// a hot query reads through: a plan that looks right on a small table can
// read a whole environment on a large one.
func QueryPlan(t testing.TB, query string, args ...any) string {
	t.Helper()
	rows, err := NewDB(t).QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

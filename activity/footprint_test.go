package activity_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// footprint is the bytes each table and index of db holds, by name, as
// SQLite's dbstat virtual table counts them (pages in use, headers and
// free space within them included), and their sum.
func footprint(t testing.TB, db *sqldb.DB) (map[string]int64, int64) {
	return dbstat(t, db, "pgsize")
}

// dbstat sums a column of SQLite's dbstat virtual table by table or index
// name: pgsize for the pages held, payload for the bytes of the records.
func dbstat(t testing.TB, db *sqldb.DB, column string) (map[string]int64, int64) {
	t.Helper()
	sqldbtest.SQLiteOnly(t, "measures pages through SQLite's dbstat table")
	rows, err := db.QueryContext(context.Background(), `SELECT name, sum(`+column+`) FROM dbstat GROUP BY name`)
	if err != nil {
		t.Fatalf("dbstat: %v", err)
	}
	defer rows.Close()
	out, total := map[string]int64{}, int64(0)
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		out[name], total = n, total+n
	}
	return out, total
}

// maxFootprint is the most a single-step in-app notification may add: a
// guard against growth (docs/retention.md says where the bytes go). The
// inbox's message states (archived, snoozed, first seen) take part of each
// message's record, which the messages table's page fill multiplies.
const maxFootprint = 2100

// TestFootprint_InAppNotification measures the bytes on disk that one
// single-step in-app notification adds, table by table and index by
// index, and logs the breakdown.
func TestFootprint_InAppNotification(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "SQLite's dbstat measures the pages")
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}, your order {{ payload.orderId }} has shipped.")
	const subscribers, n = 50, 1000
	for i := range subscribers {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"sub-%d","email":"sub-%d@example.com","firstName":"Ada"}`, i, i))
	}
	before, beforeTotal := footprint(t, srv.App.DB)
	recBefore, _ := dbstat(t, srv.App.DB, "payload")
	var events []string
	for i := range n {
		events = append(events, fmt.Sprintf(`{"name":"hello","to":"sub-%d","payload":{"name":"Ada","orderId":"A-%06d"}}`, i%subscribers, i))
	}
	for i := 0; i < n; i += 100 {
		apptest.MustCreate(t, srv.Dev, "/v1/events/trigger/bulk", `{"events":[`+strings.Join(events[i:i+100], ",")+`]}`)
	}
	platformtest.Eventually(t, 30*time.Second, func() bool {
		var c int
		srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM messages`).Scan(&c)
		return c == n
	}, "every message delivered")
	after, afterTotal := footprint(t, srv.App.DB)
	recAfter, _ := dbstat(t, srv.App.DB, "payload")
	var names []string
	for name := range after {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return after[names[i]]-before[names[i]] > after[names[j]]-before[names[j]] })
	var b strings.Builder
	for _, name := range names {
		if d := after[name] - before[name]; d != 0 {
			fmt.Fprintf(&b, "\n  %-40s %6d B in pages, %6d B of records", name, d/n, (recAfter[name]-recBefore[name])/n)
		}
	}
	per := (afterTotal - beforeTotal) / n
	t.Logf("bytes per single-step in-app notification: %d%s", per, b.String())
	is.True(per <= maxFootprint) // bytes per single-step in-app notification
}

package sqldb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestAnalyzeGrown_OK: a table that grew from empty without being
// analysed is analysed once, so plans PostgreSQL cached while it was
// empty are made again; one analysed already, or still small, is left to
// autovacuum.
func TestAnalyzeGrown_OK(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("SQLite's planner reads no statistics of PostgreSQL's kind")
	}
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	for _, q := range []string{
		`CREATE TABLE an_grown (id BIGINT PRIMARY KEY)`,
		`CREATE TABLE an_small (id BIGINT PRIMARY KEY)`,
		`INSERT INTO an_grown SELECT generate_series(1, 5000)`,
		`INSERT INTO an_small SELECT generate_series(1, 10)`,
	} {
		_, err := db.ExecContext(ctx, q)
		is.NoErr(err) // set up
	}
	// A backend reports its changes to the server's statistics when it goes
	// idle, up to ten seconds after its transaction's end.
	var analysed []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var err error
		analysed, err = db.AnalyzeGrown(ctx)
		is.NoErr(err) // analysed
		if len(analysed) > 0 {
			break
		}
	}
	is.True(slices.Contains(analysed, "an_grown"))  // the grown table is analysed
	is.True(!slices.Contains(analysed, "an_small")) // the small one is not
	var tuples float64
	is.NoErr(db.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE relname = 'an_grown'`).Scan(&tuples)) // read
	is.Equal(tuples, float64(5000))                                                                              // its statistics are the table's
	again, err := db.AnalyzeGrown(ctx)
	is.NoErr(err)                                // looked again
	is.True(!slices.Contains(again, "an_grown")) // analysed once only
}

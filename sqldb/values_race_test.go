package sqldb_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestStoredValues_SweepNeverTakesANamedValue races, on a shared
// PostgreSQL database, processes that store a value and name it in the
// same transaction (as a trigger stores its payload and names it in its
// notifications) against processes sweeping the values nothing names, as
// the retention sweep does. Each round is an hour and more after the one
// before, so every value stored before it is past the grace and the sweep
// may take it unless it is named: the writers touching one while a sweep
// deletes it is the race StoreValue's locking settles. A checker reads,
// throughout, whether any committed row names a value that is gone; at
// the end of each round every row's value must read back whole.
func TestStoredValues_SweepNeverTakesANamedValue(t *testing.T) {
	is := is.New(t)
	dbs := sqldbtest.NewSharedDBs(t, 3) // writers, sweepers and the checker each as their own process
	writer, sweeper, checker := dbs[0], dbs[1], dbs[2]
	ctx := context.Background()
	_, err := writer.ExecContext(ctx, `CREATE TABLE race_refs (id TEXT PRIMARY KEY, value TEXT NOT NULL)`)
	is.NoErr(err)
	_, err = writer.ExecContext(ctx, `CREATE INDEX race_refs_values ON race_refs (value) WHERE value LIKE '@%'`)
	is.NoErr(err)
	refs := []sqldb.ValueRef{{Table: "race_refs", Column: "value"}}

	// Few values, so that writers and sweepers meet on the same ones, and
	// enough that a round leaves some unnamed.
	var bodies [][]byte
	for i := range 16 {
		size := sqldb.ValueThreshold
		if i%4 == 0 {
			size = 64 << 10 // large enough that StoreValue looks before it writes
		}
		bodies = append(bodies, []byte(fmt.Sprintf(`{"n":%d,"blob":"%s"}`, i, strings.Repeat("v", size))))
	}
	const (
		rounds  = 30
		writers = 8
		writes  = 4 // per writer and round
		sweeps  = 3 // sweeping processes
	)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var lost atomic.Int64
	var removed atomic.Int64
	lostRows := func(db *sqldb.DB) (n int64, err error) {
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM race_refs r
			WHERE NOT EXISTS (SELECT 1 FROM stored_values sv WHERE sv.id = r.value)`).Scan(&n)
		return n, err
	}
	for round := range rounds {
		// An hour and more on: whatever was stored before may go unless named.
		now := base.Add(time.Duration(round) * 2 * sqldb.ValueGrace)
		// Most rows go, leaving some values unnamed for the sweeps.
		_, err := writer.ExecContext(ctx, `DELETE FROM race_refs WHERE random() < 0.8`)
		is.NoErr(err)

		var wg, sweepers sync.WaitGroup
		stop := make(chan struct{})
		errs := make(chan error, writers+sweeps+1)
		for w := range writers {
			wg.Go(func() {
				for i := range writes {
					body := bodies[rand.IntN(len(bodies))]
					err := writer.RetryTx(ctx, func(tx *sql.Tx) error {
						key, err := writer.StoreValue(ctx, tx, "env", body, now)
						if err != nil {
							return err
						}
						_, err = tx.ExecContext(ctx, `INSERT INTO race_refs (id, value) VALUES ($1, $2)`,
							fmt.Sprintf("r%d-w%d-%d", round, w, i), key)
						return err
					})
					if err != nil {
						errs <- fmt.Errorf("store and name: %w", err)
						return
					}
				}
			})
		}
		for range sweeps {
			sweepers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					cursor := ""
					for {
						next, n, err := sweeper.SweepValues(ctx, "env", refs, now.Add(-sqldb.ValueGrace), cursor, 2)
						if err != nil && !sqldb.IsRetryable(err) {
							errs <- fmt.Errorf("sweep: %w", err)
							return
						}
						removed.Add(n)
						if cursor = next; cursor == "" {
							break
						}
					}
				}
			})
		}
		sweepers.Go(func() { // the checker
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := lostRows(checker)
				if err != nil {
					errs <- fmt.Errorf("check: %w", err)
					return
				}
				lost.Add(n)
			}
		})
		wg.Wait()
		close(stop)
		sweepers.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		n, err := lostRows(writer)
		is.NoErr(err)
		is.Equal(n, int64(0))           // no row names a value that is gone, once the round is over
		is.Equal(lost.Load(), int64(0)) // nor at any moment during it
		var short int
		is.NoErr(writer.QueryRowContext(ctx, `SELECT count(*) FROM race_refs WHERE length(`+sqldb.ValueColumn("value")+`) < $1`,
			sqldb.ValueThreshold).Scan(&short))
		is.Equal(short, 0) // every row reads its value whole
	}
	var named, stored int
	is.NoErr(writer.QueryRowContext(ctx, `SELECT count(*) FROM race_refs`).Scan(&named))
	is.NoErr(writer.QueryRowContext(ctx, `SELECT count(*) FROM stored_values`).Scan(&stored))
	t.Logf("%d rounds: the sweeps removed %d unnamed values; %d rows name %d values at the end", rounds, removed.Load(), named, stored)
	is.True(removed.Load() > 0) // the sweeps did take unnamed values: they raced the writers
}

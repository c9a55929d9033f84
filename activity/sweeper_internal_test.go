package activity

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestSweeper_YieldsToWaitingWrites: after a batch during which another
// write waited for the writer, the sweep pauses for sweepYield times the
// batch's duration; after one during which none did, it goes straight on.
func TestSweeper_YieldsToWaitingWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // opened
	defer db.Close()
	batches, done := 0, make(chan error, 1)
	sweep := func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
		batches++
		if batches == 1 {
			// Hold the writer until another write is waiting for it.
			_, release := sqldbtest.WriteTx(t, db)
			waits := db.WriterStats().WaitCount
			go func() { _, err := db.ExecContext(ctx, `SELECT 1`); done <- err }()
			for deadline := time.Now().Add(5 * time.Second); db.WriterStats().WaitCount == waits; {
				if time.Now().After(deadline) {
					t.Fatal("the other write never waited for the writer")
				}
				time.Sleep(time.Millisecond) // poll: it queues within microseconds
			}
			release(false)
		}
		if batches == 3 {
			return "", nil, nil
		}
		return "more", nil, nil
	}
	var pauses []time.Duration
	s := &Sweeper{DB: db, Tasks: []SweepTask{{Name: "t", Keep: time.Hour, Sweep: sweep}},
		wait: func(_ context.Context, d time.Duration) { pauses = append(pauses, d) }}
	is.NoErr(s.Sweep(ctx))   // swept
	is.NoErr(<-done)         // the waiting write ran
	is.Equal(batches, 3)     // every batch
	is.Equal(len(pauses), 1) // one pause, after the batch a write waited on
	is.True(pauses[0] > 0)   // as long as sweepYield times the batch
}

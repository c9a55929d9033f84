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
			makeWait(t, db, done)
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

// makeWait holds the writer until another write is waiting for it, then
// lets it go; that write's outcome goes to done.
func makeWait(t *testing.T, db *sqldb.DB, done chan<- error) {
	t.Helper()
	_, release := sqldbtest.WriteTx(t, db)
	waits := db.WriterStats().WaitCount
	go func() { _, err := db.ExecContext(context.Background(), `SELECT 1`); done <- err }()
	for deadline := time.Now().Add(5 * time.Second); db.WriterStats().WaitCount == waits; {
		if time.Now().After(deadline) {
			t.Fatal("the other write never waited for the writer")
		}
		time.Sleep(time.Millisecond) // poll: it queues within microseconds
	}
	release(false)
}

// TestSweeper_PausesAtMostHalfItsInterval: however busy the writer, a
// sweep's pauses for other writes add up to at most half of Every, so that
// its batches have the other half and it ends before the next sweep is
// due.
func TestSweeper_PausesAtMostHalfItsInterval(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // opened
	defer db.Close()
	const batches = 5
	done := make(chan error, batches)
	calls := 0
	sweep := func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
		calls++
		makeWait(t, db, done) // every batch makes a write wait
		if calls == batches {
			return "", nil, nil
		}
		return "more", nil, nil
	}
	var paused time.Duration
	pauses := 0
	s := &Sweeper{DB: db, Every: 20 * time.Millisecond, Tasks: []SweepTask{{Name: "t", Keep: time.Hour, Sweep: sweep}},
		wait: func(_ context.Context, d time.Duration) { paused += d; pauses++ }}
	is.NoErr(s.Sweep(ctx)) // swept
	for range batches {
		is.NoErr(<-done) // each waiting write ran
	}
	is.Equal(calls, batches)               // every batch ran
	is.True(pauses >= 1)                   // the sweep paused for the busy writer
	is.True(paused <= 10*time.Millisecond) // but for half its interval at most
}

// TestNextSweepBatch: a batch that held the writer under half of
// sweepBatchTime is followed by one twice as large, one that held it
// longer than sweepBatchTime by one half as large, within the bounds.
func TestNextSweepBatch(t *testing.T) {
	is := is.New(t)
	is.Equal(nextSweepBatch(500, time.Millisecond), 1000)               // quick: larger
	is.Equal(nextSweepBatch(500, 15*time.Millisecond), 500)             // about right: the same
	is.Equal(nextSweepBatch(500, 80*time.Millisecond), 250)             // slow: smaller
	is.Equal(nextSweepBatch(maxSweepBatch, 0), maxSweepBatch)           // never past the largest
	is.Equal(nextSweepBatch(minSweepBatch, time.Second), minSweepBatch) // never under the smallest
}

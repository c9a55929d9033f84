package activity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// A SweepTask removes the expired records of one kind, owned by one domain.
type SweepTask struct {
	// Name names the records in the log and the counts ("in-app messages").
	Name string
	// Keep is how long records are kept; 0 keeps them forever.
	Keep time.Duration
	// Sweep removes, in one write transaction, at most limit records
	// created before before and not pending, starting after cursor ("" at
	// first). It answers how many of each table it removed and the cursor
	// to go on from, "" when nothing older is left.
	Sweep func(ctx context.Context, before time.Time, cursor string, limit int) (next string, removed map[string]int64, err error)
}

// Sweeper runs retention: every Every it sweeps each task in batches, one
// write transaction each, so that the writer's other transactions (the
// worker's group commits) run between them, backing off while they wait
// for it, then gives back to the file system the free pages no write
// reused since the sweep before. A crash or a stop mid-sweep rolls back
// at most the batch under way, which the next sweep deletes again.
type Sweeper struct {
	DB     *sqldb.DB
	Tasks  []SweepTask
	Now    func() time.Time // nil means time.Now
	Every  time.Duration    // 0 means an hour
	Batch  int              // records per batch; 0 sizes each batch to hold the writer about sweepBatchTime
	Logger *slog.Logger

	mu      sync.Mutex
	removed map[string]int64 // by table, since the start

	// wait, when set, replaces the pause after a batch that made other
	// writes wait; tests record it.
	wait func(ctx context.Context, d time.Duration)
}

// SweepEvery is how often records kept for the given durations are swept:
// a tenth of the shortest, so none outlives its retention by more than a
// tenth, between a minute and an hour; an hour when every one is kept
// forever (0).
func SweepEvery(keep ...time.Duration) time.Duration {
	every := time.Hour
	for _, k := range keep {
		if k > 0 {
			every = min(every, k/10)
		}
	}
	return max(every, time.Minute)
}

// yield pauses for d, or until ctx is done.
func (s *Sweeper) yield(ctx context.Context, d time.Duration) {
	if s.wait != nil {
		s.wait(ctx, d)
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Removed answers how many rows of each table retention has removed since
// the start, for /metrics.
func (s *Sweeper) Removed() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.removed)
}

// Start sweeps now and then every Every until ctx is done; the returned
// function waits for the sweep under way to stop. A sweep that takes
// longer than Every is followed by the next at once.
func (s *Sweeper) Start(ctx context.Context) func(context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(s.every())
		defer tick.Stop()
		for {
			// Instances sharing a database take turns: one sweep at a time.
			if _, err := s.DB.Exclusive(ctx, "retention sweep", s.Sweep); err != nil && ctx.Err() == nil {
				s.logger().Error("retention sweep", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func(stop context.Context) {
		select {
		case <-done:
		case <-stop.Done():
		}
	}
}

func (s *Sweeper) every() time.Duration {
	if s.Every <= 0 {
		return time.Hour
	}
	return s.Every
}

// Sweep runs every task once to the end, logs what it removed, and has
// the space of the rows it deleted reused (sqldb.DB.Vacuum): on SQLite it
// gives back to the file system only the pages that were free when it
// began, which no write reused since the sweep before, while the pages it
// frees now are kept for the writes until the next, so that a database at
// a steady rate keeps a steady size instead of shrinking at each sweep and
// growing back.
func (s *Sweeper) Sweep(ctx context.Context) error {
	unused, err := s.DB.FreePages(ctx)
	if err != nil {
		return err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	p := &sweepPass{removed: map[string]int64{}, at: now(), budget: s.every() / 2}
	var errs []error
	for _, task := range s.Tasks {
		if task.Keep <= 0 {
			continue
		}
		if err := s.sweepTask(ctx, task, p); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", task.Name, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	tables := slices.Sorted(maps.Keys(p.removed))
	if len(tables) > 0 {
		args := []any{}
		for _, table := range tables {
			args = append(args, table, p.removed[table])
		}
		s.logger().Info("retention sweep removed expired records", args...)
	}
	if err := s.DB.Vacuum(ctx, unused, tables); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// A sweepPass is one sweep's progress.
type sweepPass struct {
	removed map[string]int64 // by table
	at      time.Time        // when it began, on the sweeper's clock
	// budget is how long the pass may pause for the writer's other
	// writes in all: half the time to the next sweep, so a pass whose
	// batches need up to the other half still ends before the next is
	// due, however busy the writer.
	budget time.Duration
}

// sweepTask runs one task's batches to the end. After a batch during
// which another write waited for the writer, the writer is busy: the
// sweep then gives it back for sweepYield times as long as the batch
// took, within the pass's budget, so it takes a tenth of a busy writer's
// time while it can and all of an idle one's.
func (s *Sweeper) sweepTask(ctx context.Context, task SweepTask, p *sweepPass) error {
	before, cursor := p.at.Add(-task.Keep), ""
	batch := cmp.Or(s.Batch, firstSweepBatch)
	for {
		waits, started := s.DB.WriterStats().WaitCount, time.Now()
		next, removed, err := task.Sweep(ctx, before, cursor, batch)
		if err != nil {
			return err
		}
		took := time.Since(started)
		s.count(p.removed, removed)
		if next == "" {
			return nil
		}
		cursor = next
		if s.Batch <= 0 {
			batch = nextSweepBatch(batch, took)
		}
		if s.DB.WriterStats().WaitCount > waits && p.budget > 0 {
			d := min(sweepYield*took, p.budget)
			p.budget -= d
			s.yield(ctx, d)
		}
	}
}

// Batches are sized to hold the writer about sweepBatchTime each: long
// enough that a sweep's statements cost little per record, short enough
// that a delivery waiting behind one is not held up for long. The first
// is firstSweepBatch records; each next one doubles or halves, between
// minSweepBatch and maxSweepBatch, as the last took under half or over
// sweepBatchTime.
const (
	sweepBatchTime  = 20 * time.Millisecond
	firstSweepBatch = 500
	minSweepBatch   = 50
	maxSweepBatch   = 5000
)

// nextSweepBatch sizes the batch after one of batch records that took
// took.
func nextSweepBatch(batch int, took time.Duration) int {
	switch {
	case took < sweepBatchTime/2:
		return min(2*batch, maxSweepBatch)
	case took > sweepBatchTime:
		return max(batch/2, minSweepBatch)
	}
	return batch
}

func (s *Sweeper) count(pass, removed map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == nil {
		s.removed = map[string]int64{}
	}
	for table, n := range removed {
		if n > 0 {
			pass[table] += n
			s.removed[table] += n
		}
	}
}

// sweepYield is how many times a batch's duration the sweep waits after
// it when other writes waited for the writer meanwhile.
const sweepYield = 9

func (s *Sweeper) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

package activity

import (
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

// Sweeper runs retention: every Every it sweeps each task in batches of
// Batch records, one write transaction each, so that the writer's other
// transactions (the worker's group commits) run between them, backing off
// while they wait for it, then gives the freed pages back to the file
// system in small steps. A crash or a
// stop mid-sweep rolls back at most the batch under way, which the next
// sweep deletes again.
type Sweeper struct {
	DB     *sqldb.DB
	Tasks  []SweepTask
	Now    func() time.Time // nil means time.Now
	Every  time.Duration    // 0 means an hour
	Batch  int              // 0 means 500
	Logger *slog.Logger

	mu      sync.Mutex
	removed map[string]int64 // by table, since the start

	// wait, when set, replaces the pause after a batch that made other
	// writes wait; tests record it.
	wait func(ctx context.Context, d time.Duration)
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
// function waits for the sweep under way to stop.
func (s *Sweeper) Start(ctx context.Context) func(context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := s.Every
		if every <= 0 {
			every = time.Hour
		}
		tick := time.NewTicker(every)
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

// Sweep runs every task once to the end, then returns free pages to the
// file system, and logs what it removed.
func (s *Sweeper) Sweep(ctx context.Context) error {
	now, batch := time.Now, s.Batch
	if s.Now != nil {
		now = s.Now
	}
	if batch <= 0 {
		batch = 500
	}
	pass := map[string]int64{}
	var errs []error
	for _, task := range s.Tasks {
		if task.Keep <= 0 {
			continue
		}
		before := now().Add(-task.Keep)
		cursor := ""
		for {
			waits, started := s.DB.WriterStats().WaitCount, time.Now()
			next, removed, err := task.Sweep(ctx, before, cursor, batch)
			if err != nil {
				errs = append(errs, fmt.Errorf("sweep %s: %w", task.Name, err))
				break
			}
			s.count(pass, removed)
			if next == "" {
				break
			}
			cursor = next
			// A write that waited for the writer while the batch held it
			// means the writer is busy: the sweep then gives it back for
			// sweepYield times as long as the batch took, so it takes at
			// most a tenth of a busy writer's time, and an idle one's all.
			if s.DB.WriterStats().WaitCount > waits {
				s.yield(ctx, sweepYield*time.Since(started))
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(pass) > 0 {
		args := []any{}
		for _, table := range slices.Sorted(maps.Keys(pass)) {
			args = append(args, table, pass[table])
		}
		s.logger().Info("retention sweep removed expired records", args...)
		if err := s.DB.Vacuum(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

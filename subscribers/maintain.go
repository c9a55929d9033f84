package subscribers

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// The substring index, subscribers_fts, is an FTS5 index: each write
// transaction adds a small segment of it, and FTS5 merges segments only a
// few at a time, so after an import or a busy spell a search walks many
// segments. Merged into one, the same searches cost 25–50% less
// (BenchmarkReads at 100,000 and 1,000,000 subscribers). Merging rewrites
// the whole index, about three seconds of writing at a million subscribers,
// so it runs in the background, in small steps, once subscriber writes have
// paused, and at most once per mergeEvery.
const (
	mergeQuiet = time.Second      // no subscriber write for this long before merging
	mergeEvery = 10 * time.Minute // the least time between two merges
	mergePages = 256              // index pages one step writes: milliseconds of the writer
)

// StartIndexMaintenance keeps the substring index merged until ctx is done
// or the returned stop is called; stop waits for the step under way, or
// until its own context is done.
func (s *Store) StartIndexMaintenance(ctx context.Context, logger *slog.Logger) (stop func(context.Context)) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.maintainIndex(ctx, logger)
	}()
	return func(wait context.Context) {
		cancel()
		select {
		case <-done:
		case <-wait.Done():
		}
	}
}

func (s *Store) maintainIndex(ctx context.Context, logger *slog.Logger) {
	tick := time.NewTicker(mergeQuiet)
	defer tick.Stop()
	gens := &cacheFor(s.db).gen
	var m mergePolicy
	m.seen = gens.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			gen := gens.Load()
			if !m.due(gen, now) {
				continue
			}
			if _, err := s.MergeIndex(ctx); err != nil {
				if ctx.Err() == nil {
					logger.Warn("merge the subscriber search index", "error", err)
				}
				continue
			}
			m.merged(gen, now)
		}
	}
}

// mergePolicy decides, on each tick, whether the index is merged now.
type mergePolicy struct {
	seen    uint64    // the write generation at the last tick
	done    bool      // a merge has run
	doneGen uint64    // the generation it ran at
	doneAt  time.Time // and when
}

// due reports whether to merge at now, the write generation being gen: the
// writes have paused for a tick, the index changed since the last merge (or
// none has run since the start), and the last one is mergeEvery old.
func (m *mergePolicy) due(gen uint64, now time.Time) bool {
	quiet := gen == m.seen
	m.seen = gen
	if !quiet || !m.done {
		return quiet
	}
	return gen != m.doneGen && now.Sub(m.doneAt) >= mergeEvery
}

func (m *mergePolicy) merged(gen uint64, now time.Time) {
	m.done, m.doneGen, m.doneAt = true, gen, now
}

// MergeIndex merges the substring index into one segment, in steps of
// mergePages pages, each a short write transaction of its own so that
// other writes go on between them, and reports whether there was anything
// to merge.
func (s *Store) MergeIndex(ctx context.Context) (merged bool, err error) {
	for {
		more, err := s.mergeStep(ctx)
		if err != nil || !more {
			return merged, err
		}
		merged = true
	}
}

// mergeStep runs one FTS5 'merge' step. A negative page count merges every
// segment, of every level, into one. FTS5 documents that a step that did
// any work changed at least two rows.
func (s *Store) mergeStep(ctx context.Context) (more bool, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var before, after int64
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO subscribers_fts (subscribers_fts, rank) VALUES ('merge', ?)`, -mergePages); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return err
		}
		more = after-before >= 2
		return nil
	})
	return more, err
}

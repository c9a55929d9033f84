package sqldb

import (
	"context"
	"database/sql"
	"sync"
)

// GroupCommit commits writes that arrive together in one transaction: the
// writer is spent on one commit for many small writes that would each
// have taken a transaction of their own, and each caller still returns
// only once its write is durable. The zero value is not usable; see
// NewGroupCommit.
type GroupCommit struct {
	db  *DB
	max int // the most writes one transaction holds

	// Prepare, when set, runs first in each transaction with the items
	// of its writes (DoItem's; nil for Do), in their order, so that what
	// each write would send in a statement of its own goes in one
	// statement for all. When a batch fails and its writes run alone, it
	// runs again for each, with that write's item alone; the items' own
	// state, which it may set for their writes to read, must be reset by
	// each run. Set it before the first Do.
	Prepare func(ctx context.Context, tx *sql.Tx, items []any) error

	mu      sync.Mutex
	waiting []*groupWrite
	running bool // a goroutine is committing the waiting writes
}

type groupWrite struct {
	fn   func(context.Context, *sql.Tx) error
	item any // for Prepare
	done chan error
}

// NewGroupCommit returns a group commit on db of at most max writes a
// transaction.
func NewGroupCommit(db *DB, max int) *GroupCommit {
	return &GroupCommit{db: db, max: max}
}

// Do runs fn in a transaction shared with the writes waiting beside it and
// returns once that transaction has committed or fn failed. fn must be
// safe to run again on a fresh transaction: when one write of a batch
// fails, the batch is rolled back and each write is run alone, so that a
// failure fails only its own caller.
func (g *GroupCommit) Do(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	return g.DoItem(ctx, nil, fn)
}

// DoItem is Do, with item passed to Prepare before fn runs.
func (g *GroupCommit) DoItem(ctx context.Context, item any, fn func(context.Context, *sql.Tx) error) error {
	w := &groupWrite{fn: fn, item: item, done: make(chan error, 1)}
	g.mu.Lock()
	g.waiting = append(g.waiting, w)
	if !g.running {
		g.running = true
		go g.run(context.WithoutCancel(ctx))
	}
	g.mu.Unlock()
	return <-w.done
}

// run commits the waiting writes, a batch per transaction, until none waits.
func (g *GroupCommit) run(ctx context.Context) {
	for {
		g.mu.Lock()
		n := min(len(g.waiting), g.max)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := g.waiting[:n:n]
		g.waiting = g.waiting[n:]
		if len(g.waiting) == 0 {
			g.waiting = nil
		}
		g.mu.Unlock()
		g.commit(ctx, batch)
	}
}

// commit writes batch in one transaction, or, when that fails, each write
// in a transaction of its own. RetryTx: on a shared database two
// instances' batches may deadlock on the rows they write.
func (g *GroupCommit) commit(ctx context.Context, batch []*groupWrite) {
	err := g.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := g.prepare(ctx, tx, batch); err != nil {
			return err
		}
		for _, w := range batch {
			if err := w.fn(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, w := range batch {
			w.done <- g.db.RetryTx(ctx, func(tx *sql.Tx) error {
				if err := g.prepare(ctx, tx, []*groupWrite{w}); err != nil {
					return err
				}
				return w.fn(ctx, tx)
			})
		}
		return
	}
	for _, w := range batch {
		w.done <- err
	}
}

// prepare runs Prepare, when set, on batch's items.
func (g *GroupCommit) prepare(ctx context.Context, tx *sql.Tx, batch []*groupWrite) error {
	if g.Prepare == nil {
		return nil
	}
	items := make([]any, len(batch))
	for i, w := range batch {
		items[i] = w.item
	}
	return g.Prepare(ctx, tx, items)
}

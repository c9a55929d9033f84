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

	mu      sync.Mutex
	waiting []*groupWrite
	running bool // a goroutine is committing the waiting writes
}

type groupWrite struct {
	fn   func(context.Context, *sql.Tx) error
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
	w := &groupWrite{fn: fn, done: make(chan error, 1)}
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
		for _, w := range batch {
			if err := w.fn(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, w := range batch {
			w.done <- g.db.RetryTx(ctx, func(tx *sql.Tx) error { return w.fn(ctx, tx) })
		}
		return
	}
	for _, w := range batch {
		w.done <- err
	}
}

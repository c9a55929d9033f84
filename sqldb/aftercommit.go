package sqldb

import (
	"database/sql"
	"sync"
)

// afterCommits holds, per open transaction of DB.Tx, what runs once it
// commits. A write that others must hear about (an inbox's live event) is
// often made inside a transaction a caller of another domain owns, such as
// the worker's group commit: announced before the commit, a client would
// read the old state; announced after a rollback, a change that never was.
type afterCommits struct {
	mu  sync.Mutex
	fns map[*sql.Tx][]func()
}

func (a *afterCommits) begin(tx *sql.Tx) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fns == nil {
		a.fns = map[*sql.Tx][]func(){}
	}
	a.fns[tx] = nil
}

func (a *afterCommits) end(tx *sql.Tx) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.fns, tx)
}

func (a *afterCommits) run(tx *sql.Tx) {
	a.mu.Lock()
	fns := a.fns[tx]
	delete(a.fns, tx)
	a.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// AfterCommit runs fn once tx, a transaction of db.Tx, has committed, and
// never if it rolls back. For a transaction Tx did not begin, fn runs now.
func (db *DB) AfterCommit(tx *sql.Tx, fn func()) {
	a := &db.commits
	a.mu.Lock()
	fns, ok := a.fns[tx]
	if ok {
		a.fns[tx] = append(fns, fn)
	}
	a.mu.Unlock()
	if !ok {
		fn()
	}
}

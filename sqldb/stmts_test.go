package sqldb_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// Many read transactions, more than the pool has connections, each running
// queries the cache has not seen: preparing must never wait for a
// connection that only the waiting callers could free.
func TestReadStmts_InsideTransactions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, filepath.Join(t.TempDir(), "stmts.db"))
	is.NoErr(err) // open
	defer db.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 32*20)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := db.BeginSnapshot(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer tx.Rollback()
			for j := range 20 {
				var n int
				if err := db.TxQueryRow(ctx, tx, fmt.Sprintf("SELECT %d + ?", j), g).Scan(&n); err != nil || n != j+g {
					errs <- fmt.Errorf("query %d: %d, %v", j, n, err)
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("read transactions deadlocked on prepared statements")
	}
	close(errs)
	for err := range errs {
		is.NoErr(err) // every query answers
	}
	// Outside a transaction too, and once prepared the same query is
	// served by the cached statement.
	var n int
	is.NoErr(db.QueryRow(ctx, "SELECT 7").Scan(&n)) // runs unprepared the first time
	is.Equal(n, 7)                                  // the answer
	for deadline := time.Now().Add(5 * time.Second); db.ReadStmt("SELECT 7") == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the statement was never prepared")
		}
	}
	is.NoErr(db.QueryRow(ctx, "SELECT 7").Scan(&n)) // through the prepared statement
	is.Equal(n, 7)                                  // the same answer
}

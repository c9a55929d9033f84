package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestGroupCommit_AFailedWriteFailsOnlyItsCaller: writes committed
// together each return once theirs is durable, and one that fails rolls
// back its batch without losing the others.
func TestGroupCommit_AFailedWriteFailsOnlyItsCaller(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := sqldbtest.NewDB(t)
	_, err := db.ExecContext(ctx, `CREATE TABLE gc_test (n INTEGER PRIMARY KEY)`)
	is.NoErr(err)
	g := sqldb.NewGroupCommit(db, 8)
	refused := errors.New("refused")
	errs := make([]error, 40)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO gc_test (n) VALUES (?)`, i); err != nil {
					return err
				}
				if i%10 == 3 {
					return refused
				}
				return nil
			})
		}()
	}
	wg.Wait()
	var stored int
	is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM gc_test`).Scan(&stored))
	is.Equal(stored, 36) // every write but the refused ones
	for i, err := range errs {
		is.Equal(errors.Is(err, refused), i%10 == 3) // only the refused writes fail
		var n int
		found := db.QueryRowContext(ctx, `SELECT n FROM gc_test WHERE n = ?`, i).Scan(&n)
		is.Equal(found == nil, err == nil) // a write is stored exactly when it returned nil
	}
}

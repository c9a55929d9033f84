package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

func TestNotify_ReachesOtherProcessesOnCommit(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dbs := sqldbtest.NewSharedDBs(t, 2)
	a, b := dbs[0], dbs[1]
	heard, resets := make(chan string, 10), make(chan struct{}, 10)
	listen := func(db *sqldb.DB) {
		db.Listen("herald_test", sqldb.Listener{
			Notified: func(p string) { heard <- p },
			Reset:    func() { resets <- struct{}{} },
		})
	}
	listen(a)
	select {
	case <-resets: // told to start over once it listens
	case <-time.After(5 * time.Second):
		t.Fatal("no reset when the listener connected")
	}

	rolledBack := errors.New("roll back")
	err := b.Tx(ctx, func(tx *sql.Tx) error {
		is.NoErr(b.Notify(ctx, tx, "herald_test", "never"))
		return rolledBack
	})
	is.Equal(err, rolledBack)
	is.NoErr(b.Tx(ctx, func(tx *sql.Tx) error { return b.Notify(ctx, tx, "herald_test", "workflow 1") }))
	is.NoErr(a.Notify(ctx, nil, "herald_test", "a's own"))
	is.NoErr(b.Notify(ctx, nil, "herald_test", "after"))

	var got []string
	for len(got) < 2 {
		select {
		case p := <-heard:
			got = append(got, p)
		case <-time.After(5 * time.Second):
			t.Fatalf("heard only %q", got)
		}
	}
	is.Equal(got, []string{"workflow 1", "after"}) // the rolled-back one never, a's own not echoed
}

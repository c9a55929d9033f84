package sqldb_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

func TestExclusive_OneProcessAtATime(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dbs := sqldbtest.NewSharedDBs(t, 2)
	a, b := dbs[0], dbs[1]

	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan bool)
	go func() {
		ran, err := a.Exclusive(ctx, "sweep", func(context.Context) error {
			close(inside)
			<-release
			return nil
		})
		is.NoErr(err)
		done <- ran
	}()
	<-inside
	ran, err := b.Exclusive(ctx, "sweep", func(context.Context) error { return nil })
	is.NoErr(err)
	is.True(!ran) // a holds it
	ran, err = b.Exclusive(ctx, "other work", func(context.Context) error { return nil })
	is.NoErr(err)
	is.True(ran) // another name is another lock
	close(release)
	is.True(<-done)

	ran, err = b.Exclusive(ctx, "sweep", func(context.Context) error { return nil })
	is.NoErr(err)
	is.True(ran) // a let go
}

func TestExclusive_AlwaysRunsOnSQLite(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "one process owns a SQLite database")
	is := is.New(t)
	db := sqldbtest.NewDB(t)
	ran, err := db.Exclusive(context.Background(), "sweep", func(context.Context) error { return nil })
	is.NoErr(err)
	is.True(ran)
}

package platformtest

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/herald-notify/herald/platform"
)

// SkipUnlessShared skips a test of several Herald processes on one
// database: on SQLite one process owns the database.
func SkipUnlessShared(t testing.TB) {
	t.Helper()
	if !OnPostgres() {
		t.Skip("PostgreSQL only: on SQLite one process owns the database, so there is no other instance to tell")
	}
}

// NewSharedDBs opens n *platform.DB on one fresh PostgreSQL database, as n
// Herald processes sharing it hold them: each with its own pools, instance
// ID and listener. All are closed by t.Cleanup. It skips the test on SQLite
// (SkipUnlessShared).
func NewSharedDBs(t testing.TB, n int) []*platform.DB {
	t.Helper()
	SkipUnlessShared(t)
	url := NewPostgresURL(t)
	dbs := make([]*platform.DB, n)
	for i := range dbs {
		db, err := platform.Open(context.Background(), url)
		if err != nil {
			t.Fatalf("open instance %d: %v", i, err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// NewInstances starts n test servers on one fresh PostgreSQL database, each
// on a *platform.DB of its own, as n Herald processes sharing it are: their
// caches, listeners and writer connections are apart, their rows shared.
// They are bootstrapped one after the other, so they serve the same
// environments and keys; register builds each one's routes as NewServer's
// does. It skips the test on SQLite (SkipUnlessShared).
func NewInstances(t testing.TB, n int, register func(mux *http.ServeMux, app *App)) []*Server {
	t.Helper()
	dbs := NewSharedDBs(t, n)
	logs := &testWriter{t: t}
	t.Cleanup(logs.stop)
	clock := NewClock(time.Now())
	servers := make([]*Server, n)
	for i, db := range dbs {
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", i)
		servers[i] = serve(t, db, logger, clock, register)
	}
	return servers
}

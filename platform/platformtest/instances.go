package platformtest

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// NewInstances starts n test servers on one fresh PostgreSQL database, each
// on a *sqldb.DB of its own, as n Herald processes sharing it are: their
// caches, listeners and writer connections are apart, their rows shared.
// They are bootstrapped one after the other, so they serve the same
// environments and keys; register builds each one's routes as NewServer's
// does. It skips the test on SQLite (sqldbtest.SkipUnlessShared).
func NewInstances(t testing.TB, n int, register func(mux *http.ServeMux, app *App)) []*Server {
	t.Helper()
	dbs := sqldbtest.NewSharedDBs(t, n)
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

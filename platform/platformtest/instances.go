package platformtest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
		envs, err := platform.Bootstrap(context.Background(), db, platform.BootstrapConfig{DevelopmentKey: DevKey, ProductionKey: ProdKey, Secret: []byte(Secret)}, io.Discard)
		if err != nil {
			t.Fatalf("bootstrap instance %d: %v", i, err)
		}
		app := &App{
			DB:          db,
			Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", i),
			Clock:       clock,
			Secret:      []byte(Secret),
			Development: envs[0],
			Production:  envs[1],
			Outbound:    Loopback,
			Inbox:       platform.NewSubscriberAuth(db, []byte(Secret), clock.Now),
		}
		mux := http.NewServeMux()
		platform.AddRoutes(mux, db)
		if register != nil {
			register(mux, app)
		}
		hs := httptest.NewServer(platform.NewHandler(app.Logger, db, mux, platform.ServerConfig{Secret: app.Secret, Inbox: app.Inbox,
			Limits: platform.RateLimits{Write: -1}}))
		t.Cleanup(hs.Close)
		servers[i] = &Server{
			Server: hs,
			Mux:    mux,
			App:    app,
			Dev:    Client{base: hs.URL, key: DevKey, client: hs.Client()},
			Prod:   Client{base: hs.URL, key: ProdKey, client: hs.Client()},
		}
	}
	return servers
}

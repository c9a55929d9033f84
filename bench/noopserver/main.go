// Command noopserver is the benchmark's noop floor: Herald's HTTP stack
// (request logging, API-key auth, idempotency, the body limit) in front of
// one handler that answers {}. The benchmark builds and runs it exactly as
// it runs Herald, as a process of its own on loopback, so the floor and the
// figures compared with it pay the same for processes, scheduling and
// sockets. It reads the same HERALD_ADDR, HERALD_DB, HERALD_API_KEY and
// HERALD_SECRET.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "noopserver:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC()
	db, err := sqldb.Open(ctx, os.Getenv("HERALD_DB"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		return err
	}
	cfg := platform.BootstrapConfig{DevelopmentKey: os.Getenv("HERALD_API_KEY")}
	if _, err := platform.Bootstrap(ctx, db, cfg, os.Stderr); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/noop", platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return platform.JSON(w, http.StatusOK, struct{}{})
	}))
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := &http.Server{
		Addr:              os.Getenv("HERALD_ADDR"),
		Handler:           platform.NewHandler(logger, db, mux, platform.ServerConfig{Secret: []byte(os.Getenv("HERALD_SECRET"))}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tuneGC sets the collector as Herald's app.TuneGC does. The floor imports
// Herald's HTTP stack but not app, which would link every domain into it;
// the floor and Herald must pay the same for garbage collection to compare.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(250)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(200 << 20)
	}
}

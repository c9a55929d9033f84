// Command herald is a self-hosted notification service: one binary with an
// embedded SQLite database. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

// config is every setting of `herald serve`; each flag falls back to its
// HERALD_* variable, and a flag given on the command line wins (contract §1).
type config struct {
	addr       string
	db         string
	apiKey     string
	prodAPIKey string
	secret     string
	maxBody    int64
	logFormat  string
	logLevel   string
	workers    int
	maxSnooze  time.Duration
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var cfg config
	fs := flag.NewFlagSet("herald serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", env("HERALD_ADDR", "127.0.0.1:3000"), "listen address (HERALD_ADDR)")
	fs.StringVar(&cfg.db, "db", env("HERALD_DB", "herald.db"), "SQLite database file, or :memory: (HERALD_DB)")
	fs.StringVar(&cfg.apiKey, "api-key", env("HERALD_API_KEY", ""), "Development API key, created if missing (HERALD_API_KEY)")
	fs.StringVar(&cfg.prodAPIKey, "prod-api-key", env("HERALD_PROD_API_KEY", ""), "Production API key, created if missing (HERALD_PROD_API_KEY)")
	fs.StringVar(&cfg.secret, "secret", env("HERALD_SECRET", ""), "32+ byte secret that encrypts integration credentials (HERALD_SECRET)")
	maxBody, err := strconv.ParseInt(env("HERALD_MAX_BODY", strconv.Itoa(platform.DefaultMaxBody)), 10, 64)
	if err != nil {
		return cfg, fmt.Errorf("HERALD_MAX_BODY: %w", err)
	}
	fs.Int64Var(&cfg.maxBody, "max-body", maxBody, "request body limit in bytes (HERALD_MAX_BODY)")
	workers, err := strconv.Atoi(env("HERALD_WORKERS", "0"))
	if err != nil {
		return cfg, fmt.Errorf("HERALD_WORKERS: %w", err)
	}
	fs.IntVar(&cfg.workers, "workers", workers, "goroutines in each of the delivery worker's pools, one per lane; 0 means 32 (HERALD_WORKERS)")
	snoozeHours, err := strconv.Atoi(env("HERALD_MAX_SNOOZE_HOURS", "24"))
	if err != nil || snoozeHours < 1 {
		return cfg, fmt.Errorf("HERALD_MAX_SNOOZE_HOURS: want a whole number of hours, at least 1")
	}
	fs.DurationVar(&cfg.maxSnooze, "max-snooze", time.Duration(snoozeHours)*time.Hour, "the longest an inbox may snooze a notification (HERALD_MAX_SNOOZE_HOURS, in hours)")
	fs.StringVar(&cfg.logFormat, "log-format", env("HERALD_LOG_FORMAT", "text"), "log format: text or json (HERALD_LOG_FORMAT)")
	fs.StringVar(&cfg.logLevel, "log-level", env("HERALD_LOG_LEVEL", "info"), "log level: debug, info, warn or error (HERALD_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return cfg, nil
}

func newLogger(cfg config, stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	default:
		return nil, fmt.Errorf("log format %q: want text or json", cfg.logFormat)
	}
}

// run is the whole program; main only calls it, so tests can too.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	platform.TuneGC(getenv)

	args = args[1:]
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		return fmt.Errorf("unknown command %q (the only command is serve)", args[0])
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	// HERALD_CPUPROFILE writes a CPU profile of the whole run to that path
	// followed by the process id, for profiling the server under
	// `go run ./bench`.
	if path := getenv("HERALD_CPUPROFILE"); path != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	db, err := platform.Open(ctx, cfg.db)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := platform.Migrate(db, migrations.FS); err != nil {
		return err
	}
	// The secret comes first: Bootstrap seals the keys it stores with it.
	secret, err := platform.LoadSecret(ctx, db, cfg.secret, func(msg string) { logger.Warn(msg) })
	if err != nil {
		return err
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{
		DevelopmentKey: cfg.apiKey,
		ProductionKey:  cfg.prodAPIKey,
		Secret:         secret,
	}, stderr)
	if err != nil {
		return err
	}
	inbox := platform.NewSubscriberAuth(db, secret, time.Now)

	mux := http.NewServeMux()
	platform.AddRoutes(mux, db)
	// Background work (the delivery worker) stops claiming when ctx is done
	// and registers here how to wait for what it is still running.
	var stoppers []func(context.Context)
	err = wire(ctx, mux, deps{db: db, logger: logger, secret: secret, now: time.Now, environments: envs,
		workers: cfg.workers, stoppers: &stoppers, inbox: inbox, maxSnooze: cfg.maxSnooze})
	if err != nil {
		return err
	}

	srv := &http.Server{
		Handler:           platform.NewHandler(logger, db, mux, platform.ServerConfig{MaxBody: cfg.maxBody, Secret: secret, Inbox: inbox}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	logger.Info("herald listening", "addr", ln.Addr().String(), "db", cfg.db)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("herald shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shutdownErr := srv.Shutdown(shutdownCtx)
	// Running jobs finish within the same bound; past it they are abandoned
	// and their leases let the next start run them again.
	for _, stop := range stoppers {
		stop(shutdownCtx)
	}
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Command herald is a self-hosted notification service: one binary with
// SQLite embedded, or several sharing one PostgreSQL database. See README.md.
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
	"syscall"
	"time"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only calls it, so tests can too. stdin is
// read only by a command that takes a password from it (nil reads nothing).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	app.TuneGC(getenv)

	args = args[1:]
	if done, err := runCommand(ctx, args, getenv, stdin, stdout); done {
		return err
	}
	var topic []string // what -h explains: serve if named, else everything
	if len(args) > 0 && args[0] == "serve" {
		args, topic = args[1:], args[:1]
	}
	cfg, err := parseConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		return help(stdout, topic)
	}
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, platform.BuildInfo())
		return nil
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

	// One server at a time on a SQLite file, and no restore under it.
	unlock, err := sqldb.LockServer(cfg.db)
	if err != nil {
		return fmt.Errorf("HERALD_DB (-db) %s: %w", cfg.db, err)
	}
	defer unlock()
	db, err := sqldb.Open(ctx, cfg.db, sqldb.WithMmapSize(cfg.mmapSize))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		return err
	}
	db.KeepAnalysed(ctx, logger)
	// The secret comes first: Bootstrap seals the keys it stores with it.
	secret, err := platform.LoadSecret(ctx, db, cfg.secret, func(msg string) { logger.Warn(msg) })
	if err != nil {
		return err
	}
	// The addresses are taken before Bootstrap creates the first start's
	// keys: a start that cannot listen stops with no key printed or stored.
	ln, metricsLn, err := listen(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	if metricsLn != nil {
		defer metricsLn.Close()
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{
		DevelopmentKey: cfg.apiKey,
		ProductionKey:  cfg.prodAPIKey,
		Secret:         secret,
	}, stderr)
	if err != nil {
		return err
	}
	// Every environment, the ones the team created beside these two
	// included, is seeded and checked at start.
	if envs, err = platform.Environments(ctx, db, envs[0].OrganizationID); err != nil {
		return err
	}
	inbox := platform.NewSubscriberAuth(db, secret, time.Now)
	consoleAuth := platform.NewConsoleAuth(db, secret, cfg.console)

	doc, err := platform.MergeOpenAPI(app.OpenAPI...)
	if err != nil {
		return err
	}
	metrics := platform.NewMetrics(db)
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db, inbox)
	// Background work (the delivery worker) stops claiming when ctx is done;
	// herald.Stop waits for what it is still running.
	herald, err := app.Start(ctx, mux, app.Deps{DB: db, Logger: logger, Secret: secret, Now: time.Now, Environments: envs,
		Workers: cfg.workers, Outbound: cfg.outbound, Retention: cfg.retention, Metrics: metrics,
		Inbox: inbox, MaxSnooze: cfg.maxSnooze, SocketsPerToken: cfg.limits.socketsPerTokenLimit(), PublicURL: cfg.publicURL,
		Console: consoleAuth, DefaultTimezone: cfg.timezone, PageCache: pageCacheDep(cfg.pageCache)})
	if err != nil {
		return err
	}

	serverConfig := platform.ServerConfig{MaxBody: cfg.maxBody, Secret: secret, Metrics: metrics, MetricsRoute: cfg.metrics == "",
		OpenAPI: doc, Compat: cfg.compat, MaxPayload: cfg.limits.maxPayload, MaxRequestStorage: cfg.limits.maxRequestStorage,
		MaxAttachments: cfg.limits.maxAttachments,
		Limits:         cfg.limits.rateLimits(), Inbox: inbox, Console: herald.Console}
	srv := &http.Server{
		Handler:           platform.NewHandler(logger, db, mux, serverConfig),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	attrs := startAttrs(cfg, ln.Addr().String())
	// Until the team has a member, only a setup link opens the console: a
	// new one each start, for an hour and once (docs/console.md, "First run").
	setup, err := consoleAuth.Accounts().SetupLink(ctx)
	if err != nil {
		return err
	}
	if setup != "" {
		attrs = append(attrs, "console_setup", consoleURL(cfg, ln.Addr().String())+"setup?token="+setup)
	}
	logger.Info("herald listening", attrs...)
	// Waited for before the deferred db.Close: a backup under way ends
	// first.
	defer startBackups(ctx, db, cfg.backup, time.Now, logger)()
	if metricsLn != nil {
		defer serveMetrics(metricsLn, metrics, logger)()
	}

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
	herald.Stop(shutdownCtx)
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listen takes the API's address and, when it has one of its own, the
// metrics address.
func listen(cfg config) (api, metrics net.Listener, err error) {
	api, err = net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("HERALD_ADDR (-addr): %w", err)
	}
	if cfg.metrics == "" {
		return api, nil, nil
	}
	metrics, err = net.Listen("tcp", cfg.metrics)
	if err != nil {
		api.Close()
		return nil, nil, fmt.Errorf("HERALD_METRICS_ADDR (-metrics-addr), the metrics address: %w", err)
	}
	return api, metrics, nil
}

// serveMetrics serves /metrics alone on ln (HERALD_METRICS_ADDR), for a
// deployment that keeps it off the API's port. The returned func stops it.
func serveMetrics(ln net.Listener, metrics *platform.Metrics, logger *slog.Logger) func() {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }
}

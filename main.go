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
	"strconv"
	"syscall"
	"time"

	"github.com/herald-notify/herald/activity"
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
// HERALD_* variable, and a flag given on the command line wins (docs/api.md,
// "Running it").
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
	outbound   *platform.Outbound // HERALD_OUTBOUND_ALLOW, parsed
	limits     *limitSettings
	retention  retention
	mmapSize   int64
	metrics    string // where /metrics is served: "" beside the API
	compat     string // the wire of another platform's clients; "" for the spec's
	version    bool
	flags      *flag.FlagSet // every setting, for the start line's list of those changed (settings.go)
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
	fs.StringVar(&cfg.db, "db", env("HERALD_DB", "herald.db"), "SQLite database file, :memory:, or a postgres:// URL (HERALD_DB)")
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
	fs.IntVar(&cfg.workers, "workers", workers, "goroutines in each of the delivery worker's pools, one per lane; 0 means 32 for in-app and scheduled steps and 256 for each provider channel (HERALD_WORKERS)")
	snoozeHours, err := strconv.Atoi(env("HERALD_MAX_SNOOZE_HOURS", "24"))
	if err != nil || snoozeHours < 1 {
		return cfg, fmt.Errorf("HERALD_MAX_SNOOZE_HOURS: want a whole number of hours, at least 1")
	}
	fs.DurationVar(&cfg.maxSnooze, "max-snooze", time.Duration(snoozeHours)*time.Hour, "the longest an inbox may snooze a notification (HERALD_MAX_SNOOZE_HOURS, in hours)")
	fs.StringVar(&cfg.logFormat, "log-format", env("HERALD_LOG_FORMAT", "text"), "log format: text or json (HERALD_LOG_FORMAT)")
	fs.StringVar(&cfg.logLevel, "log-level", env("HERALD_LOG_LEVEL", "info"), "log level: debug, info, warn or error (HERALD_LOG_LEVEL)")
	if cfg.limits, err = addLimitFlags(fs, env); err != nil {
		return cfg, err
	}
	outbound := fs.String("outbound-allow", env("HERALD_OUTBOUND_ALLOW", ""), "CIDRs and host names that sends may reach although private or loopback (HERALD_OUTBOUND_ALLOW)")
	keep := retentionFlags(fs, env)
	mmapSize, err := strconv.ParseInt(env("HERALD_MMAP_SIZE", strconv.Itoa(platform.DefaultMmapSize)), 10, 64)
	if err != nil || mmapSize < 0 {
		return cfg, fmt.Errorf("HERALD_MMAP_SIZE: %q is not a number of bytes", env("HERALD_MMAP_SIZE", ""))
	}
	fs.Int64Var(&cfg.mmapSize, "mmap-size", mmapSize, "bytes of the database each reader maps into memory; 0 maps none (HERALD_MMAP_SIZE)")
	fs.StringVar(&cfg.metrics, "metrics-addr", env("HERALD_METRICS_ADDR", ""), "serve /metrics on this address instead of beside the API (HERALD_METRICS_ADDR)")
	fs.StringVar(&cfg.compat, "compat", env("HERALD_COMPAT", ""), "speak the reference platform's wire for its SDKs: novu (HERALD_COMPAT)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	cfg.flags = fs
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.outbound, err = platform.ParseOutboundAllow(*outbound); err != nil {
		return cfg, err
	}
	if err := platform.CheckConfiguredKeys(cfg.apiKey, cfg.prodAPIKey); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.mmapSize < 0 {
		return cfg, fmt.Errorf("-mmap-size: %d is negative", cfg.mmapSize)
	}
	if err := platform.CheckCompat(cfg.compat); err != nil {
		return cfg, err
	}
	cfg.retention, err = keep()
	return cfg, err
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
	if len(args) > 0 && args[0] == "keys" {
		return runKeys(ctx, args[1:], getenv, stdout)
	}
	if len(args) > 0 && args[0] == "version" {
		fmt.Fprintln(stdout, platform.BuildInfo())
		return nil
	}
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		return fmt.Errorf("unknown command %q (the commands are serve, keys and version)", args[0])
	}
	cfg, err := parseConfig(args, getenv, stderr)
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

	db, err := platform.Open(ctx, cfg.db, platform.WithMmapSize(cfg.mmapSize))
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

	doc, err := platform.MergeOpenAPI(openAPI...)
	if err != nil {
		return err
	}
	metrics := platform.NewMetrics(db)
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db)
	// Background work (the delivery worker) stops claiming when ctx is done
	// and registers here how to wait for what it is still running.
	var stoppers []func(context.Context)
	err = start(ctx, mux, deps{db: db, logger: logger, secret: secret, now: time.Now, environments: envs,
		workers: cfg.workers, stoppers: &stoppers, outbound: cfg.outbound, retention: cfg.retention, metrics: metrics,
		inbox: inbox, maxSnooze: cfg.maxSnooze})
	if err != nil {
		return err
	}

	serverConfig := platform.ServerConfig{MaxBody: cfg.maxBody, Secret: secret, Metrics: metrics, MetricsRoute: cfg.metrics == "",
		OpenAPI: doc, Compat: cfg.compat, MaxPayload: cfg.limits.maxPayload, Limits: cfg.limits.rateLimits(), Inbox: inbox}
	srv := &http.Server{
		Handler:           platform.NewHandler(logger, db, mux, serverConfig),
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
	logger.Info("herald listening", startAttrs(cfg, ln.Addr().String())...)
	if cfg.metrics != "" {
		stopMetrics, err := serveMetrics(cfg.metrics, metrics, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopMetrics()
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

// environmentSeeder creates what a domain needs in every environment from the
// first start on: the in-app integration, the default notification group.
type environmentSeeder interface {
	SeedEnvironment(ctx context.Context, env platform.Environment) error
}

// start wires the domains onto mux (wire) and starts what runs beside the
// server: it seeds each environment, starts the delivery worker, and goes
// on with the broadcasts an earlier process left half sent. The worker runs
// until ctx is done; what waits for it is registered in d.stoppers. run and
// the end-to-end tests both call it, so the tests start Herald as run does.
func start(ctx context.Context, mux *http.ServeMux, d deps) error {
	d.closing = ctx.Done()
	w, err := wire(mux, d)
	if err != nil {
		return err
	}
	// On a shared database this instance is alive to the others before it
	// claims anything, and until what it runs has stopped (the last
	// stopper): gone sooner, others would take over jobs still running here.
	if err := d.db.Beat(ctx, d.now()); err != nil {
		return err
	}
	stopBeat := d.db.StartHeartbeat(d.now)
	d.db.SetLogger(d.logger)
	for _, s := range []environmentSeeder{w.integrations, w.workflows} {
		for _, env := range d.environments {
			if err := s.SeedEnvironment(ctx, env); err != nil {
				return err
			}
		}
	}
	w.worker.Start(ctx)
	// ResumeBroadcasts reads which broadcasts to go on with before the
	// server takes requests, so none begun by this process is taken for one
	// of those.
	resumed := activity.ResumeBroadcasts(ctx, w.activity, w.workflows, w.subscribers, d.logger)
	if d.stoppers != nil {
		*d.stoppers = append(*d.stoppers, w.worker.Stop, resumed)
	}
	sweeper := newSweeper(d, w.activity, w.messages)
	if d.sweeper != nil {
		*d.sweeper = sweeper
	}
	d.metrics.Gauge("herald_retention_removed_rows", "Rows the retention sweeper deleted since the process started.", func() float64 {
		var n int64
		for _, removed := range sweeper.Removed() {
			n += removed
		}
		return float64(n)
	})
	if d.retention.every > 0 && d.stoppers != nil {
		*d.stoppers = append(*d.stoppers, sweeper.Start(ctx))
	}
	if d.stoppers != nil {
		*d.stoppers = append(*d.stoppers, stopBeat)
	} else {
		context.AfterFunc(ctx, func() { stopBeat(context.Background()) })
	}
	return nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// startAttrs is what the start line says (issue 41): the build, the store,
// the address and every setting that differs from its default, so one line
// of a log tells which binary ran with what. Secrets are named, never shown.
func startAttrs(cfg config, addr string) []any {
	b := platform.BuildInfo()
	attrs := []any{"version", b.Version, "commit", b.Commit, "addr", addr}
	store, where := "sqlite", cfg.db
	if sqldb.IsPostgresURL(cfg.db) {
		store, where = "postgresql", redactURL(cfg.db)
	}
	attrs = append(attrs, "store", store, "db", where)
	for _, s := range changedSettings(cfg) {
		attrs = append(attrs, s[0], s[1])
	}
	return attrs
}

// changedSettings lists, as name and value, each setting whose value is not
// its default, whether a flag or a HERALD_* variable set it. The defaults
// are what parsing gives with no arguments and an empty environment.
func changedSettings(cfg config) [][2]string {
	def, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil || cfg.flags == nil {
		return nil
	}
	var out [][2]string
	cfg.flags.VisitAll(func(f *flag.Flag) {
		d := def.flags.Lookup(f.Name)
		v := f.Value.String()
		if d == nil || d.Value.String() == v || f.Name == "db" || f.Name == "addr" {
			return
		}
		if secretSetting(f.Name) {
			v = "(set)"
		}
		out = append(out, [2]string{f.Name, v})
	})
	return out
}

// secretSetting reports whether a setting's value must never reach a log.
func secretSetting(name string) bool {
	for _, word := range []string{"key", "secret", "token", "password"} {
		if strings.Contains(name, word) {
			return true
		}
	}
	return false
}

// redactURL hides a database URL's password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// serveMetrics serves /metrics alone on addr (HERALD_METRICS_ADDR), for a
// deployment that keeps it off the API's port. The returned func stops it.
func serveMetrics(addr string, metrics *platform.Metrics, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// serverMemoryLimit is the heap size past which the collector works as hard
// as it must, whatever GOGC says.
const serverMemoryLimit = 200 << 20

// tuneGC sets the garbage collector for a server: collect when the heap has
// grown to 4x what the last collection kept (GOGC 300; Go defaults to 2x),
// but never let it pass serverMemoryLimit. Requests allocate much and keep
// little, so at the default the collector took a large share of a feed
// read's CPU under load. getenv is consulted so that GOGC or GOMEMLIMIT,
// when set, win as they always do.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}

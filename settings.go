package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
)

// startAttrs is what the start line says (docs/operations.md, "Logs"): the
// build, the store, the address and every setting that differs from its
// default, so one line of a log tells which binary ran with what. Secrets
// are named, never shown.
func startAttrs(cfg config, addr string) []any {
	b := platform.BuildInfo()
	attrs := []any{"version", b.Version, "commit", b.Commit, "addr", addr}
	store, where := "sqlite", cfg.db
	if platform.IsPostgresURL(cfg.db) {
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

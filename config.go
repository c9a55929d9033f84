package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// config is every setting of `herald serve`; each flag falls back to its
// HERALD_* variable, then to the config file (config_file.go), and a flag
// given on the command line wins.
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
	outbound   *outbound.Guard // HERALD_OUTBOUND_ALLOW, parsed
	limits     *limitSettings
	retention  app.Retention
	mmapSize   int64
	pageCache  int64
	metrics    string // where /metrics is served: "" beside the API
	compat     string // the wire of another platform's clients; "" for the spec's
	publicURL  string // where providers and the team reach Herald; "" for each request's own host
	version    bool
	flags      *flag.FlagSet // every setting, for the start line's list of those changed
	maxSnooze  time.Duration
	console    platform.ConsoleConfig
	timezone   *time.Location // HERALD_DEFAULT_TIMEZONE, loaded
	backup     backupSettings
	configFile string // the YAML file of settings read below flags and environment; "" for none
}

// parseConfig reads the settings of `herald serve` from args, flags before
// or after anything else, and the HERALD_* variables through getenv, and
// checks them; each error names the setting and what it takes.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	var cfg config
	fs := quietFlagSet("herald serve")
	parsed, err := declareSettings(fs, &cfg, func(name, def string) string { return cmp.Or(getenv(name), def) })
	if err != nil {
		return cfg, err
	}
	cfg.flags = fs
	positional, err := parseFlags(fs, args)
	if err != nil {
		return cfg, fmt.Errorf("%w; `herald help serve` lists the settings", err)
	}
	if len(positional) > 0 {
		return cfg, fmt.Errorf("unexpected argument %q; `herald help` lists the commands", positional[0])
	}
	if cfg.configFile != "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if err := applyConfigFile(fs, cfg.configFile, set, getenv); err != nil {
			return cfg, err
		}
	}
	if err := parsed(); err != nil {
		return cfg, err
	}
	return cfg, checkConfig(cfg)
}

// declareSettings declares every setting of serve on fs, into cfg, each
// defaulting to its HERALD_* variable read through env; it fails on a
// variable that cannot be a default. The returned function, called once fs
// is parsed, reads the settings that need more than a flag's parsing.
func declareSettings(fs *flag.FlagSet, cfg *config, env func(name, def string) string) (parsed func() error, err error) {
	fs.StringVar(&cfg.configFile, "config", env("HERALD_CONFIG", ""), "a YAML file of settings, one \"name: value\" line per flag by its name; a flag or HERALD_* variable wins over it (HERALD_CONFIG)")
	fs.StringVar(&cfg.addr, "addr", env("HERALD_ADDR", "127.0.0.1:3000"), "listen address (HERALD_ADDR)")
	fs.StringVar(&cfg.db, "db", env("HERALD_DB", "herald.db"), "SQLite database file, :memory:, or a postgres:// URL (HERALD_DB)")
	fs.StringVar(&cfg.apiKey, "api-key", env("HERALD_API_KEY", ""), "Development API key, created if missing (HERALD_API_KEY)")
	fs.StringVar(&cfg.prodAPIKey, "prod-api-key", env("HERALD_PROD_API_KEY", ""), "Production API key, created if missing (HERALD_PROD_API_KEY)")
	fs.StringVar(&cfg.secret, "secret", env("HERALD_SECRET", ""), "32+ byte secret that encrypts integration and subscriber channel credentials (HERALD_SECRET)")
	maxBody, err := strconv.ParseInt(env("HERALD_MAX_BODY", strconv.Itoa(platform.DefaultMaxBody)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("HERALD_MAX_BODY: %w", err)
	}
	fs.Int64Var(&cfg.maxBody, "max-body", maxBody, "request body limit in bytes (HERALD_MAX_BODY)")
	workers, err := strconv.Atoi(env("HERALD_WORKERS", "0"))
	if err != nil || workers < 0 {
		return nil, workersError(env("HERALD_WORKERS", ""))
	}
	fs.IntVar(&cfg.workers, "workers", workers, "goroutines in each of the delivery worker's pools, one per lane; "+defaultWorkers+" (HERALD_WORKERS)")
	snoozeHours, err := strconv.Atoi(env("HERALD_MAX_SNOOZE_HOURS", "24"))
	if err != nil || snoozeHours < 1 {
		return nil, fmt.Errorf("HERALD_MAX_SNOOZE_HOURS: want a whole number of hours, at least 1")
	}
	fs.DurationVar(&cfg.maxSnooze, "max-snooze", time.Duration(snoozeHours)*time.Hour, "the longest an inbox may snooze a notification (HERALD_MAX_SNOOZE_HOURS, in hours)")
	if err := consoleFlags(fs, cfg, env); err != nil {
		return nil, err
	}
	fs.StringVar(&cfg.logFormat, "log-format", env("HERALD_LOG_FORMAT", "text"), "log format: text or json (HERALD_LOG_FORMAT)")
	fs.StringVar(&cfg.logLevel, "log-level", env("HERALD_LOG_LEVEL", "info"), "log level: debug, info, warn or error (HERALD_LOG_LEVEL)")
	if cfg.limits, err = addLimitFlags(fs, env); err != nil {
		return nil, err
	}
	allow := fs.String("outbound-allow", env("HERALD_OUTBOUND_ALLOW", ""), "CIDRs and host names that sends may reach although private or loopback (HERALD_OUTBOUND_ALLOW)")
	keep := retentionFlags(fs, env)
	mmapSize, err := strconv.ParseInt(env("HERALD_MMAP_SIZE", strconv.Itoa(sqldb.DefaultMmapSize)), 10, 64)
	if err != nil || mmapSize < 0 {
		return nil, fmt.Errorf("HERALD_MMAP_SIZE: %q is not a number of bytes", env("HERALD_MMAP_SIZE", ""))
	}
	fs.Int64Var(&cfg.mmapSize, "mmap-size", mmapSize, "bytes of the database each reader maps into memory; 0 maps none (HERALD_MMAP_SIZE)")
	pageCache, err := strconv.ParseInt(env("HERALD_PAGE_CACHE", strconv.Itoa(messaging.DefaultPageCache)), 10, 64)
	if err != nil || pageCache < 0 {
		return nil, fmt.Errorf("HERALD_PAGE_CACHE: %q is not a number of bytes", env("HERALD_PAGE_CACHE", ""))
	}
	fs.Int64Var(&cfg.pageCache, "page-cache", pageCache, "bytes of memory that keep feed and inbox pages until their subscriber's next write; 0 keeps none (HERALD_PAGE_CACHE)")
	fs.StringVar(&cfg.metrics, "metrics-addr", env("HERALD_METRICS_ADDR", ""), "serve /metrics on this address instead of beside the API (HERALD_METRICS_ADDR)")
	fs.StringVar(&cfg.publicURL, "public-url", env("HERALD_PUBLIC_URL", ""), "the URL providers and the team reach Herald at: the host of delivery receipts' URL and the console's setup link (HERALD_PUBLIC_URL); unset, each request's own host, and http://addr for the link")
	if err := backupSettingFlags(fs, &cfg.backup, env); err != nil {
		return nil, err
	}
	fs.StringVar(&cfg.compat, "compat", env("HERALD_COMPAT", ""), "speak the reference platform's wire for its SDKs: novu (HERALD_COMPAT)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	timezone := fs.String("default-timezone", env("HERALD_DEFAULT_TIMEZONE", "UTC"), "the IANA timezone subscribers' schedules are read in when a subscriber has none, as Europe/Paris (HERALD_DEFAULT_TIMEZONE)")
	return func() (err error) {
		if cfg.outbound, err = outbound.ParseAllow(*allow); err != nil {
			return err
		}
		if cfg.timezone, err = time.LoadLocation(*timezone); err != nil || *timezone == "" || *timezone == "Local" {
			return fmt.Errorf("HERALD_DEFAULT_TIMEZONE (-default-timezone) %q is not an IANA timezone such as Europe/Paris or UTC", *timezone)
		}
		if err := checkPublicURL(cfg.publicURL); err != nil {
			return err
		}
		cfg.retention, err = keep()
		return err
	}, nil
}

// checkPublicURL refuses a public URL providers could not be sent to.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("HERALD_PUBLIC_URL (-public-url) %q is not an http or https URL such as https://herald.example.com", s)
	}
	return nil
}

// consoleFlags declares the console's settings (docs/console.md,
// "Settings") on fs, each defaulting to its HERALD_* variable.
func consoleFlags(fs *flag.FlagSet, cfg *config, env func(name, def string) string) error {
	for _, d := range []struct {
		flag, variable, usage string
		def                   time.Duration
		into                  *time.Duration
	}{
		{"console-idle", "HERALD_CONSOLE_IDLE", "a console session unused this long ends", platform.DefaultConsoleIdle, &cfg.console.Idle},
		{"console-max-age", "HERALD_CONSOLE_MAX_AGE", "a console session ends this long after sign-in", platform.DefaultConsoleMaxAge, &cfg.console.MaxAge},
	} {
		v, err := time.ParseDuration(env(d.variable, d.def.String()))
		if err != nil || v <= 0 {
			return fmt.Errorf("%s: want a duration above 0, such as 12h", d.variable)
		}
		fs.DurationVar(d.into, d.flag, v, d.usage+" ("+d.variable+")")
	}
	secure, err := strconv.ParseBool(env("HERALD_CONSOLE_SECURE_COOKIES", "false"))
	if err != nil {
		return fmt.Errorf("HERALD_CONSOLE_SECURE_COOKIES: want true or false")
	}
	fs.BoolVar(&cfg.console.SecureCookies, "console-secure-cookies", secure,
		"mark the console's cookies Secure although Herald serves plain HTTP, behind a proxy that ends TLS (HERALD_CONSOLE_SECURE_COOKIES)")
	return nil
}

// consoleURL is where the team opens the console: the public URL, or this
// process's address, a wildcard one named as localhost.
func consoleURL(cfg config, addr string) string {
	if cfg.publicURL != "" {
		return strings.TrimSuffix(cfg.publicURL, "/") + "/console/"
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		addr = net.JoinHostPort("localhost", port)
	}
	return "http://" + addr + "/console/"
}

// defaultWorkers says what 0 workers means.
const defaultWorkers = "0 means 32 for in-app and scheduled steps and 256 for each provider channel"

func workersError(value string) error {
	return fmt.Errorf("HERALD_WORKERS (-workers) %q is not a number of goroutines: use a whole number, 0 or more; %s", value, defaultWorkers)
}

// checkConfig checks the settings that parsing alone does not.
func checkConfig(cfg config) error {
	if err := platform.CheckConfiguredKeys(cfg.apiKey, cfg.prodAPIKey); err != nil {
		return err
	}
	if cfg.workers < 0 {
		return workersError(strconv.Itoa(cfg.workers))
	}
	if cfg.mmapSize < 0 {
		return fmt.Errorf("-mmap-size: %d is negative", cfg.mmapSize)
	}
	if cfg.pageCache < 0 || cfg.pageCache > maxPageCache {
		return fmt.Errorf("-page-cache: %d is not between 0 and %d bytes", cfg.pageCache, maxPageCache)
	}
	if err := platform.CheckCompat(cfg.compat); err != nil {
		return err
	}
	if _, err := logLevel(cfg.logLevel); err != nil {
		return err
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return fmt.Errorf("HERALD_LOG_FORMAT (-log-format) %q is not a log format: use text or json", cfg.logFormat)
	}
	if err := cfg.backup.check(cfg.db); err != nil {
		return err
	}
	return checkDBDir(cfg.db)
}

// logLevel reads a log level as slog does (debug, info, warn, error, in
// any case, with an offset such as info+2).
func logLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return level, fmt.Errorf("HERALD_LOG_LEVEL (-log-level) %q is not a log level: use debug, info, warn or error", s)
	}
	return level, nil
}

// checkDBDir refuses a SQLite file in a directory that does not exist,
// which SQLite would only report as "unable to open database file".
func checkDBDir(path string) error {
	if sqldb.IsPostgresURL(path) || path == sqldb.MemoryPath {
		return nil
	}
	dir := filepath.Dir(sqlitePath(path))
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("HERALD_DB (-db) %q: the directory %s does not exist; create it, or use :memory: or a postgres:// URL", path, dir)
	}
	return nil
}

// sqlitePath is the file a SQLite setting names, without the options a
// URI may add after "?".
func sqlitePath(path string) string {
	file, _, _ := strings.Cut(path, "?")
	return file
}

func newLogger(cfg config, stderr io.Writer) (*slog.Logger, error) {
	level, err := logLevel(cfg.logLevel)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return slog.New(slog.NewTextHandler(stderr, opts)), nil
}

// startAttrs is what the start line says: the build, the store,
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
	def, err := parseConfig(nil, func(string) string { return "" })
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

// limitSettings are the settings that bound what one client can make the
// server do (docs/security.md).
type limitSettings struct {
	writeRate, authFailureRate   float64
	writeBurst, authFailureBurst int
	maxPayload                   int64
	maxRequestStorage            int64
	maxAttachments               int64
	sessions, newSessions        float64
	socketsPerToken              float64
}

// addLimitFlags registers the limits' flags on fs, each defaulting to its
// HERALD_* variable, read through env.
func addLimitFlags(fs *flag.FlagSet, env func(name, def string) string) (*limitSettings, error) {
	s := &limitSettings{}
	for _, f := range []struct {
		name, variable, usage string
		def                   float64
		into                  func(float64)
	}{
		{"write-rate", "HERALD_WRITE_RATE", "writes (POST, PUT, PATCH, DELETE) a second per API key; 0 turns the limit off",
			platform.DefaultWriteRate, func(v float64) { s.writeRate = v }},
		{"write-burst", "HERALD_WRITE_BURST", "writes an API key may make at once before write-rate applies",
			platform.DefaultWriteBurst, func(v float64) { s.writeBurst = int(v) }},
		{"auth-failure-rate", "HERALD_AUTH_FAILURE_RATE", "failed authentications a second per client address; 0 turns the limit off",
			platform.DefaultAuthFailureRate, func(v float64) { s.authFailureRate = v }},
		{"auth-failure-burst", "HERALD_AUTH_FAILURE_BURST", "failed authentications a client address may make at once",
			platform.DefaultAuthFailureBurst, func(v float64) { s.authFailureBurst = int(v) }},
		{"max-payload", "HERALD_MAX_PAYLOAD", "largest trigger payload in bytes",
			platform.DefaultMaxPayload, func(v float64) { s.maxPayload = int64(v) }},
		{"max-request-storage", "HERALD_MAX_REQUEST_STORAGE", "most bytes one request may cause to be stored",
			platform.DefaultMaxRequestStorage, func(v float64) { s.maxRequestStorage = int64(v) }},
		{"max-attachments", "HERALD_MAX_ATTACHMENTS", "most bytes of files, decoded, one trigger request may carry",
			platform.DefaultMaxAttachments, func(v float64) { s.maxAttachments = int64(v) }},
		{"inbox-sessions", "HERALD_INBOX_SESSIONS", "inbox sessions of existing subscribers a minute per client address; 0 turns the limit off",
			platform.DefaultSessionRate, func(v float64) { s.sessions = v }},
		{"inbox-new-sessions", "HERALD_INBOX_NEW_SESSIONS", "inbox sessions naming a subscriber that does not exist, a minute per client address; 0 turns the limit off",
			platform.DefaultNewSessionRate, func(v float64) { s.newSessions = v }},
		{"inbox-sockets-per-token", "HERALD_INBOX_SOCKETS_PER_TOKEN", "live inbox sockets one subscriber token may hold open on one process; 0 turns the limit off",
			messaging.DefaultSocketsPerToken, func(v float64) { s.socketsPerToken = v }},
	} {
		v, err := strconv.ParseFloat(env(f.variable, strconv.FormatFloat(f.def, 'f', -1, 64)), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: want a number of 0 or more", f.variable)
		}
		f.into(v)
		fs.Func(f.name, fmt.Sprintf("%s (%s, default %v)", f.usage, f.variable, f.def), func(arg string) error {
			v, err := strconv.ParseFloat(arg, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("want a number of 0 or more")
			}
			f.into(v)
			return nil
		})
	}
	return s, nil
}

// rateLimits is the settings as the server takes them: 0 turns a limit off.
func (s *limitSettings) rateLimits() platform.RateLimits {
	off := func(v float64) float64 {
		if v == 0 {
			return -1
		}
		return v
	}
	return platform.RateLimits{Write: off(s.writeRate), WriteBurst: s.writeBurst,
		AuthFailure: off(s.authFailureRate), AuthFailureBurst: s.authFailureBurst,
		Sessions: off(s.sessions), NewSessions: off(s.newSessions)}
}

// socketsPerTokenLimit is the socket limit as the inbox takes it: negative for none.
func (s *limitSettings) socketsPerTokenLimit() int {
	if s.socketsPerToken == 0 {
		return -1
	}
	return int(math.Ceil(s.socketsPerToken))
}

// retentionFlags declares the retention settings on fs, each falling back
// to its HERALD_* variable through env; the returned function reads them
// once fs is parsed, and fails naming the setting whose value is negative
// or unreadable.
func retentionFlags(fs *flag.FlagSet, env func(name, def string) string) func() (app.Retention, error) {
	settings := []struct {
		flag, variable, def, usage string
		value                      *string
	}{
		{"activity-retention", "HERALD_ACTIVITY_RETENTION", "30d", "how long a finished notification, its jobs and execution details are kept", new(string)},
		{"in-app-retention", "HERALD_IN_APP_RETENTION", "365d", "how long in-app messages are kept", new(string)},
		{"message-retention", "HERALD_MESSAGE_RETENTION", "30d", "how long email, sms, chat and push messages are kept", new(string)},
	}
	for _, s := range settings {
		fs.StringVar(s.value, s.flag, env(s.variable, s.def), s.usage+"; days (30d) or a duration (36h), 0 keeps forever ("+s.variable+")")
	}
	every := fs.String("sweep-every", env("HERALD_SWEEP_EVERY", "0"), "how often expired records are swept, a duration (10m); 0 means a tenth of the shortest retention, between 1m and 1h (HERALD_SWEEP_EVERY)")
	return func() (app.Retention, error) {
		keep := make([]time.Duration, len(settings))
		for i, s := range settings {
			d, err := parseRetention("-"+s.flag+" ("+s.variable+")", *s.value)
			if err != nil {
				return app.Retention{}, err
			}
			keep[i] = d
		}
		r := app.Retention{Activity: keep[0], InApp: keep[1], Messages: keep[2], Every: activity.SweepEvery(keep...)}
		if d, err := time.ParseDuration(strings.TrimSpace(*every)); err != nil || d < 0 {
			return app.Retention{}, fmt.Errorf("-sweep-every (HERALD_SWEEP_EVERY): %q is not a duration (10m) of 0 or more; 0 sweeps at a tenth of the shortest retention", *every)
		} else if d > 0 {
			r.Every = d
		}
		return r, nil
	}
}

// parseRetention reads a retention setting: a number of days ("30" or
// "30d") or a Go duration ("36h"); 0 keeps records forever. A negative or
// unreadable value is an error that names the setting, which stops the
// start (docs/retention.md).
func parseRetention(name, value string) (time.Duration, error) {
	v := strings.TrimSpace(value)
	var d time.Duration
	days, err := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64)
	switch {
	case err != nil:
		d, err = time.ParseDuration(v)
	case math.IsNaN(days) || math.Abs(days) > maxRetentionDays:
		err = errors.New("out of range")
	default:
		d = time.Duration(days * float64(24*time.Hour))
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %q is not a number of days (30, 30d) or a duration (36h)", name, value)
	case d < 0:
		return 0, fmt.Errorf("%s: %q is negative; 0 keeps records forever", name, value)
	}
	return d, nil
}

// maxRetentionDays bounds a setting in days well inside time.Duration.
const maxRetentionDays = 100 * 366

// maxPageCache bounds -page-cache: the ring is one mapping, kept whole.
const maxPageCache = 1 << 30

// pageCacheDep is -page-cache as app.Deps takes it: 0 there is the
// default, and none is negative.
func pageCacheDep(bytes int64) int {
	if bytes == 0 {
		return -1
	}
	return int(bytes)
}

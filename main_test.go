package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to age a test database's schema
	"github.com/matryer/is"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer = platformtest.SyncBuffer

// startRun runs the program with the given environment and returns its base
// URL, its stderr, and a stop function that cancels it (as SIGTERM would)
// and returns run's error.
func startRun(t *testing.T, env map[string]string, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	addr := freeAddr(t)
	env["HERALD_ADDR"] = addr
	stderr := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"herald", "serve"}, args...), func(k string) string { return env[k] }, nil, &bytes.Buffer{}, stderr)
	}()
	base := "http://" + addr
	waitForReady(t, base+"/healthz", done)
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			return fmt.Errorf("run did not return after cancel")
		}
	}
	t.Cleanup(func() { stop() })
	return base, stderr, stop
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitForReady polls url until it answers 200, failing fast if run returns.
func waitForReady(t *testing.T, url string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("run returned before serving: %v", err)
		default:
		}
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s not ready after 60s", url)
}

func get(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

var printedKey = regexp.MustCompile(`(Development|Production) API key \(it is shown only this once\): ([0-9a-f]{32})`)

func TestRun_RestartKeepsDataAndKeys(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"HERALD_DB": filepath.Join(t.TempDir(), "herald.db")}

	base, stderr, stop := startRun(t, env)
	keys := printedKey.FindAllStringSubmatch(stderr.String(), -1)
	is.Equal(len(keys), 2)                                     // a key printed for each environment
	is.Equal(get(t, base+"/v1/environments", keys[0][2]), 200) // the printed Development key works
	is.Equal(get(t, base+"/v1/environments", keys[1][2]), 200) // the printed Production key works
	is.Equal(get(t, base+"/readyz", ""), 200)                  // database reachable
	is.NoErr(stop())                                           // graceful shutdown returns nil

	base, stderr, stop = startRun(t, env)
	is.Equal(len(printedKey.FindAllString(stderr.String(), -1)), 0) // keys are printed only once
	is.Equal(get(t, base+"/v1/environments", keys[0][2]), 200)      // the old key still works after restart
	is.NoErr(stop())                                                // second shutdown
}

func TestRun_ConfiguredKeys(t *testing.T) {
	is := is.New(t)
	env := map[string]string{
		"HERALD_DB":           ":memory:",
		"HERALD_API_KEY":      "dev-key-from-env-000000000000000000",
		"HERALD_PROD_API_KEY": "prod-key-from-env-00000000000000000",
		"HERALD_LOG_FORMAT":   "json",
	}
	base, stderr, _ := startRun(t, env)
	is.Equal(get(t, base+"/v1/environments", env["HERALD_API_KEY"]), 200)                 // HERALD_API_KEY honoured
	is.Equal(get(t, base+"/v1/environments", env["HERALD_PROD_API_KEY"]), 200)            // HERALD_PROD_API_KEY honoured
	is.Equal(get(t, base+"/v1/environments", "other"), 401)                               // anything else refused
	is.True(!bytes.Contains([]byte(stderr.String()), []byte(env["HERALD_API_KEY"][:16]))) // keys never logged
}

func TestRun_FlagsBeatEnv(t *testing.T) {
	is := is.New(t)
	fromEnv, fromFlag := "from-env-00000000000000000000000000", "from-flag-0000000000000000000000000"
	env := map[string]string{"HERALD_DB": ":memory:", "HERALD_API_KEY": fromEnv}
	base, _, _ := startRun(t, env, "-api-key", fromFlag)
	is.Equal(get(t, base+"/v1/environments", fromFlag), 200) // the flag's key exists
	is.Equal(get(t, base+"/v1/environments", fromEnv), 401)  // the variable's does not
}

func TestRun_BadSettings(t *testing.T) {
	missingDir := filepath.Join(t.TempDir(), "no-such-dir", "herald.db")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		says []string // each in the error
	}{
		{"ErrUnknownCommand", []string{"herald", "launch"}, nil, []string{`unknown command "launch"`, "herald help"}},
		{"ErrUnknownFlag", []string{"herald", "-nope"}, nil, []string{"-nope", "herald help serve"}},
		{"ErrArgument", []string{"herald", "serve", "-db", ":memory:", "extra"}, nil, []string{`"extra"`}},
		{"ErrLogFormat", []string{"herald", "-log-format", "xml"}, nil, []string{"HERALD_LOG_FORMAT", "text or json"}},
		{"ErrLogLevel", []string{"herald"}, map[string]string{"HERALD_LOG_LEVEL": "loud"}, []string{"HERALD_LOG_LEVEL", `"loud"`, "debug, info, warn or error"}},
		{"ErrLogLevelFlag", []string{"herald", "-log-level", "loud"}, nil, []string{"-log-level", "debug, info, warn or error"}},
		{"ErrWorkers", []string{"herald"}, map[string]string{"HERALD_WORKERS": "many"}, []string{"HERALD_WORKERS", `"many"`, "0 or more", "0 means 32"}},
		{"ErrNegativeWorkers", []string{"herald"}, map[string]string{"HERALD_WORKERS": "-4"}, []string{"HERALD_WORKERS", "0 or more"}},
		{"ErrNegativeWorkersFlag", []string{"herald", "-workers", "-4"}, nil, []string{"-workers", "0 or more"}},
		{"ErrMissingDatabaseDirectory", []string{"herald", "-db", missingDir}, nil,
			[]string{"HERALD_DB", filepath.Dir(missingDir), "does not exist", ":memory:", "postgres://"}},
		{"ErrShortSecret", []string{"herald", "-db", ":memory:", "-addr", "127.0.0.1:0"}, map[string]string{"HERALD_SECRET": "short"}, []string{"HERALD_SECRET"}},
		{"ErrMaxBody", []string{"herald"}, map[string]string{"HERALD_MAX_BODY": "lots"}, []string{"HERALD_MAX_BODY"}},
		{"ErrMaxPayload", []string{"herald"}, map[string]string{"HERALD_MAX_PAYLOAD": "-1"}, []string{"HERALD_MAX_PAYLOAD", "0 or more"}},
		{"ErrWriteRateFlag", []string{"herald", "-write-rate", "fast"}, nil, []string{"-write-rate", "0 or more"}},
		{"ErrKeys", []string{"herald", "keys", "rotate"}, nil, []string{`"rotate"`, "list, create or revoke"}},
		{"ErrPublicURL", []string{"herald"}, map[string]string{"HERALD_PUBLIC_URL": "herald.example.com"}, []string{"HERALD_PUBLIC_URL", "https://"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil) // refused before serving
			for _, want := range tc.says {
				is.True(strings.Contains(err.Error(), want)) // the error names the setting and what it takes
			}
			t.Logf("herald: %v", err)
		})
	}
	_, err := os.Stat(filepath.Dir(missingDir))
	is.New(t).True(errors.Is(err, fs.ErrNotExist)) // the missing directory is not created
}

// TestRun_PortTakenPrintsNoKey: a first start whose address is taken
// stops before it creates the keys, so it neither prints nor stores one,
// and the next start prints them.
func TestRun_PortTakenPrintsNoKey(t *testing.T) {
	is := is.New(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // an address another process holds
	defer taken.Close()
	path := filepath.Join(t.TempDir(), "herald.db")
	env := map[string]string{"HERALD_DB": path, "HERALD_ADDR": taken.Addr().String()}
	var stderr bytes.Buffer
	err = run(t.Context(), []string{"herald"}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &stderr)
	is.True(err != nil && strings.Contains(err.Error(), "HERALD_ADDR"))        // the start stops, naming the setting
	is.True(strings.Contains(err.Error(), "address already in use"))           // and why
	is.Equal(len(printedKey.FindAllString(stderr.String(), -1)), 0)            // no key printed
	is.Equal(strings.Count(strings.TrimSpace(keys(t, path, "list")), "\n"), 0) // none stored: the list is its header alone

	_, stderr2, _ := startRun(t, map[string]string{"HERALD_DB": path})
	is.Equal(len(printedKey.FindAllString(stderr2.String(), -1)), 2) // the next start prints both keys
}

// runRefused runs the program on env, which must fail at start, and
// returns its error. It dials the listen address the whole time run takes:
// a start that fails must fail before the server takes connections, never
// half-started with a listener open.
func runRefused(t *testing.T, env map[string]string) error {
	t.Helper()
	addr := freeAddr(t)
	env["HERALD_ADDR"] = addr
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"herald", "serve"}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-done:
			return err
		case <-deadline:
			t.Fatalf("run still running after 30s on %s", env["HERALD_DB"])
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond); err == nil {
			c.Close()
			t.Fatalf("%s accepted a connection before run returned: a half-started server", addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRun_PostgresStartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		db   string
		want string // in the error
	}{
		// Neither needs a server: pgx refuses the URL, and nothing listens
		// on port 1.
		{"ErrBadPort", "postgres://herald:s3cret-pw@db.example:port/herald", "not a valid PostgreSQL URL"},
		{"ErrBadHost", "postgresql://herald:s3cret-pw@[::1/herald", "not a valid PostgreSQL URL"},
		{"ErrBadOption", "postgres://herald:s3cret-pw@127.0.0.1/herald?connect_timeout=soon", "not a valid PostgreSQL URL"},
		{"ErrUnreachable", "postgres://herald:s3cret-pw@127.0.0.1:1/herald?connect_timeout=2", "127.0.0.1:1/herald"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			started := time.Now()
			err := runRefused(t, map[string]string{"HERALD_DB": tc.db})
			is.True(err != nil)                                  // refused at start
			is.True(strings.Contains(err.Error(), tc.want))      // says what is wrong with HERALD_DB
			is.True(!strings.Contains(err.Error(), "s3cret-pw")) // never prints the password
			is.True(time.Since(started) < 10*time.Second)        // within the connect timeout, no hang
			t.Logf("herald: %v", err)
		})
	}
}

func TestRun_PostgresNewerSchema(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("needs TEST_DATABASE_URL")
	}
	is := is.New(t)
	url := sqldbtest.NewPostgresURL(t)
	db, err := sql.Open("pgx", url)
	is.NoErr(err)
	defer db.Close()
	// As if a newer Herald had migrated it.
	_, err = db.Exec(`UPDATE schema_migrations SET version = version + 1000`)
	is.NoErr(err)
	var version int
	is.NoErr(db.QueryRow(`SELECT version FROM schema_migrations`).Scan(&version))

	err = runRefused(t, map[string]string{"HERALD_DB": url})
	is.True(err != nil)                                                                                               // refused at start
	is.True(strings.Contains(err.Error(), fmt.Sprintf("schema is at version %d, newer than this Herald's", version))) // names both versions
	t.Logf("herald: %v", err)
	var after int
	is.NoErr(db.QueryRow(`SELECT version FROM schema_migrations`).Scan(&after))
	is.Equal(after, version) // the schema left as it was
}

func TestRun_Version(t *testing.T) {
	for _, args := range [][]string{{"herald", "version"}, {"herald", "-version"}, {"herald", "serve", "-version"}} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			is := is.New(t)
			var stdout bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, nil, &stdout, &bytes.Buffer{})
			is.NoErr(err)                                           // printing the version is not an error
			is.True(strings.HasPrefix(stdout.String(), "herald "))  // names the program
			is.True(strings.Contains(stdout.String(), "go1."))      // and the toolchain that built it
			is.True(strings.Count(stdout.String(), "\n") == 1)      // one line
			is.True(!strings.Contains(stdout.String(), "herald  ")) // the version is not empty
			is.True(strings.Fields(stdout.String())[1] != "")       // a version follows the name
		})
	}
}

func TestRun_StartLineAndHealthzNameTheBuild(t *testing.T) {
	is := is.New(t)
	env := map[string]string{
		"HERALD_DB":         ":memory:",
		"HERALD_LOG_FORMAT": "json",
		"HERALD_SECRET":     "a-secret-of-at-least-thirty-two-bytes",
		"HERALD_API_KEY":    "dev-key-from-env-at-least-32-chars",
	}
	base, stderr, _ := startRun(t, env, "-workers", "3")

	var start map[string]any
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"herald listening"`) {
			is.NoErr(json.Unmarshal([]byte(line), &start)) // the start line is JSON
		}
	}
	is.True(start != nil)                                                                // one start line
	is.True(start["version"] != "")                                                      // it names the version
	is.Equal(start["store"], "sqlite")                                                   // and the store
	is.Equal(start["db"], ":memory:")                                                    // and where
	is.True(start["addr"] != "")                                                         // and the address
	is.Equal(start["workers"], "3")                                                      // a changed setting from a flag
	is.Equal(start["log-format"], "json")                                                // a changed setting from the environment
	is.Equal(start["secret"], "(set)")                                                   // a secret is named, not shown
	is.Equal(start["api-key"], "(set)")                                                  // so is a key
	is.True(start["log-level"] == nil)                                                   // a default setting is not listed
	is.True(!strings.Contains(stderr.String(), "a-secret-of-at-least-thirty-two-bytes")) // the secret is never logged
	is.True(!strings.Contains(stderr.String(), "dev-key-from-env-at-least-32-chars"))    // nor the key

	res, err := http.Get(base + "/healthz")
	is.NoErr(err) // healthz answers
	defer res.Body.Close()
	var health struct {
		Status  string  `json:"status"`
		Version string  `json:"version"`
		Commit  *string `json:"commit"`
	}
	is.NoErr(json.NewDecoder(res.Body).Decode(&health)) // healthz is JSON
	is.Equal(health.Status, "ok")                       // still says ok
	is.Equal(health.Version, start["version"])          // the same version as the start line
	is.True(health.Commit != nil)                       // the commit is always present, "" outside a checkout
}

func TestRedactURL(t *testing.T) {
	is := is.New(t)
	got := redactURL("postgres://herald:hunter2@db:5432/herald")
	is.True(!strings.Contains(got, "hunter2")) // the password is hidden
	is.True(strings.Contains(got, "db:5432"))  // the host is shown
}

func TestRun_BadOutboundAllow(t *testing.T) {
	for _, tc := range []struct {
		name, allow, named string
	}{
		{"ErrPrefixTooLong", "127.0.0.0/33", "127.0.0.0/33"},
		{"ErrNotAnAddress", "10.0.0.300", "10.0.0.300"},
		{"ErrNotAName", "10.0.0.0/8, bad host!", "bad host!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := run(t.Context(), []string{"herald", "-db", ":memory:", "-addr", "127.0.0.1:0"},
				func(k string) string { return map[string]string{"HERALD_OUTBOUND_ALLOW": tc.allow}[k] }, nil, &strings.Builder{}, &strings.Builder{})
			is.True(err != nil)                                      // the start stops
			is.True(strings.Contains(err.Error(), `"`+tc.named+`"`)) // naming the entry
			is.True(strings.Contains(err.Error(), outbound.Setting)) // and the setting
		})
	}
}

// TestRun_BadStorageSettings: a negative or unreadable retention or
// mmap setting, by flag or variable, stops the start with a message naming
// it.
func TestRun_BadStorageSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"ErrNegativeFlag", []string{"herald", "-activity-retention", "-1"}, nil, "-activity-retention (HERALD_ACTIVITY_RETENTION)"},
		{"ErrNegativeVariable", []string{"herald"}, map[string]string{"HERALD_MESSAGE_RETENTION": "-2d"}, "HERALD_MESSAGE_RETENTION"},
		{"ErrUnreadable", []string{"herald"}, map[string]string{"HERALD_IN_APP_RETENTION": "a year"}, "HERALD_IN_APP_RETENTION"},
		{"ErrUnreadableDuration", []string{"herald", "-in-app-retention", "12x"}, nil, "-in-app-retention"},
		{"ErrNaN", []string{"herald", "-message-retention", "NaN"}, nil, "-message-retention"},
		{"ErrSweepEveryNegative", []string{"herald", "-sweep-every", "-1m"}, nil, "-sweep-every (HERALD_SWEEP_EVERY)"},
		{"ErrSweepEveryUnreadable", []string{"herald"}, map[string]string{"HERALD_SWEEP_EVERY": "hourly"}, "HERALD_SWEEP_EVERY"},
		{"ErrMmapUnreadable", []string{"herald"}, map[string]string{"HERALD_MMAP_SIZE": "lots"}, "HERALD_MMAP_SIZE"},
		{"ErrMmapNegative", []string{"herald", "-mmap-size", "-1"}, nil, "-mmap-size"},
		{"ErrPageCacheUnreadable", []string{"herald"}, map[string]string{"HERALD_PAGE_CACHE": "24MB"}, "HERALD_PAGE_CACHE"},
		{"ErrPageCacheNegative", []string{"herald", "-page-cache", "-1"}, nil, "-page-cache"},
		{"ErrPageCacheHuge", []string{"herald", "-page-cache", "4294967296"}, nil, "-page-cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"HERALD_DB": ":memory:", "HERALD_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			err := run(context.Background(), tc.args, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil)                             // refused before serving
			is.True(strings.Contains(err.Error(), tc.want)) // naming the setting
		})
	}
}

func TestMetrics_OwnAddress(t *testing.T) {
	is := is.New(t)
	metricsAddr := freeAddr(t)
	base, _, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:"}, "-metrics-addr", metricsAddr)
	families := platformtest.Scrape(t, "http://"+metricsAddr+"/metrics")
	_, ok := platformtest.Sample(families, "go_goroutines", nil)
	is.True(ok)                                // served on the metrics address
	is.Equal(get(t, base+"/metrics", ""), 401) // and not beside the API, where every other path needs a key
}

func TestMetrics_AddressInUseStopsTheStart(t *testing.T) {
	is := is.New(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // an address another process holds
	defer taken.Close()
	env := map[string]string{"HERALD_DB": ":memory:", "HERALD_ADDR": "127.0.0.1:0", "HERALD_METRICS_ADDR": taken.Addr().String()}
	err = run(context.Background(), []string{"herald"}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "metrics address")) // refused, naming the setting
}

func TestCompat_UnknownModeStopsTheStart(t *testing.T) {
	is := is.New(t)
	for _, env := range []map[string]string{{"HERALD_COMPAT": "nova"}, {"HERALD_COMPAT": "NOVU"}} {
		err := run(context.Background(), []string{"herald", "-db", ":memory:"}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
		is.True(err != nil)                                          // refused before serving
		is.True(strings.Contains(err.Error(), "novu"))               // naming the accepted value
		is.True(strings.Contains(err.Error(), env["HERALD_COMPAT"])) // and the one given
	}
	err := run(context.Background(), []string{"herald", "-compat", "x"}, func(string) string { return "" }, nil, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "novu")) // the flag too
}

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"30", 30 * 24 * time.Hour, true},
		{"365d", 365 * 24 * time.Hour, true},
		{"0", 0, true},
		{"0d", 0, true},
		{"36h", 36 * time.Hour, true},
		{" 7d ", 7 * 24 * time.Hour, true},
		{"-1", 0, false},
		{"-1h", 0, false},
		{"forever", 0, false},
		{"", 0, false},
		{"NaN", 0, false},
		{"1e309", 0, false},
		{"99999999d", 0, false},
	} {
		t.Run(tc.value, func(t *testing.T) {
			is := is.New(t)
			got, err := parseRetention("-x (HERALD_X)", tc.value)
			is.Equal(err == nil, tc.ok) // accepted or refused
			if tc.ok {
				is.Equal(got, tc.want) // the duration meant
			} else {
				is.True(err.Error()[:15] == "-x (HERALD_X): ") // the message names the setting
			}
		})
	}
}

// TestParseConfig_SweepEvery: the sweep runs at a tenth of the shortest
// retention, between a minute and an hour, unless -sweep-every or its
// variable says otherwise.
func TestParseConfig_PageCache(t *testing.T) {
	is := is.New(t)
	cfg, err := parseConfig(nil, func(string) string { return "" })
	is.NoErr(err)
	is.Equal(cfg.pageCache, int64(messaging.DefaultPageCache)) // kept by default
	is.Equal(pageCacheDep(cfg.pageCache), messaging.DefaultPageCache)
	cfg, err = parseConfig(nil, func(k string) string { return map[string]string{"HERALD_PAGE_CACHE": "0"}[k] })
	is.NoErr(err)
	is.True(pageCacheDep(cfg.pageCache) < 0) // 0 keeps none, which app.Deps spells negative
}

func TestParseConfig_SweepEvery(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want time.Duration
	}{
		{"OK defaults, an hour", nil, nil, time.Hour},
		{"OK a tenth of the shortest", []string{"-message-retention", "2h"}, nil, 12 * time.Minute},
		{"OK variables too", nil, map[string]string{"HERALD_IN_APP_RETENTION": "100m", "HERALD_ACTIVITY_RETENTION": "5h"}, 10 * time.Minute},
		{"OK at least a minute", []string{"-activity-retention", "1m"}, nil, time.Minute},
		{"OK forever is not the shortest", []string{"-activity-retention", "0", "-in-app-retention", "0", "-message-retention", "30m"}, nil, 3 * time.Minute},
		{"OK every one forever, an hour", []string{"-activity-retention", "0", "-in-app-retention", "0", "-message-retention", "0"}, nil, time.Hour},
		{"OK set by flag", []string{"-activity-retention", "1m", "-sweep-every", "30s"}, nil, 30 * time.Second},
		{"OK set by variable", nil, map[string]string{"HERALD_SWEEP_EVERY": "2h"}, 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			cfg, err := parseConfig(tc.args, func(k string) string { return tc.env[k] })
			is.NoErr(err)                          // accepted
			is.Equal(cfg.retention.Every, tc.want) // the sweep's cadence
		})
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to age a test database's schema
	"github.com/matryer/is"

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
		done <- run(ctx, append([]string{"herald", "serve"}, args...), func(k string) string { return env[k] }, &bytes.Buffer{}, stderr)
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
	deadline := time.Now().Add(10 * time.Second)
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
	t.Fatalf("%s not ready after 10s", url)
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
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"ErrUnknownCommand", []string{"herald", "launch"}, nil},
		{"ErrUnknownFlag", []string{"herald", "-nope"}, nil},
		{"ErrLogFormat", []string{"herald", "-log-format", "xml"}, nil},
		{"ErrShortSecret", []string{"herald", "-db", ":memory:", "-addr", "127.0.0.1:0"}, map[string]string{"HERALD_SECRET": "short"}},
		{"ErrMaxBody", []string{"herald"}, map[string]string{"HERALD_MAX_BODY": "lots"}},
		{"ErrMaxPayload", []string{"herald"}, map[string]string{"HERALD_MAX_PAYLOAD": "-1"}},
		{"ErrWriteRateFlag", []string{"herald", "-write-rate", "fast"}, nil},
		{"ErrKeys", []string{"herald", "keys", "rotate"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil) // refused before serving
		})
	}
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
		done <- run(context.Background(), []string{"herald", "serve"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
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

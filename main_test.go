package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
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

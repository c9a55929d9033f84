package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

func TestRun_Version(t *testing.T) {
	for _, args := range [][]string{{"herald", "version"}, {"herald", "-version"}, {"herald", "serve", "-version"}} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			is := is.New(t)
			var stdout bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, &stdout, &bytes.Buffer{})
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
				func(k string) string { return map[string]string{"HERALD_OUTBOUND_ALLOW": tc.allow}[k] }, &strings.Builder{}, &strings.Builder{})
			is.True(err != nil)                                              // the start stops
			is.True(strings.Contains(err.Error(), `"`+tc.named+`"`))         // naming the entry
			is.True(strings.Contains(err.Error(), platform.OutboundSetting)) // and the setting
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
		{"ErrMmapUnreadable", []string{"herald"}, map[string]string{"HERALD_MMAP_SIZE": "lots"}, "HERALD_MMAP_SIZE"},
		{"ErrMmapNegative", []string{"herald", "-mmap-size", "-1"}, nil, "-mmap-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"HERALD_DB": ":memory:", "HERALD_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			err := run(context.Background(), tc.args, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
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
	err = run(context.Background(), []string{"herald"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "metrics address")) // refused, naming the setting
}

func TestCompat_UnknownModeStopsTheStart(t *testing.T) {
	is := is.New(t)
	for _, env := range []map[string]string{{"HERALD_COMPAT": "nova"}, {"HERALD_COMPAT": "NOVU"}} {
		err := run(context.Background(), []string{"herald", "-db", ":memory:"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
		is.True(err != nil)                                          // refused before serving
		is.True(strings.Contains(err.Error(), "novu"))               // naming the accepted value
		is.True(strings.Contains(err.Error(), env["HERALD_COMPAT"])) // and the one given
	}
	err := run(context.Background(), []string{"herald", "-compat", "x"}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "novu")) // the flag too
}

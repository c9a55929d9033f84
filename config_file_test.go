package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// writeConfig writes a config file of the given lines and returns its path.
func writeConfig(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigFile_Precedence(t *testing.T) {
	file := writeConfig(t,
		"# settings for the test",
		"workers: 5",
		"log-level: debug",
		"max-snooze: 48h",
		"activity-retention: 90d",
		"write-rate: 7",
		"console-secure-cookies: true",
	)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want func(is *is.I, cfg config)
	}{
		{"FileAlone", map[string]string{"HERALD_CONFIG": file}, nil, func(is *is.I, cfg config) {
			is.Equal(cfg.workers, 5)                          // an int from the file
			is.Equal(cfg.logLevel, "debug")                   // a string
			is.Equal(cfg.maxSnooze, 48*time.Hour)             // a duration, as the flag takes it
			is.Equal(cfg.retention.Activity, 90*24*time.Hour) // a setting read after parsing
			is.Equal(cfg.limits.writeRate, 7.0)               // a setting declared with flag.Func
			is.True(cfg.console.SecureCookies)                // a bool
			is.Equal(cfg.addr, "127.0.0.1:3000")              // a setting the file leaves out keeps its default
		}},
		{"FileByFlag", map[string]string{}, []string{"-config", file}, func(is *is.I, cfg config) {
			is.Equal(cfg.workers, 5) // -config names the file too
		}},
		{"EnvironmentBeatsFile", map[string]string{"HERALD_CONFIG": file, "HERALD_WORKERS": "9", "HERALD_MAX_SNOOZE_HOURS": "2"}, nil, func(is *is.I, cfg config) {
			is.Equal(cfg.workers, 9)             // the variable wins
			is.Equal(cfg.maxSnooze, 2*time.Hour) // even one whose unit differs from the flag's
			is.Equal(cfg.logLevel, "debug")      // the file still sets the rest
		}},
		{"FlagBeatsEnvironmentAndFile", map[string]string{"HERALD_CONFIG": file, "HERALD_WORKERS": "9"}, []string{"-workers", "11", "-log-level", "warn"}, func(is *is.I, cfg config) {
			is.Equal(cfg.workers, 11)           // the flag wins over both
			is.Equal(cfg.logLevel, "warn")      // and over the file alone
			is.Equal(cfg.limits.writeRate, 7.0) // the file still sets the rest
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			cfg, err := parseConfig(tc.args, func(k string) string { return tc.env[k] })
			is.NoErr(err) // the settings are read
			tc.want(is, cfg)
		})
	}
}

func TestConfigFile_Errors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"ErrUnknownKey", []string{"addr: 127.0.0.1:4000", "", "wrokers: 5"}, "herald.yaml:3: unknown setting \"wrokers\""},
		{"ErrBadValue", []string{"workers: many"}, "herald.yaml:1: workers \"many\""},
		{"ErrCheckedAfter", []string{"log-format: xml"}, "HERALD_LOG_FORMAT"},
		{"ErrTwice", []string{"workers: 1", "workers: 2"}, "herald.yaml:2: \"workers\" is set twice, first on line 1"},
		{"ErrList", []string{"outbound-allow:", "  - 10.0.0.0/8"}, "herald.yaml:2: outbound-allow: want one value"},
		{"ErrNotAMapping", []string{"- workers"}, "herald.yaml:1: want settings"},
		{"ErrConfigInConfig", []string{"config: other.yaml"}, "herald.yaml:1: \"config\" is not a setting"},
		{"ErrYAML", []string{"workers: [1"}, "herald.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			path := writeConfig(t, tc.lines...)
			_, err := parseConfig(nil, func(k string) string { return map[string]string{"HERALD_CONFIG": path}[k] })
			is.True(err != nil)                             // the start is refused
			is.True(strings.Contains(err.Error(), tc.want)) // naming the file, the line and the problem
		})
	}
	t.Run("ErrMissingFile", func(t *testing.T) {
		is := is.New(t)
		_, err := parseConfig([]string{"-config", filepath.Join(t.TempDir(), "none.yaml")}, func(string) string { return "" })
		is.True(err != nil && strings.Contains(err.Error(), "none.yaml")) // a missing file is refused
	})
	t.Run("EmptyFile", func(t *testing.T) {
		is := is.New(t)
		_, err := parseConfig([]string{"-config", writeConfig(t, "# nothing yet")}, func(string) string { return "" })
		is.NoErr(err) // an empty file sets nothing
	})
}

// TestConfigFile_EverySettingNamesItsVariable keeps the environment's
// precedence over the file: the file finds each flag's variable in its
// usage.
func TestConfigFile_EverySettingNamesItsVariable(t *testing.T) {
	is := is.New(t)
	serveFlags(func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return
		}
		is.True(settingVariable.MatchString(f.Usage)) // its usage names its HERALD_* variable
	})
}

func TestConfigFile_StartLineNamesIt(t *testing.T) {
	is := is.New(t)
	file := writeConfig(t, "workers: 4")
	_, stderr, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:", "HERALD_LOG_FORMAT": "json", "HERALD_CONFIG": file})
	var start map[string]any
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"herald listening"`) {
			is.NoErr(json.Unmarshal([]byte(line), &start)) // the start line is JSON
		}
	}
	is.Equal(start["config"], file) // it names the file it read
	is.Equal(start["workers"], "4") // and the setting that came from it
}

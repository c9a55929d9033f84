package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

func TestRun_ConfiguredKeyRules(t *testing.T) {
	long := strings.Repeat("k", 32)
	for _, tc := range []struct {
		name, dev, prod, says string
	}{
		{"ErrShortDevelopmentKey", strings.Repeat("k", 31), "", "HERALD_API_KEY (-api-key) must be at least 32 characters"},
		{"ErrShortProductionKey", "", strings.Repeat("p", 31), "HERALD_PROD_API_KEY (-prod-api-key) must be at least 32 characters"},
		{"ErrSameKeyForBoth", long, long, "must differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"HERALD_DB": ":memory:", "HERALD_ADDR": "127.0.0.1:0", "HERALD_API_KEY": tc.dev, "HERALD_PROD_API_KEY": tc.prod}
			err := run(t.Context(), []string{"herald"}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil)                                                             // the start stops
			is.True(strings.Contains(err.Error(), tc.says))                                 // saying why
			is.True(!strings.Contains(err.Error(), tc.dev+tc.prod) || tc.dev+tc.prod == "") // without echoing the key
		})
	}
}

// keys runs `herald keys args…` on the database at path and returns its output.
func keys(t *testing.T, path string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	err := run(t.Context(), append([]string{"herald", "keys"}, args...), func(k string) string {
		return map[string]string{"HERALD_DB": path}[k]
	}, nil, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("herald keys %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

var createdKey = regexp.MustCompile(`Created Development API key ([0-9a-f]{24}) \(it is shown only this once\):\n([0-9a-f]{32})\n`)

func TestKeys_RevokeReachesRunningServer(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	configured := "configured-development-key-00000000"
	base, _, stop := startRun(t, map[string]string{"HERALD_DB": path, "HERALD_API_KEY": configured})

	m := createdKey.FindStringSubmatch(keys(t, path, "create", "-env", "Development"))
	is.True(m != nil) // the new key is printed once
	id, key := m[1], m[2]
	is.Equal(get(t, base+"/v1/environments", key), 200) // the running server takes it (and caches it)

	is.True(strings.Contains(keys(t, path, "revoke", id), "Revoked Development API key "+id)) // revoked by id
	revokedAt := time.Now()
	platformtest.Eventually(t, 2*time.Second, func() bool { return get(t, base+"/v1/environments", key) == 401 },
		"the revoked key to be refused")
	t.Logf("refused %s after the revoke", time.Since(revokedAt))
	is.Equal(get(t, base+"/v1/environments", configured), 200) // the other key still works

	is.True(strings.Contains(keys(t, path, "revoke", configured[len(configured)-4:]), "Revoked")) // by last four
	platformtest.Eventually(t, 2*time.Second, func() bool { return get(t, base+"/v1/environments", configured) == 401 },
		"the configured key to be refused")

	list := keys(t, path, "list")
	is.True(strings.Contains(list, id))           // the revoked key is still listed
	is.True(strings.Contains(list, "…"+key[28:])) // by its last four only
	is.True(!strings.Contains(list, key))         // never the key
	is.True(strings.Contains(list, "configured")) // with how it came to be
	is.NoErr(stop())                              // stopped
}

func TestKeys_ConfiguredKeyRotates(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	old, next := "old-development-key-0000000000000000", "new-development-key-0000000000000000"
	_, _, stop := startRun(t, map[string]string{"HERALD_DB": path, "HERALD_API_KEY": old})
	is.NoErr(stop()) // first start

	base, stderr, _ := startRun(t, map[string]string{"HERALD_DB": path, "HERALD_API_KEY": next})
	is.Equal(get(t, base+"/v1/environments", next), 200)                             // the new key works
	is.Equal(get(t, base+"/v1/environments", old), 401)                              // the one it replaced does not
	is.True(strings.Contains(stderr.String(), "replaces the one configured before")) // the start says so
}

func TestKeys_Errors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herald.db")
	_, _, stop := startRun(t, map[string]string{"HERALD_DB": path})
	if err := stop(); err != nil { // the database, made by a start
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ErrNoCommand", nil},
		{"ErrCreateWithoutEnv", []string{"create"}},
		{"ErrCreateUnknownEnv", []string{"create", "-env", "Staging"}},
		{"ErrRevokeUnknown", []string{"revoke", "zzzz"}},
		{"ErrRevokeNothing", []string{"revoke"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := run(t.Context(), append([]string{"herald", "keys"}, tc.args...), func(k string) string {
				return map[string]string{"HERALD_DB": path}[k]
			}, nil, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil) // refused with a message
		})
	}
}

// TestRun_Help: every way of asking for help succeeds and shows the
// commands asked about, each with every flag it reads.
func TestRun_Help(t *testing.T) {
	users := []string{"users list", "users create", "users set-role", "users reset-password", "users remove"}
	every := append([]string{"serve", "keys list", "keys create", "keys revoke", "backup", "restore", "healthcheck", "version", "help"}, users...)
	for _, tc := range []struct {
		args  []string
		shows []string // the commands whose usage and flags it shows
	}{
		{[]string{"-h"}, every},
		{[]string{"--help"}, every},
		{[]string{"help"}, every},
		{[]string{"help", "-h"}, every},
		{[]string{"-db", ":memory:", "-h"}, every},
		{[]string{"help", "serve"}, []string{"serve"}},
		{[]string{"serve", "-h"}, []string{"serve"}},
		{[]string{"serve", "-db", ":memory:", "-help"}, []string{"serve"}},
		{[]string{"help", "keys"}, []string{"keys list", "keys create", "keys revoke"}},
		{[]string{"keys", "-h"}, []string{"keys list", "keys create", "keys revoke"}},
		{[]string{"help", "keys", "revoke"}, []string{"keys revoke"}},
		{[]string{"keys", "list", "-h"}, []string{"keys list"}},
		{[]string{"keys", "create", "-h"}, []string{"keys create"}},
		{[]string{"keys", "revoke", "3f9a", "-h"}, []string{"keys revoke"}},
		{[]string{"help", "users"}, users},
		{[]string{"users", "-h"}, users},
		{[]string{"users", "create", "-h"}, []string{"users create"}},
		{[]string{"help", "users", "reset-password"}, []string{"users reset-password"}},
		{[]string{"help", "version"}, []string{"version"}},
		{[]string{"version", "-h"}, []string{"version"}},
		{[]string{"help", "help"}, []string{"help"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			is := is.New(t)
			var stdout bytes.Buffer
			err := run(t.Context(), append([]string{"herald"}, tc.args...), func(string) string { return "" }, nil, &stdout, &bytes.Buffer{})
			is.NoErr(err) // help is not an error: the exit status is 0
			out := stdout.String()
			for _, c := range commands {
				shown := slices.Contains(tc.shows, c.name)
				is.Equal(strings.Contains(out, usage(c.name)+"\n"), shown) // the usage of each command asked about, and no other
				if c.flags == nil || !shown {
					continue
				}
				c.flags(func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
					is.True(regexp.MustCompile(`(?m)^  -` + f.Name + `\b`).MatchString(out)) // each of its flags
				})
			}
		})
	}
}

func TestRun_HelpOnUnknownCommand(t *testing.T) {
	is := is.New(t)
	err := run(t.Context(), []string{"herald", "help", "launch"}, func(string) string { return "" }, nil, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), `"launch"`)) // an unknown topic is an error, named
}

// TestKeys_FlagsAfterArguments: flags work before or after a keys
// command's arguments, and "--" ends the flags.
func TestKeys_FlagsAfterArguments(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	configured := "configured-development-key-00000000"
	_, _, stop := startRun(t, map[string]string{"HERALD_DB": path, "HERALD_API_KEY": configured})
	is.NoErr(stop()) // the database exists, with its keys

	noEnv := func(string) string { return "" }
	var out bytes.Buffer
	is.NoErr(run(t.Context(), []string{"herald", "keys", "create", "-env", "Development", "-db", path}, noEnv, nil, &out, &bytes.Buffer{}))          // flags only
	is.NoErr(run(t.Context(), []string{"herald", "keys", "revoke", configured[len(configured)-4:], "-db", path}, noEnv, nil, &out, &bytes.Buffer{})) // -db after the argument
	is.True(strings.Contains(out.String(), "Revoked Development API key"))                                                                           // revoked in the database -db names
	err := run(t.Context(), []string{"herald", "keys", "revoke", "-db", path, "--", "-db"}, noEnv, nil, &out, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), `"-db"`)) // after --, -db is the key to revoke
	err = run(t.Context(), []string{"herald", "keys", "revoke", "a", "b", "-db", path}, noEnv, nil, &out, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "usage: herald keys revoke")) // one argument, not two
}

// TestKeys_MissingDatabase: keys on a SQLite path where no database is
// says so and creates nothing, whichever the command.
func TestKeys_MissingDatabase(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"create", "-env", "Development"}, {"revoke", "3f9a"}} {
		t.Run(args[0], func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "typo.db")
			err := run(t.Context(), append([]string{"herald", "keys"}, append(args, "-db", path)...), func(string) string { return "" }, nil, &bytes.Buffer{}, &bytes.Buffer{})
			is.True(err != nil && strings.Contains(err.Error(), "no database at "+path)) // says so
			entries, err := os.ReadDir(filepath.Dir(path))
			is.NoErr(err)             // the directory is there
			is.Equal(len(entries), 0) // and holds nothing new: no database, no journal
		})
	}
}

// TestKeys_ReadTheConfigFile: the commands on the server's database find
// it in the file HERALD_CONFIG names, as serve does, below the
// environment; a file serve would refuse is refused.
func TestKeys_ReadTheConfigFile(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	_, _, stop := startRun(t, map[string]string{"HERALD_DB": path})
	is.NoErr(stop())
	file := filepath.Join(dir, "herald.yaml")
	is.NoErr(os.WriteFile(file, []byte("db: "+path+"\n"), 0o600))
	runKeys := func(env map[string]string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), []string{"herald", "keys", "list"}, func(k string) string { return env[k] }, nil, &out, &bytes.Buffer{})
		return out.String(), err
	}

	out, err := runKeys(map[string]string{"HERALD_CONFIG": file})
	is.NoErr(err)                                 // the file names the database
	is.True(strings.Contains(out, "Development")) // whose keys are listed
	is.Equal(strings.Count(out, "\n"), 3)         // a heading and the two keys the start made
	typo := filepath.Join(dir, "typo.db")
	_, err = runKeys(map[string]string{"HERALD_CONFIG": file, "HERALD_DB": typo})
	is.True(err != nil && strings.Contains(err.Error(), "no database at "+typo)) // the environment wins

	is.NoErr(os.WriteFile(file, []byte("db: "+path+"\ndatabase: x\n"), 0o600))
	_, err = runKeys(map[string]string{"HERALD_CONFIG": file})
	is.True(err != nil && strings.Contains(err.Error(), "herald.yaml:2: unknown setting")) // refused with its line
}

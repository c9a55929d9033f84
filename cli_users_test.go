package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// users runs `herald users args…` on the database at path, with stdin,
// and returns its output and error.
func users(t *testing.T, path, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(t.Context(), append([]string{"herald", "users"}, args...), func(k string) string {
		return map[string]string{"HERALD_DB": path}[k]
	}, strings.NewReader(stdin), &out, &bytes.Buffer{})
	return out.String(), err
}

// signIn signs in to the console at base and returns the browser's client,
// and where the console sent it.
func signIn(t *testing.T, base, email, password string) (*http.Client, int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/login", strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return client, res.StatusCode, res.Header.Get("Location")
}

// page reads a console page with client and returns its status and where
// it sends the reader.
func page(t *testing.T, client *http.Client, u string) (int, string) {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

var oneTimePassword = regexp.MustCompile(`shown only this once[^\n]*:\n(\S+)\n`)

func TestUsers_AgainstARunningServer(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	base, stderr, stop := startRun(t, map[string]string{"HERALD_DB": path})
	setup := regexp.MustCompile(`console_setup="?([^"\s]+)`).FindStringSubmatch(stderr.String())
	is.True(setup != nil)                                              // the first start prints a setup link
	is.True(strings.HasPrefix(setup[1], base+"/console/setup?token=")) // to this server's console
	status, _ := page(t, http.DefaultClient, setup[1])
	is.Equal(status, 200) // which opens the setup page

	out, err := users(t, path, "", "create", "-email", "ada@example.com", "-name", "Ada Lovelace", "-role", "admin")
	is.NoErr(err)
	m := oneTimePassword.FindStringSubmatch(out)
	is.True(m != nil) // a generated one-time password, printed once
	ada, status, _ := signIn(t, base, "ada@example.com", m[1])
	is.Equal(status, http.StatusSeeOther) // the running server takes it
	_, to := page(t, ada, base+"/console/team")
	is.Equal(to, "/console/account") // and asks for a password of her own first

	out, err = users(t, path, "bob's own passphrase\n", "create", "-email", "bob@example.com", "-name", "Bob", "-role", "viewer", "-password-stdin")
	is.NoErr(err)
	is.True(!strings.Contains(out, "bob's own passphrase")) // a password given is not printed
	bob, status, _ := signIn(t, base, "bob@example.com", "bob's own passphrase")
	is.Equal(status, http.StatusSeeOther) // it works as given
	status, _ = page(t, bob, base+"/console/account")
	is.Equal(status, 200) // with no change asked

	_, err = users(t, path, "", "set-role", "bob@example.com", "-role", "editor")
	is.NoErr(err)
	list, err := users(t, path, "", "list")
	is.NoErr(err)
	is.True(regexp.MustCompile(`bob@example.com\s+Bob\s+editor\s+set`).MatchString(list))              // the new role
	is.True(regexp.MustCompile(`ada@example.com\s+Ada Lovelace\s+admin\s+one-time`).MatchString(list)) // each with how they sign in
	is.True(!strings.Contains(list, m[1]))                                                             // never a password

	out, err = users(t, path, "", "reset-password", "bob@example.com")
	is.NoErr(err)
	is.True(oneTimePassword.MatchString(out)) // a new one-time password
	_, status, _ = signIn(t, base, "bob@example.com", "bob's own passphrase")
	is.Equal(status, http.StatusUnauthorized) // the old one no longer works
	status, _ = page(t, bob, base+"/console/account")
	is.Equal(status, http.StatusSeeOther) // and the session it opened has ended

	out, err = users(t, path, "", "remove", "ada@example.com")
	is.True(err != nil)                                  // the last admin stays
	is.True(strings.Contains(err.Error(), "last admin")) // saying why
	_, err = users(t, path, "", "remove", "bob@example.com")
	is.NoErr(err)
	is.NoErr(stop())

	_, stderr, _ = startRun(t, map[string]string{"HERALD_DB": path})
	is.True(!strings.Contains(stderr.String(), "console_setup")) // with a team, no start prints a setup link
}

func TestUsers_Errors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herald.db")
	_, _, stop := startRun(t, map[string]string{"HERALD_DB": path})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		says        string
	}{
		{"ErrNoCommand", "", nil, "herald users needs"},
		{"ErrUnknownCommand", "", []string{"promote"}, "unknown users command"},
		{"ErrCreateWithoutRole", "", []string{"create", "-email", "a@example.com", "-name", "A"}, "-role"},
		{"ErrCreateBadEmail", "", []string{"create", "-email", "nobody", "-name", "A", "-role", "viewer"}, "-email must be an email address"},
		{"ErrShortPassword", "short\n", []string{"create", "-email", "a@example.com", "-name", "A", "-role", "viewer", "-password-stdin"}, "-password must be at least 12"},
		{"ErrEmptyStdin", "", []string{"create", "-email", "a@example.com", "-name", "A", "-role", "viewer", "-password-stdin"}, "stdin held no password"},
		{"ErrUnknownMember", "", []string{"remove", "nobody@example.com"}, "No member"},
		{"ErrNoSuchDatabase", "", []string{"list", "-db", filepath.Join(t.TempDir(), "nope.db")}, "no database at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := users(t, path, tc.stdin, tc.args...)
			is.True(err != nil)                                           // refused
			is.True(strings.Contains(err.Error(), tc.says) || t.Failed()) // saying why
			if !strings.Contains(err.Error(), tc.says) {
				t.Logf("said: %v", err)
			}
		})
	}
}

package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

func TestConsole_FirstRun(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	b := newBrowser(t, srv)

	res := b.get("/")
	is.Equal(res.status, http.StatusFound) // the root
	is.Equal(res.location, "/console/")    // opens the console
	res = b.get("/console/")
	is.Equal(res.status, http.StatusSeeOther) // without a session
	is.Equal(res.location, "/console/login")  // the sign-in page
	res = b.get("/console/login")
	is.True(strings.Contains(res.body, "no team yet")) // which says only a setup link opens it

	token, err := srv.Console.Accounts().SetupLink(context.Background())
	is.NoErr(err)
	res = b.get("/console/setup?token=" + url.QueryEscape(token))
	is.Equal(res.status, http.StatusOK)                           // the link opens the setup page
	is.Equal(res.header.Get("Referrer-Policy"), "no-referrer")    // which sends its token to no one
	is.True(strings.Contains(res.body, "Create the first admin")) // for the first admin

	form := url.Values{"token": {token}, "name": {"Ada"}, "email": {"ada@example.com"}, "password": {password}, "confirm": {"not the same"}}
	res = b.post("/console/setup", form)
	is.Equal(res.status, http.StatusUnprocessableEntity)  // a mistyped confirmation
	is.True(strings.Contains(res.body, "does not match")) // is said
	form.Set("confirm", password)
	res = b.post("/console/setup", form)
	is.Equal(res.status, http.StatusSeeOther) // the admin is created
	res = b.get("/console/")
	is.Equal(res.status, http.StatusFound) // and signed in: the console opens
	is.Equal(res.location, devURL(srv))    // at the first environment

	again := newBrowser(t, srv)
	form.Set("email", "eve@example.com")
	res = again.post("/console/setup", form)
	is.Equal(res.status, http.StatusGone) // the link works once
	users, err := srv.Console.Accounts().Users(context.Background(), srv.App.Development.OrganizationID)
	is.NoErr(err)
	is.Equal(len(users), 1) // and made one admin
}

func TestSession_Expiry(t *testing.T) {
	srv := apptest.NewServer(t)
	clock := srv.App.Clock
	t.Run("idle", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "idle@example.com", platform.RoleViewer)
		clock.Advance(platform.DefaultConsoleIdle - time.Minute)
		is.Equal(b.get(devURL(srv)).status, http.StatusOK) // used within the idle time, it lives on
		clock.Advance(platform.DefaultConsoleIdle - time.Minute)
		is.Equal(b.get(devURL(srv)).status, http.StatusOK) // and again, since each use counts
		clock.Advance(platform.DefaultConsoleIdle + time.Minute)
		res := b.get(devURL(srv))
		is.Equal(res.status, http.StatusSeeOther)                        // left idle longer, it ends
		is.True(strings.HasPrefix(res.location, "/console/login?next=")) // and the page asks to sign in
	})
	t.Run("absolute", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "busy@example.com", platform.RoleViewer)
		for used := time.Duration(0); used < platform.DefaultConsoleMaxAge-6*time.Hour; used += 6 * time.Hour {
			clock.Advance(6 * time.Hour)
			is.Equal(b.get(devURL(srv)).status, http.StatusOK) // in use every few hours
		}
		clock.Advance(7 * time.Hour)
		is.Equal(b.get(devURL(srv)).status, http.StatusSeeOther) // still it ends seven days after sign-in
	})
}

func TestSession_EndsAtOnce(t *testing.T) {
	srv := apptest.NewServer(t)
	ctx := context.Background()
	accounts := srv.Console.Accounts()
	org := srv.App.Development.OrganizationID
	member(t, srv, "admin@example.com", platform.RoleAdmin) // so the others may go

	t.Run("sign out", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "out@example.com", platform.RoleViewer)
		is.Equal(b.post("/console/logout", nil).status, http.StatusSeeOther) // signed out
		is.Equal(b.get(devURL(srv)).status, http.StatusSeeOther)             // the session is gone
	})
	t.Run("a stolen cookie after sign out", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "stolen@example.com", platform.RoleViewer)
		u, _ := url.Parse(srv.URL + "/console/")
		cookies := b.client.Jar.Cookies(u)
		b.post("/console/logout", nil)
		thief := newBrowser(t, srv)
		thief.client.Jar.SetCookies(u, cookies)
		is.Equal(thief.get(devURL(srv)).status, http.StatusSeeOther) // the old cookie opens nothing
	})
	t.Run("removed", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "gone@example.com", platform.RoleEditor)
		_, err := accounts.Remove(ctx, org, "gone@example.com")
		is.NoErr(err)
		is.Equal(b.get(devURL(srv)).status, http.StatusSeeOther) // a removed member's session is refused at once
	})
	t.Run("new role", func(t *testing.T) {
		is := is.New(t)
		b := member(t, srv, "demoted@example.com", platform.RoleAdmin)
		is.Equal(b.get("/console/team").status, http.StatusOK) // an admin sees the team
		_, err := accounts.SetRole(ctx, org, "demoted@example.com", platform.RoleViewer)
		is.NoErr(err)
		is.Equal(b.get("/console/team").status, http.StatusForbidden) // the new role applies at the next request
	})
}

func TestConsole_ForgedPostsRefused(t *testing.T) {
	srv := apptest.NewServer(t)
	for _, tc := range []struct {
		name    string
		forge   func(b *browser, form url.Values)
		headers map[string]string
	}{
		{"no token", func(b *browser, form url.Values) { form.Set("_csrf", "") }, nil},
		{"another session's token", func(b *browser, form url.Values) { form.Set("_csrf", "bm90LXRoaXMtc2Vzc2lvbnMtdG9rZW4") }, nil},
		{"another origin", func(b *browser, form url.Values) { b.origin = "https://evil.example" }, nil},
		{"another site, by Sec-Fetch-Site", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			b := member(t, srv, strings.ReplaceAll(tc.name, " ", "-")+"@example.com", platform.RoleViewer)
			form := url.Values{"_csrf": {b.csrf}}
			if tc.forge != nil {
				tc.forge(b, form)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/console/logout", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", b.origin)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			res := b.do(req)
			is.Equal(res.status, http.StatusForbidden)         // the forged post is refused
			is.Equal(b.get(devURL(srv)).status, http.StatusOK) // and did nothing: still signed in
		})
	}
	t.Run("a forged sign-in", func(t *testing.T) {
		is := is.New(t)
		b := newBrowser(t, srv)
		b.origin = "https://evil.example"
		res := b.post("/console/login", url.Values{"email": {"forged-sign-in@example.com"}, "password": {password}})
		is.Equal(res.status, http.StatusForbidden) // a sign-in form on another site cannot sign anyone in
	})
}

func TestSignIn_RateLimited(t *testing.T) {
	// The default bursts, refilled slowly enough that a slow machine's
	// attempts cannot earn one back.
	slow := apptest.Console(platform.ConsoleConfig{AddressRefill: time.Hour, AccountRefill: time.Hour})
	t.Run("per account", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t, slow)
		member(t, srv, "ada@example.com", platform.RoleViewer)
		b := newBrowser(t, srv)
		for i := range 10 {
			res := b.post("/console/login", url.Values{"email": {"ada@example.com"}, "password": {"guess number " + string(rune('a'+i))}})
			is.Equal(res.status, http.StatusUnauthorized) // a wrong password
		}
		res := b.post("/console/login", url.Values{"email": {"ada@example.com"}, "password": {password}})
		is.Equal(res.status, http.StatusTooManyRequests) // past the limit even the right one waits
		is.True(res.header.Get("Retry-After") != "")     // and says for how long
	})
	t.Run("per address", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t, slow)
		member(t, srv, "bob@example.com", platform.RoleViewer)
		b := newBrowser(t, srv)
		for i := range 20 {
			res := b.post("/console/login", url.Values{"email": {"nobody" + string(rune('a'+i)) + "@example.com"}, "password": {"guess"}})
			is.Equal(res.status, http.StatusUnauthorized) // unknown accounts
		}
		res := b.post("/console/login", url.Values{"email": {"bob@example.com"}, "password": {password}})
		is.Equal(res.status, http.StatusTooManyRequests) // the address has used its attempts on every account
	})
}

func TestConsole_SecurityHeaders(t *testing.T) {
	srv := apptest.NewServer(t)
	b := member(t, srv, "ada@example.com", platform.RoleAdmin)
	for _, path := range []string{"/console/login", devURL(srv), "/console/account", "/console/no-such-page"} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			res := b.get(path)
			csp := res.header.Get("Content-Security-Policy")
			is.True(strings.Contains(csp, "frame-ancestors 'none'"))                // no site may frame it
			is.True(strings.Contains(csp, "script-src 'self';"))                    // scripts of its own only
			is.True(!strings.Contains(csp, "unsafe-inline"))                        // no inline script or style
			is.Equal(res.header.Get("X-Content-Type-Options"), "nosniff")           // no sniffing
			is.True(strings.HasPrefix(res.header.Get("Content-Type"), "text/html")) // a page
		})
	}
}

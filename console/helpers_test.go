package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// password is every test member's password.
const password = "correct horse battery"

// browser is a member's browser: a cookie jar, and the CSRF token of the
// last page it read, which its forms post back as the console's forms do.
type browser struct {
	t      testing.TB
	srv    *apptest.Server
	client *http.Client
	csrf   string
	origin string // the Origin its posts carry; the console's own by default
}

// newBrowser returns a browser that has signed in to nothing yet.
func newBrowser(t testing.TB, srv *apptest.Server) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{t: t, srv: srv, client: client, origin: srv.URL}
}

// member adds a member with role to the team and returns their browser,
// signed in.
func member(t testing.TB, srv *apptest.Server, email string, role platform.Role) *browser {
	t.Helper()
	accounts := srv.Console.Accounts()
	org, err := accounts.Organization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Create(context.Background(), org, platform.NewConsoleUser{Email: email, Name: strings.Split(email, "@")[0],
		Role: role, Password: password}); err != nil {
		t.Fatalf("create %s: %v", email, err)
	}
	b := newBrowser(t, srv)
	if res := b.post("/console/login", url.Values{"email": {email}, "password": {password}}); res.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d\n%s", email, res.status, res.body)
	}
	b.get("/console/account") // a page, for its CSRF token
	return b
}

// response is a page as a browser got it.
type response struct {
	status   int
	body     string
	header   http.Header
	location string
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfField.FindSubmatch(body); m != nil {
		b.csrf = string(m[1])
	}
	return response{status: res.StatusCode, body: string(body), header: res.Header, location: res.Header.Get("Location")}
}

// get reads a page.
func (b *browser) get(path string) response {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	return b.do(req)
}

// post submits a form as a console page does: from the browser's origin,
// with the CSRF token of the last page read.
func (b *browser) post(path string, form url.Values) response {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if b.csrf != "" && !form.Has("_csrf") {
		form.Set("_csrf", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	return b.do(req)
}

// devURL is the path of a page of the Development environment.
func devURL(srv *apptest.Server, parts ...string) string {
	return "/console/env/" + srv.App.Development.ID + "/" + strings.Join(parts, "/")
}

// seed gives srv's Development environment what the pages show: a
// workflow of an in-app and an email step, subscribers ada and bob, a
// topic beta with ada in it, and one trigger to ada.
func seed(t testing.TB, srv *apptest.Server) {
	t.Helper()
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"subject":"Welcome!","body":"Hello {{ subscriber.firstName }}"}},
			{"name":"Email","type":"email","controlValues":{"subject":"Hi","body":"<p>Hi {{ subscriber.firstName }}</p>"}}]}`},
		{"POST", "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`},
		{"POST", "/v1/subscribers", `{"subscriberId":"bob","firstName":"Bob"}`},
		{"POST", "/v1/topics", `{"key":"beta","name":"Beta"}`},
		{"POST", "/v1/topics/beta/subscribers", `{"subscribers":["ada"]}`},
		{"POST", "/v1/events/trigger", `{"name":"welcome","to":"ada"}`},
	} {
		if res := srv.Dev.Do(t, c.method, c.path, c.body); res.Status >= 300 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, res.Status, res.Body)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

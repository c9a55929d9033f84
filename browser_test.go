package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// The browser test opens the reference platform's own inbox component
// (@novu/js, pinned in testdata/inbox/package-lock.json, unmodified) in
// headless Chromium against Herald. It needs Debian's chromium and the npm
// packages:
//
//	apt-get install -y chromium
//	(cd testdata/inbox && npm ci)
//
// Without them it skips, unless HERALD_BROWSER_TEST=1 (set by .ci/run)
// makes it mandatory. HERALD_CHROMIUM names another Chromium binary.

const browserHowTo = "install Chromium (apt-get install -y chromium) and the npm packages " +
	"(cd testdata/inbox && npm ci), or set HERALD_BROWSER_TEST=1 to make this test fail instead of skip"

// browserTools finds what the browser test needs, or says what is missing.
func browserTools(t *testing.T) (node, chromium, dir string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("HERALD_BROWSER_TEST") == "1" {
			t.Fatalf("browser test: %s is missing (%s)", what, browserHowTo)
		}
		t.Skipf("browser test skipped: %s is missing; to run it, %s", what, browserHowTo)
	}
	chromium = os.Getenv("HERALD_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing("Chromium at " + chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	dir, _ = filepath.Abs(filepath.Join("testdata", "inbox"))
	for _, p := range []string{"node_modules/@novu/js", "node_modules/playwright-core", "node_modules/.bin/esbuild"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			missing("testdata/inbox/" + p)
		}
	}
	return node, chromium, dir
}

func TestBrowser_NovuInbox(t *testing.T) {
	node, chromium, dir := browserTools(t)
	is := is.New(t)
	srv := apptest.NewServer(t)
	hmacOn := srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppIntegrationID(t, srv), `{"credentials":{"hmac":true}}`)
	is.Equal(hmacOn.Status, 200) // sessions need the team's HMACs
	apptest.CreateHello(t, srv, "{{ payload.text }}")
	apptest.Trigger(t, srv, `{"name":"hello","to":{"subscriberId":"ada","firstName":"Ada"},"payload":{"text":"First"}}`)

	// The bundle of the page's script, as a team's build would make it.
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, filepath.Join(dir, "node_modules/.bin/esbuild"), "page.js", "--bundle",
		"--format=esm", "--log-level=warning", "--outfile="+filepath.Join(out, "bundle.js"))
	build.Dir = dir
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}

	// The page is served from another origin than Herald, as a team's app
	// is: every inbox call is cross-origin and needs Herald's CORS. Its
	// team's backend signs the subscriber and, for ?tenant=, the context
	// it opens the inbox in (?badHash=1 signs another).
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bundle.js" {
			w.Header().Set("Content-Type", "text/javascript")
			http.ServeFile(w, r, filepath.Join(out, "bundle.js"))
			return
		}
		cfg, _ := json.Marshal(inboxPageConfig(srv, r.URL.Query().Get("tenant"), r.URL.Query().Get("badHash") == "1"))
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Inbox</title></head>
<body><div id="inbox"></div><script>window.HERALD = %s;</script><script type="module" src="/bundle.js"></script></body></html>`, cfg)
	}))
	defer page.Close()

	drive := exec.CommandContext(ctx, node, "drive.mjs")
	drive.Dir = dir
	drive.Env = append(os.Environ(), "PAGE_URL="+page.URL, "API_URL="+srv.URL, "API_KEY="+platformtest.DevKey,
		"CHROMIUM="+chromium, "SUBSCRIBER_ID=ada")
	var stdout, stderr bytes.Buffer
	drive.Stdout, drive.Stderr = &stdout, &stderr
	if err := drive.Run(); err != nil {
		t.Fatalf("the browser failed: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var result struct {
		OK     bool     `json:"ok"`
		Errors []string `json:"errors"`
	}
	is.NoErr(json.Unmarshal([]byte(lines[len(lines)-1]), &result)) // the driver's verdict
	is.True(result.OK)                                             // every step passed
	t.Logf("browser console errors: %v", result.Errors)

	// What the browser did is what the API shows.
	var msgs struct {
		Data []struct {
			Content string `json:"content"`
			Read    bool   `json:"read"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?channel=in_app&subscriberId=ada", "").Decode(t, &msgs)
	is.Equal(len(msgs.Data), 5) // every notification, of every context
	for _, m := range msgs.Data {
		if m.Content == "First" || m.Content == "Second" {
			is.True(m.Read) // First read by its button, Second read by archiving it
		}
	}

	// The schedule the page set through @novu/js, one day per call, is
	// the subscriber's: both days, as the API reads it.
	var global struct {
		Schedule struct {
			IsEnabled      bool `json:"isEnabled"`
			WeeklySchedule map[string]struct {
				IsEnabled bool `json:"isEnabled"`
				Hours     []struct {
					Start string `json:"start"`
					End   string `json:"end"`
				} `json:"hours"`
			} `json:"weeklySchedule"`
		} `json:"schedule"`
	}
	srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences/global", "").Decode(t, &global)
	is.True(global.Schedule.IsEnabled)                                              // on
	is.Equal(global.Schedule.WeeklySchedule["monday"].Hours[0].Start, "09:00 AM")   // the first call's day
	is.Equal(global.Schedule.WeeklySchedule["saturday"].Hours[0].Start, "10:00 PM") // the second call's, past midnight
	is.Equal(global.Schedule.WeeklySchedule["saturday"].Hours[0].End, "02:00 AM")
}

// inboxPageConfig is what the page's inbox is opened with: ada, signed,
// and the tenant context when tenant is given, signed too, or signed as
// another when badHash.
func inboxPageConfig(srv *apptest.Server, tenant string, badHash bool) map[string]any {
	cfg := map[string]any{"applicationIdentifier": srv.App.Development.Identifier, "subscriberId": "ada",
		"subscriberHash": platform.SubscriberHash(platformtest.DevKey, "ada"), "apiUrl": srv.URL}
	if tenant != "" {
		cfg["context"] = map[string]string{"tenant": tenant}
		signed := tenant
		if badHash {
			signed += "-not"
		}
		// The canonical JSON of the context, as the team's backend signs it.
		cfg["contextHash"] = platform.SubscriberHash(platformtest.DevKey, `{"tenant":"`+signed+`"}`)
	}
	return cfg
}

// inAppIntegrationID returns the _id of the Development in-app integration.
func inAppIntegrationID(t *testing.T, srv *apptest.Server) string {
	t.Helper()
	var list []struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
		Channel       string `json:"channel"`
	}
	srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &list)
	for _, in := range list {
		if in.Channel == "in_app" && in.EnvironmentID == srv.App.Development.ID {
			return in.ID
		}
	}
	t.Fatal("no in-app integration")
	return ""
}

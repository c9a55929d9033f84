package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// The console's browser test drives headless Chromium through the console
// with playwright-core (pinned in testdata/console/package-lock.json):
//
//	apt-get install -y chromium
//	(cd testdata/console && npm ci)
//
// Without them it skips, unless HERALD_BROWSER_TEST=1 (set by .ci/run)
// makes it mandatory. Its screenshots go to HERALD_ARTIFACTS/console, or
// artifacts/console in the checkout (not committed).
func TestBrowser_Console(t *testing.T) {
	chromium := os.Getenv("HERALD_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "console"))
	node, err := exec.LookPath("node")
	for what, missing := range map[string]bool{
		"Chromium at " + chromium: fileMissing(chromium),
		"node":                    err != nil,
		"testdata/console/node_modules/playwright-core": fileMissing(filepath.Join(dir, "node_modules", "playwright-core")),
	} {
		if !missing {
			continue
		}
		if os.Getenv("HERALD_BROWSER_TEST") == "1" {
			t.Fatalf("browser test: %s is missing (apt-get install -y chromium; cd testdata/console && npm ci)", what)
		}
		t.Skipf("browser test skipped: %s is missing; apt-get install -y chromium and (cd testdata/console && npm ci), or set HERALD_BROWSER_TEST=1 to fail instead", what)
	}
	is := is.New(t)
	srv := apptest.NewServer(t)

	// A receiver for the email integration's posts, the chat
	// integration's check and the webhook endpoint's deliveries.
	var signed atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/webhook" && r.Header.Get("webhook-signature") != "" {
			signed.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"receiver-message-1"}`))
	}))
	defer receiver.Close()
	for _, body := range []string{
		`{"providerId":"email-webhook","channel":"email","active":true,"credentials":{"webhookUrl":"` + receiver.URL + `/email","from":"herald@example.com"}}`,
	} {
		res := srv.Dev.Do(t, "POST", "/v1/integrations", body)
		is.Equal(res.Status, 201) // the email integration
	}
	res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"subject":"Welcome!","body":"Hello {{ subscriber.firstName }}, order {{ payload.order }} shipped"}},
		{"name":"Email","type":"email","controlValues":{"subject":"Order {{ payload.order }}","body":"<h1>Hi {{ subscriber.firstName }}</h1><p>Order {{ payload.order }} shipped.</p>"}}]}`)
	is.Equal(res.Status, 201) // the workflow
	res = srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`)
	is.Equal(res.Status, 201) // the subscriber
	token, err := srv.Console.Accounts().SetupLink(context.Background())
	is.NoErr(err) // the first run's setup link

	artifacts := filepath.Join(os.Getenv("HERALD_ARTIFACTS"), "console")
	if os.Getenv("HERALD_ARTIFACTS") == "" {
		artifacts, _ = filepath.Abs(filepath.Join("artifacts", "console"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a loaded CI machine walks it slowly
	defer cancel()
	drive := exec.CommandContext(ctx, node, "drive.mjs")
	drive.Dir = dir
	drive.Env = append(os.Environ(), "BASE="+srv.URL, "SETUP_URL="+srv.URL+"/console/setup?token="+token,
		"API_KEY="+platformtest.DevKey, "CHROMIUM="+chromium, "ARTIFACTS="+artifacts, "RECEIVER="+receiver.URL)
	var stdout, stderr bytes.Buffer
	drive.Stdout, drive.Stderr = &stdout, &stderr
	runErr := drive.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var result struct {
		OK     bool     `json:"ok"`
		Error  string   `json:"error"`
		Errors []string `json:"errors"`
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &result)
	if runErr != nil || !result.OK {
		t.Fatalf("the browser failed: %v\n%s\n%s\n%s", runErr, result.Error, stdout.String(), stderr.String())
	}
	if len(result.Errors) > 0 {
		t.Errorf("the pages logged errors (a refused script or style among them): %q", result.Errors)
	}
	t.Logf("screenshots in %s\n%s", artifacts, stdout.String())

	keys, err := platform.ListAPIKeys(context.Background(), srv.App.DB)
	is.NoErr(err)
	revoked := 0
	for _, k := range keys {
		if k.Source == platform.KeyCreated && k.RevokedAt != "" {
			revoked++
		}
	}
	is.Equal(revoked, 1)        // the key the console made is revoked
	is.True(signed.Load() >= 1) // the endpoint the console made got its test event, signed
}

func fileMissing(path string) bool {
	_, err := os.Stat(path)
	return err != nil
}

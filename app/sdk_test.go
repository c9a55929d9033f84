package app_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// TestSDK_NovuAPI runs testdata/novu-api/sdk.mjs, the reference platform's
// unmodified @novu/api SDK (pinned in its package-lock.json), against Herald
// in compatibility mode: it creates and reads a workflow, triggers it,
// lists notifications, subscribes to and unsubscribes from a topic, and
// runs every other operation Herald serves, and fails on any answer the
// SDK's own schemas refuse or any unexpected status. The script prints the
// operations it called; they must be exactly those docs/compatibility.md
// says are served.
// It needs Node and the SDK installed; without them it is skipped, saying
// how to run it. .ci/run installs them.
func TestSDK_NovuAPI(t *testing.T) {
	dir := filepath.Join("testdata", "novu-api")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; install Node 18+, then: (cd app/testdata/novu-api && npm ci) && go test -run TestSDK_NovuAPI ./app")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@novu", "api")); err != nil {
		t.Skip("the SDK is not installed; run: (cd app/testdata/novu-api && npm ci) && go test -run TestSDK_NovuAPI ./app")
	}
	sdk := func(options ...apptest.Option) (string, error) {
		base := apptest.NewServer(t, options...).URL
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "sdk.mjs")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_KEY="+platformtest.DevKey)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := sdk(apptest.Compat("novu"))
	if err != nil || !strings.Contains(out, "sdk: all ok") {
		t.Fatalf("the SDK failed against HERALD_COMPAT=novu: %v\n%s", err, out)
	}
	t.Log(out)
	// The script prints the operations it called by their src/funcs name,
	// the name docs/compatibility.md's rows give: each served one must be
	// called, and none that is not.
	called := calledList(out)
	for _, r := range compatTable(t, "## `@novu/api`") {
		if r.served != called[r.call] {
			t.Errorf("docs/compatibility.md:%d: %s is served: %v, called by sdk.mjs: %v", r.line, r.call, r.served, called[r.call])
		}
		delete(called, r.call)
	}
	for op := range called {
		t.Errorf("sdk.mjs called %s, which docs/compatibility.md does not list", op)
	}
	// Without the mode, the same SDK refuses Herald's own spelling: the
	// mode is what makes it work.
	out, err = sdk()
	if err == nil {
		t.Fatalf("the SDK worked without HERALD_COMPAT; the spec's spelling should fail its schemas:\n%s", out)
	}
	first, _, _ := strings.Cut(out, "\n")
	t.Logf("without compatibility mode, as expected: %s", first)
}

// TestSDK_NovuNode runs testdata/novu-node/sdk.mjs, the reference
// platform's older, unmodified @novu/node client (pinned in its
// package-lock.json), against Herald in compatibility mode: every method
// whose route Herald serves, each answer's status and key fields checked.
// The script prints the methods it called; each must be one that
// docs/compatibility.md says is served, and every served one must be
// called. It needs Node and the client installed; without them it is
// skipped, saying how to run it. .ci/run installs them.
func TestSDK_NovuNode(t *testing.T) {
	dir := filepath.Join("testdata", "novu-node")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; install Node 18+, then: (cd app/testdata/novu-node && npm ci) && go test -run TestSDK_NovuNode ./app")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@novu", "node")); err != nil {
		t.Skip("the client is not installed; run: (cd app/testdata/novu-node && npm ci) && go test -run TestSDK_NovuNode ./app")
	}
	base := apptest.NewServer(t, apptest.Compat("novu")).URL
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_KEY="+platformtest.DevKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "sdk: all ok") {
		t.Fatalf("the client failed against HERALD_COMPAT=novu: %v\n%s", err, out.String())
	}
	t.Log(out.String())

	called := map[string]bool{}
	for m := range calledList(out.String()) {
		called[strings.ToLower(m)] = true
	}
	for _, r := range compatTable(t, "## `@novu/node`") {
		// Rows name the class (NotificationTemplates.getOne); the client's
		// property is the same name in lower camel case.
		name := strings.ToLower(r.call)
		if r.served != called[name] {
			t.Errorf("docs/compatibility.md:%d: %s is served: %v, called by sdk.mjs: %v", r.line, r.call, r.served, called[name])
		}
	}
}

// calledList is the set a script printed on its "called: " line.
func calledList(out string) map[string]bool {
	_, list, _ := strings.Cut(out, "called: ")
	list, _, _ = strings.Cut(list, "\n")
	called := map[string]bool{}
	for _, m := range strings.Fields(list) {
		called[m] = true
	}
	return called
}

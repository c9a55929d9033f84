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
// runs every layouts, translations and contexts operation, and fails on
// any answer the SDK's own schemas refuse.
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
	// Without the mode, the same SDK refuses Herald's own spelling: the
	// mode is what makes it work.
	out, err = sdk()
	if err == nil {
		t.Fatalf("the SDK worked without HERALD_COMPAT; the spec's spelling should fail its schemas:\n%s", out)
	}
	first, _, _ := strings.Cut(out, "\n")
	t.Logf("without compatibility mode, as expected: %s", first)
}

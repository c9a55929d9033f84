package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// stampFlags are the linker flags a release build passes
// (.goreleaser.yaml), with made-up values.
const stampFlags = "-X github.com/herald-notify/herald/platform.stampedVersion=1.2.3 " +
	"-X github.com/herald-notify/herald/platform.stampedCommit=0123456789abcdef0123456789abcdef01234567 " +
	"-X github.com/herald-notify/herald/platform.stampedCommitTime=2026-01-02T03:04:05Z"

// TestVersion_StampedWithoutVCS builds Herald as a release is built, from
// a tree with no VCS information: the version and commit stamped by the
// linker are what `herald version` and /healthz name.
func TestVersion_StampedWithoutVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds Herald")
	}
	is := is.New(t)
	bin := filepath.Join(t.TempDir(), "herald")
	build := exec.Command("go", "build", "-buildvcs=false", "-trimpath", "-ldflags", stampFlags, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	is.NoErr(err) // builds (output below on failure)
	if err != nil {
		t.Log(string(out))
	}

	out, err = exec.Command(bin, "version").Output()
	is.NoErr(err)                                                                                                                           // herald version runs
	is.True(strings.HasPrefix(string(out), "herald 1.2.3 commit 0123456789abcdef0123456789abcdef01234567 committed 2026-01-02T03:04:05Z ")) // names the stamp

	addr := freeAddr(t)
	serve := exec.Command(bin, "serve", "-db", ":memory:", "-addr", addr)
	dieWithTest(serve)
	is.NoErr(serve.Start()) // the server starts
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	var health struct {
		Version    string `json:"version"`
		Commit     string `json:"commit"`
		CommitTime string `json:"commitTime"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			json.NewDecoder(res.Body).Decode(&health)
			res.Body.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	is.Equal(health.Version, "1.2.3")                                   // /healthz names the version
	is.Equal(health.Commit, "0123456789abcdef0123456789abcdef01234567") // and the commit
	is.Equal(health.CommitTime, "2026-01-02T03:04:05Z")                 // and its time
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// sendKeyed makes a request with key and a JSON body ("" for none) and decodes
// the answer into out, when not nil; it returns the status.
func sendKeyed(t *testing.T, method, url, key, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "ApiKey "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, url, res.StatusCode, b)
		}
	}
	return res.StatusCode
}

// A start seeds every environment, the created ones included: one whose
// in-app integration is gone gets it back.
func TestRun_RestartSeedsCreatedEnvironments(t *testing.T) {
	is := is.New(t)
	const devKey = "dev-key-from-env-000000000000000000"
	env := map[string]string{"HERALD_DB": filepath.Join(t.TempDir(), "herald.db"), "HERALD_API_KEY": devKey}
	base, _, stop := startRun(t, env)
	var created struct {
		ID      string `json:"_id"`
		APIKeys []struct {
			Key string `json:"key"`
		} `json:"apiKeys"`
	}
	is.Equal(sendKeyed(t, "POST", base+"/v1/environments", devKey, `{"name":"Staging","color":"#fff"}`, &created), 201) // created
	key := created.APIKeys[0].Key
	inApp := func() []string {
		var list []struct {
			ID            string `json:"_id"`
			EnvironmentID string `json:"_environmentId"`
			Channel       string `json:"channel"`
		}
		sendKeyed(t, "GET", base+"/v1/integrations", key, "", &list)
		var ids []string
		for _, in := range list {
			if in.EnvironmentID == created.ID && in.Channel == "in_app" {
				ids = append(ids, in.ID)
			}
		}
		return ids
	}
	seeded := inApp()
	is.Equal(len(seeded), 1)                                                                // seeded at creation
	is.Equal(sendKeyed(t, "DELETE", base+"/v1/integrations/"+seeded[0], key, "", nil), 200) // then removed
	is.Equal(len(inApp()), 0)                                                               // gone
	is.NoErr(stop())

	base, _, stop = startRun(t, env)
	is.Equal(get(t, base+"/v1/environments", key), 200) // the created environment's key works after a restart
	is.Equal(len(inApp()), 1)                           // and the start seeded its in-app integration again
	is.NoErr(stop())
}

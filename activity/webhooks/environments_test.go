package webhooks_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// An environment created while Herald runs stamps its events with its
// identifier, and with the new one once the team changes it.
func TestWebhooks_CreatedEnvironmentIdentifier(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	var env struct {
		ID         string `json:"_id"`
		Identifier string `json:"identifier"`
		APIKeys    []struct {
			Key string `json:"key"`
		} `json:"apiKeys"`
	}
	apptest.MustCreate(t, srv.Dev, "/v1/environments", `{"name":"Staging","color":"#fff"}`).Decode(t, &env)
	staging := srv.Dev.WithKey(env.APIKeys[0].Key)
	rc := newReceiver(t)
	body, _ := json.Marshal(map[string]any{"url": rc.URL, "eventTypes": []string{"workflow.created"}})
	var e endpoint
	apptest.MustCreate(t, staging, "/v2/webhooks/endpoints", string(body)).Decode(t, &e)
	rc.verifyWith(e.Secret)

	apptest.MustCreate(t, staging, "/v2/workflows", `{"name":"One","workflowId":"one","steps":[]}`)
	got := rc.wait(1)
	is.Equal(got[0].Event.EnvironmentID, env.Identifier) // the created environment's identifier

	apptest.MustStatus(t, srv.Dev, "PUT", "/v1/environments/"+env.ID, `{"identifier":"staging-app"}`, 200)
	apptest.MustCreate(t, staging, "/v2/workflows", `{"name":"Two","workflowId":"two","steps":[]}`)
	stamps := map[string]int{}
	for _, g := range rc.wait(2) {
		stamps[g.Event.EnvironmentID]++
	}
	is.Equal(stamps["staging-app"], 1) // the later event carries the identifier it has now
}

package messaging_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// inboxPref is a preference as the inbox client reads it.
type inboxPref struct {
	Level     string            `json:"level"`
	Enabled   bool              `json:"enabled"`
	Channels  map[string]bool   `json:"channels"`
	Overrides []json.RawMessage `json:"overrides"`
	Workflow  *struct {
		ID         string   `json:"id"`
		Identifier string   `json:"identifier"`
		Critical   bool     `json:"critical"`
		Tags       []string `json:"tags"`
		Severity   string   `json:"severity"`
	} `json:"workflow"`
}

func TestInbox_Preferences(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,"tags":["ops"],"severity":"high",
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"x"}},{"name":"Mail","type":"email","controlValues":{"subject":"x","body":"x"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Security","workflowId":"security","active":true,
		"preferences":{"workflow":{"all":{"enabled":true,"readOnly":true}}},
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"x"}}]}`)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	list := func(query string) []inboxPref {
		t.Helper()
		status, body, _ := c.Do("GET", "/v1/inbox/preferences"+query, "")
		if status != 200 {
			t.Fatalf("preferences%s: %d %s", query, status, body)
		}
		var out struct {
			Data []inboxPref `json:"data"`
		}
		json.Unmarshal(body, &out)
		return out.Data
	}

	t.Run("list", func(t *testing.T) {
		is := is.New(t)
		prefs := list("")
		is.Equal(len(prefs), 3)                                                     // global, then each non-critical workflow
		is.Equal(prefs[0].Level, "global")                                          // global first
		is.Equal(prefs[0].Channels, map[string]bool{"in_app": true, "email": true}) // the channels of the workflows' steps
		is.Equal(prefs[1].Workflow.Identifier, "hello")                             // oldest workflow first
		is.Equal(prefs[2].Channels, map[string]bool{"in_app": true, "email": true}) // a workflow's own channels
		is.Equal(len(prefs[2].Overrides), 2)                                        // with who set each
		is.Equal(prefs[2].Workflow.Severity, "high")                                // its severity
		is.Equal(len(list("?criticality=critical")), 2)                             // global and the critical one
		is.Equal(len(list("?criticality=all")), 4)                                  // everything
		is.Equal(len(list("?tags[]=ops")), 2)                                       // by tag
		is.Equal(len(list("?severity=none")), 2)                                    // by severity
		status, _, _ := c.Do("GET", "/v1/inbox/preferences?criticality=some", "")
		is.Equal(status, 422) // an unknown criticality
	})

	t.Run("update", func(t *testing.T) {
		is := is.New(t)
		status, body, _ := c.Do("PATCH", "/v1/inbox/preferences/alerts", `{"email":false}`)
		is.Equal(status, 200) // one workflow's
		var one struct {
			Data inboxPref `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &one))
		is.Equal(one.Data.Level, "template")                                         // in the envelope
		is.Equal(one.Data.Channels, map[string]bool{"in_app": true, "email": false}) // email off
		status, body, _ = c.Do("PATCH", "/v1/inbox/preferences", `{"in_app":false}`)
		is.Equal(status, 200) // global
		is.NoErr(json.Unmarshal(body, &one))
		is.Equal(one.Data.Channels["in_app"], false) // in_app off everywhere
		prefs := list("")
		is.Equal(prefs[1].Channels["in_app"], false) // the global choice holds for each workflow
		status, body, _ = c.Do("PATCH", "/v1/inbox/preferences/bulk", `{"preferences":[{"workflowId":"hello","in_app":true},{"workflowId":"alerts","email":true}]}`)
		is.Equal(status, 200) // bulk
		var many struct {
			Data []inboxPref `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &many))
		is.Equal(len(many.Data), 2)                     // one answer per workflow, in order
		is.Equal(many.Data[0].Channels["in_app"], true) // hello's in_app back on
		is.Equal(many.Data[1].Channels["email"], true)  // alerts' email back on

		// The server API reads the same preferences.
		var v2 struct {
			Data struct {
				Global struct {
					Channels map[string]bool `json:"channels"`
				} `json:"global"`
			} `json:"data"`
		}
		res := srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences", "")
		is.Equal(res.Status, 200)
		res.Decode(t, &v2)
		is.Equal(v2.Data.Global.Channels["in_app"], false) // the inbox's global write
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			path, body string
			status     int
		}{
			{"/v1/inbox/preferences/security", `{"in_app":false}`, 400},
			{"/v1/inbox/preferences/nope", `{"in_app":false}`, 404},
			{"/v1/inbox/preferences/bulk", `{"preferences":[]}`, 400},
			{"/v1/inbox/preferences/bulk", `{"preferences":[{"workflowId":"hello","in_app":false},{"workflowId":"security","in_app":false}]}`, 400},
			{"/v1/inbox/preferences", `{"in_app":"off"}`, 422},
		} {
			is := is.New(t)
			status, _, _ := c.Do("PATCH", tc.path, tc.body)
			is.Equal(status, tc.status) // refused
		}
		is := is.New(t)
		prefs := list("")
		is.Equal(prefs[1].Channels["in_app"], true) // the refused bulk wrote nothing
	})
}

// An inactive workflow is not listed, nor are the channels only it has,
// as the reference lists preferences; a write may still name it.
func TestInbox_PreferencesListActiveWorkflowsOnly(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Paused","workflowId":"paused","active":false,
		"steps":[{"name":"Text","type":"sms","controlValues":{"body":"x"}}]}`)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	status, body, _ := c.Do("GET", "/v1/inbox/preferences?criticality=all", "")
	is.Equal(status, 200) // listed
	var list struct {
		Data []inboxPref `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &list))
	is.Equal(len(list.Data), 2)                         // global and hello, not paused
	is.Equal(list.Data[1].Workflow.Identifier, "hello") // the active one
	_, hasSMS := list.Data[0].Channels["sms"]
	is.True(!hasSMS) // the global preference shows the active workflows' channels

	status, body, _ = c.Do("PATCH", "/v1/inbox/preferences/paused", `{"sms":false}`)
	is.Equal(status, 200) // the inactive workflow's preference can still be set
	var one struct {
		Data inboxPref `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &one))
	is.Equal(one.Data.Workflow.Identifier, "paused")           // and is answered
	is.Equal(one.Data.Channels, map[string]bool{"sms": false}) // with its channel off
}

package messaging_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

func TestMessageAction(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ask","workflowId":"ask","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Approve?","primaryAction":{"label":"Yes"},
		"secondaryAction":{"label":"No"}}}]}`)
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.OpenInbox(t, srv, "bob", "")
	apptest.TriggerTo(t, srv, "ask", "ada", `{}`)
	apptest.TriggerTo(t, srv, "ask", "bob", `{}`)
	id := inbox.Wait(1)[0].ID
	const base = "/v1/subscribers/ada/messages/"
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"unknown button type", base + id + "/actions/tertiary", `{"status":"done"}`, 422},
		{"no status", base + id + "/actions/primary", `{}`, 422},
		{"unknown status", base + id + "/actions/primary", `{"status":"clicked"}`, 422},
		{"a payload that is no object", base + id + "/actions/primary", `{"status":"done","payload":[1]}`, 422},
		{"not JSON", base + id + "/actions/primary", `{`, 400},
		{"unknown message", base + "0123456789abcdef01234567/actions/primary", `{"status":"done"}`, 404},
		{"not an id", base + "nope/actions/primary", `{"status":"done"}`, 404},
		{"another subscriber's message", "/v1/subscribers/bob/messages/" + id + "/actions/primary", `{"status":"done"}`, 404},
		{"unknown subscriber", "/v1/subscribers/nobody/messages/" + id + "/actions/primary", `{"status":"done"}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(srv.Dev.Do(t, "POST", tc.path, tc.body).Status, tc.status) // refused
		})
	}
	is := is.New(t)
	n, _ := inbox.List("limit=10")
	is.True(!n[0].PrimaryAction.IsCompleted) // nothing refused changed it

	var got struct {
		ID  string          `json:"_id"`
		CTA json.RawMessage `json:"cta"`
	}
	apptest.MustStatus(t, srv.Dev, "POST", base+id+"/actions/secondary", `{"status":"done","payload":{"reason":"busy"}}`, 201).Decode(t, &got)
	is.Equal(got.ID, id) // the message, answered with 201
	var c struct {
		Action struct {
			Status  string `json:"status"`
			Buttons []struct {
				Type string `json:"type"`
			} `json:"buttons"`
			Result struct {
				Type    string         `json:"type"`
				Payload map[string]any `json:"payload"`
			} `json:"result"`
		} `json:"action"`
	}
	is.NoErr(json.Unmarshal(got.CTA, &c))               // the message's call to action
	is.Equal(c.Action.Status, "done")                   // done
	is.Equal(c.Action.Result.Type, "secondary")         // with the button clicked
	is.Equal(c.Action.Result.Payload["reason"], "busy") // and what came with it
	is.Equal(len(c.Action.Buttons), 2)                  // the buttons kept
	n, _ = inbox.List("limit=10")
	is.True(n[0].PrimaryAction != nil && !n[0].PrimaryAction.IsCompleted) // the inbox: not the primary
	apptest.MustStatus(t, srv.Dev, "POST", base+id+"/actions/primary", `{"status":"done"}`, 201)
	n, _ = inbox.List("limit=10")
	is.True(n[0].PrimaryAction.IsCompleted) // the primary done, as the inbox reads it
	apptest.MustStatus(t, srv.Dev, "POST", base+id+"/actions/primary", `{"status":"pending"}`, 201)
	n, _ = inbox.List("limit=10")
	is.True(!n[0].PrimaryAction.IsCompleted) // pending again
}

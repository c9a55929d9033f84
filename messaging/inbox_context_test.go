package messaging_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// openContextInbox starts a session for subscriberID in the Development
// environment with the session fields extra (context, hashes) and returns
// a client carrying its token and the session's contextKeys.
func openContextInbox(t *testing.T, srv *apptest.Server, subscriberID, extra string) (*apptest.Inbox, []string) {
	t.Helper()
	c := apptest.NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+
		`","subscriber":{"subscriberId":"`+subscriberID+`"}`+extra+`}`)
	if status != 201 {
		t.Fatalf("session: %d %s", status, body)
	}
	var out struct {
		Data struct {
			Token       string   `json:"token"`
			ContextKeys []string `json:"contextKeys"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	c.Token = out.Data.Token
	return c, out.Data.ContextKeys
}

// unreadCount reads the inbox's unread count, as the bell does.
func unreadCount(t *testing.T, c *apptest.Inbox) float64 {
	t.Helper()
	status, body, _ := c.Do("GET", `/v1/inbox/notifications/count?filters=[{"read":false}]`, "")
	if status != 200 {
		t.Fatalf("count: %d %s", status, body)
	}
	var out struct {
		Data []struct {
			Count float64 `json:"count"`
		} `json:"data"`
	}
	json.Unmarshal(body, &out)
	return out.Data[0].Count
}

func bodies(list []apptest.InboxNotification) []string {
	var out []string
	for _, n := range list {
		out = append(out, n.Body)
	}
	return out
}

func TestInbox_Context(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	acme, keys := openContextInbox(t, srv, "ada", `,"context":{"tenant":"acme"}`)
	is.Equal(keys, []string{"tenant:acme"}) // the session's context, as type:id keys
	globex, _ := openContextInbox(t, srv, "ada", `,"context":{"tenant":{"id":"globex","data":{"name":"Globex"}}}`)
	plain, keys := openContextInbox(t, srv, "ada", "")
	is.Equal(keys, []string{}) // no context: none

	for _, ctx := range []string{`{"tenant":"acme"}`, `{"tenant":"globex"}`, `null`, `{"tenant":"acme","app":"x"}`} {
		apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":`+jsonQuote(ctx)+`},"context":`+ctx+`}`)
	}
	is.Equal(bodies(acme.Wait(1)), []string{`Hello {"tenant":"acme"}`})     // acme's alone: not the one with acme and another
	is.Equal(bodies(globex.Wait(1)), []string{`Hello {"tenant":"globex"}`}) // globex's alone
	is.Equal(bodies(plain.Wait(1)), []string{"Hello null"})                 // without a context, the one sent without
	is.Equal(unreadCount(t, acme), 1.0)                                     // counts follow the context
	_, again := openContextInbox(t, srv, "ada", `,"context":{"app":{"id":"x"},"tenant":"acme"}`)
	is.Equal(again, []string{"app:x", "tenant:acme"})                            // keys sorted
	is.Equal(srv.Dev.Do(t, "GET", "/v2/contexts/tenant/globex", "").Status, 200) // a session's context is created
	var session struct {
		Data struct {
			UnreadCount struct {
				Total int `json:"total"`
			} `json:"unreadCount"`
		} `json:"data"`
	}
	_, body, _ := apptest.NewInbox(t, srv, "").Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+
		srv.App.Development.Identifier+`","subscriberId":"ada","context":{"tenant":"globex"}}`)
	json.Unmarshal(body, &session)
	is.Equal(session.Data.UnreadCount.Total, 1) // the session's counts too

	// Another context's notification is not there for this inbox.
	other := globex.Wait(1)[0].ID
	for _, path := range []string{"/read", "/unread", "/archive"} {
		status, _, _ := acme.Do("PATCH", "/v1/inbox/notifications/"+other+path, "")
		is.Equal(status, 404) // not this inbox's
	}
	status, _, _ := acme.Do("DELETE", "/v1/inbox/notifications/"+other+"/delete", "")
	is.Equal(status, 404) // not this inbox's to delete
	status, _, _ = acme.Do("POST", "/v1/inbox/notifications/read", "")
	is.Equal(status, 204)
	is.Equal(unreadCount(t, acme), 0.0)   // read all reads this inbox's
	is.Equal(unreadCount(t, globex), 1.0) // and no other context's
	is.Equal(unreadCount(t, plain), 1.0)  // nor those sent without one
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestInbox_ContextLive(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	acme, _ := openContextInbox(t, srv, "ada", `,"context":{"tenant":"acme"}`)
	globex, _ := openContextInbox(t, srv, "ada", `,"context":{"tenant":"globex"}`)
	acmeSock, globexSock := dialSocket(t, srv, acme.Token), dialSocket(t, srv, globex.Token)
	acmeSock.next()
	globexSock.next() // both CONNECTs answered

	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":"acme"},"context":{"tenant":"acme"}}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":"globex"},"context":{"tenant":"globex"}}`)
	names, p := globexSock.events(3)
	is.Equal(names, []string{"notification_received", "unseen_count_changed", "unread_count_changed"}) // its own delivery first
	is.Equal(p[0]["message"].(map[string]any)["content"], "Hello globex")                              // not acme's
	is.Equal(p[2]["unreadCount"], 1.0)                                                                 // counted in its context
	names, p = acmeSock.events(3)
	is.Equal(names, []string{"notification_received", "unseen_count_changed", "unread_count_changed"})
	is.Equal(p[0]["message"].(map[string]any)["content"], "Hello acme") // acme's own
	is.Equal(p[2]["unreadCount"], 1.0)                                  // globex's not counted
	// globex's delivery brought acme's socket nothing: its next event is
	// acme's next delivery.
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":"acme 2"},"context":{"tenant":"acme"}}`)
	name, p0 := acmeSock.event()
	is.Equal(name, "notification_received")                             // nothing came between
	is.Equal(p0["message"].(map[string]any)["content"], "Hello acme 2") // acme's
	_, p = acmeSock.events(2)
	is.Equal(p[1]["unreadCount"], 2.0) // acme's two
}

func TestInbox_ContextHash(t *testing.T) {
	srv := apptest.NewServer(t)
	ident := srv.App.Development.Identifier
	session := func(context, hash string) (int, string) {
		status, body, _ := apptest.NewInbox(t, srv, "").Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+ident+
			`","subscriber":{"subscriberId":"ada"},"subscriberHash":"`+platform.SubscriberHash(platformtest.DevKey, "ada")+
			`","context":`+context+`,"contextHash":"`+hash+`"}`)
		return status, string(body)
	}
	sent := `{ "tenant": { "id": "acme", "data": { "b": 1, "a": "x\"y\u00e9" } } }`
	canonical := `{"tenant":{"data":{"a":"x\"yé","b":1},"id":"acme"}}` // keys sorted, no spaces, only " and \ escaped
	good := platform.SubscriberHash(platformtest.DevKey, canonical)

	is := is.New(t)
	status, _ := session(sent, "")
	is.Equal(status, 201) // without HMAC on the integration, no context hash is needed
	res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppIntegration(t, srv), `{"credentials":{"hmac":true}}`)
	is.Equal(res.Status, 200)
	for _, tc := range []struct {
		name, context, hash string
		status              int
	}{
		{"missing", sent, "", 400},
		{"wrong", sent, strings.Repeat("0", 64), 400},
		{"of another context", `{"tenant":"globex"}`, good, 400},
		{"of the context's JSON as sent", sent, platform.SubscriberHash(platformtest.DevKey, sent), 400},
		{"a float in the data", `{"tenant":{"id":"acme","data":{"b":1.5}}}`, good, 400},
		{"right", sent, good, 201},
		{"no context needs none", `null`, "", 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body := session(tc.context, tc.hash)
			is.Equal(status, tc.status) // hex HMAC-SHA256 of the context's canonical JSON
			if status == 400 {
				is.True(strings.Contains(body, "Please provide a valid context HMAC hash")) // the reference message
			}
		})
	}
}

func TestInbox_ContextRefusals(t *testing.T) {
	srv := apptest.NewServer(t)
	for _, tc := range []struct{ name, context string }{
		{"not an object", `[1]`},
		{"an id of the wrong type", `{"tenant":7}`},
		{"an object without an id", `{"tenant":{"data":{}}}`},
		{"data not an object", `{"tenant":{"id":"acme","data":[1]}}`},
		{"a bad id", `{"tenant":"a b"}`},
		{"a bad type", `{"ten ant":"acme"}`},
		{"too many", `{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1"}`},
		{"data too large", `{"tenant":{"id":"acme","data":{"x":"` + strings.Repeat("x", 64<<10) + `"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body, _ := apptest.NewInbox(t, srv, "").Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+
				srv.App.Development.Identifier+`","subscriberId":"ada","context":`+tc.context+`}`)
			is.Equal(status, 422)                              // refused
			is.True(strings.Contains(string(body), "context")) // naming the field
		})
	}
	is := is.New(t)
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Status, 404) // no refused session made its subscriber
}

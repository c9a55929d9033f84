package app_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// oddTexts is text both stores hold, written as the inside of a JSON
// string: what a client may send anywhere a string goes.
var oddTexts = []string{
	`plain`,
	`quote \" and 'apostrophe' and back\\slash`,
	`\\u0000 \\x00 %00 %ff`, // the spellings of a NUL, as text
	`100% _under_ *star* ?q=1&x=2#h`,
	`é e\u0301 ñ ß ﬁ Å`,
	`😀 👩‍👩‍👧 \ud83d\ude00 \udbff\udfff`, // surrogate pairs are one character each
	`مرحبا עברית 中文 日本語 한국어`,
	`\u0001\u001f\t\n\r\u007f\u0085\u2028\u2029\ufeff\uffff`,
	`{{ payload.k }} {% raw %} <script>alert(1)</script>`,
	`'; DROP TABLE subscribers; --`,
	`$1 ? :name @p1 %s %v`,
	`a.b.c`,
	` spaces `,
	strings.Repeat("😀", 64),   // the longest tag, four bytes a character
	strings.Repeat("é", 256),  // the longest name and subscriberId
	strings.Repeat("x", 1025), // past most limits: refused, and so stored nowhere
}

// Whatever text a write accepts, on either store, every later read
// answers without a server error: nothing stored poisons a route.
func TestOddText_StoredAndReadBack(t *testing.T) {
	srv := apptest.NewServer(t)
	for i, v := range oddTexts {
		writeOddText(t, srv, i, v)
	}
	waitDelivered(t, srv)
	for i, v := range oddTexts {
		readOddText(t, srv, i, v)
		inboxOddText(t, srv, v)
	}
}

// A NUL is refused on both stores, in a tag, a path, a payload's key and a
// filter: PostgreSQL cannot store it, and a tag SQLite kept would fail
// every later tag filter on PostgreSQL.
func TestOddText_NULRefused(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"N","workflowId":"n","tags":["a\u0000b"],
		"steps":[{"name":"S","type":"in_app","controlValues":{"body":"hi"}}]}`)
	is.Equal(res.Status, 422) // a validation error
	var body struct {
		Errors map[string]any `json:"errors"`
	}
	res.Decode(t, &body)
	_, named := body.Errors["tags.0"]
	is.True(named) // naming the tag

	res = srv.Dev.Do(t, "GET", "/v2/workflows?tags=a%00b", "")
	is.Equal(res.Status, 400) // not a 500
	res.Decode(t, &body)
	_, named = body.Errors["tags"]
	is.True(named) // naming the parameter

	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/%ff", "").Status, 400)                                       // a path value too
	is.Equal(srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"s","data":{"k\u0000":1}}`).Status, 422) // and a payload key

	inbox, _ := apptest.OpenInbox(t, srv, "s", "")
	status, _, _ := inbox.Do("GET", "/v1/inbox/notifications/count?filters="+url.QueryEscape(`[{"tags":["a\u0000b"]}]`), "")
	is.Equal(status, 400) // a NUL escaped in a query value's JSON is one too
}

// okOrClientError fails the test when a request answered a server error.
func okOrClientError(t *testing.T, res *platformtest.Response, method, path string) bool {
	t.Helper()
	if res.Status >= 500 {
		t.Errorf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	return res.Status < 300
}

// writeOddText stores v through every write route, as every kind of string
// each takes: names, ids, tags, keys and values of data and payloads.
func writeOddText(t *testing.T, srv *apptest.Server, i int, v string) {
	t.Helper()
	p, wf, topic := pathText(v), fmt.Sprintf("wf-%d", i), fmt.Sprintf("t-%d", i)
	data := `{"k":"` + v + `","` + v + `":["` + v + `",{"n":"` + v + `"}]}`
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/v1/subscribers", `{"subscriberId":"` + v + `","firstName":"` + v + `","lastName":"` + v + `","locale":"` + v + `","data":` + data + `}`},
		{"POST", "/v2/subscribers", `{"subscriberId":"v2` + v + `","firstName":"` + v + `","timezone":"` + v + `","data":` + data + `}`},
		{"PUT", "/v1/subscribers/" + p, `{"lastName":"` + v + `","avatar":"https://example.com/` + v + `","data":` + data + `}`},
		{"PATCH", "/v2/subscribers/" + p, `{"phone":"` + v + `"}`},
		{"PUT", "/v1/subscribers/" + p + "/credentials", `{"providerId":"slack","credentials":{"webhookUrl":"https://example.com/?q=` + v + `","channel":"` + v + `"}}`},
		{"PATCH", "/v1/subscribers/" + p + "/credentials", `{"providerId":"fcm","integrationIdentifier":"` + v + `","credentials":{"deviceTokens":["` + v + `"]}}`},
		{"POST", "/v1/subscribers/bulk", `{"subscribers":[{"subscriberId":"bulk` + v + `","firstName":"` + v + `","data":` + data + `}]}`},
		{"POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","name":"` + v + `","identifier":"` + v + `","credentials":{"applicationId":"` + v + `"}}`},
		{"POST", "/v2/workflows", `{"name":"` + v + `","workflowId":"` + wf + `","description":"` + v + `","tags":["` + v + `","t"],"active":true,
			"steps":[{"name":"` + v + `","type":"in_app","controlValues":{"body":"Hi {{ payload.k }}","subject":"` + v + `","data":` + data + `}}]}`},
		{"POST", "/v2/workflows", `{"name":"` + v + `","workflowId":"` + v + `","steps":[{"name":"S","type":"sms","controlValues":{"body":"` + v + `"}}]}`},
		{"PATCH", "/v2/workflows/" + wf, `{"tags":["` + v + `"],"description":"` + v + `"}`},
		{"POST", "/v1/topics", `{"key":"` + topic + `","name":"` + v + `"}`},
		{"POST", "/v2/topics", `{"key":"` + v + `","name":"` + v + `"}`},
		{"POST", "/v2/topics", `{"key":"` + topic + `-2","name":"` + v + `"}`},
		{"POST", "/v1/topics/" + topic + "/subscribers", `{"subscribers":["` + v + `","plain"]}`},
		{"POST", "/v2/topics/" + topic + "/subscriptions", `{"subscriptions":["` + v + `",{"subscriberId":"` + v + `x"}]}`},
		{"PATCH", "/v1/subscribers/" + p + "/preferences/" + wf, `{"channel":{"type":"in_app","enabled":true}}`},
		{"PATCH", "/v2/subscribers/" + p + "/preferences", `{"workflowId":"` + wf + `","channels":{"in_app":false}}`},
		{"POST", "/v1/events/trigger", `{"name":"` + wf + `","to":{"subscriberId":"` + v + `","firstName":"` + v + `","data":` + data + `},
			"payload":` + data + `,"actor":"` + v + `","transactionId":"` + v + `","overrides":{"in_app":{"k":"` + v + `"}}}`},
		{"POST", "/v1/events/trigger", `{"name":"` + wf + `","to":[{"type":"Topic","topicKey":"` + topic + `"}],"payload":` + data + `}`},
		{"POST", "/v1/events/trigger/bulk", `{"events":[{"name":"` + wf + `","to":"plain","payload":` + data + `}]}`},
		{"POST", "/v1/events/trigger/broadcast", `{"name":"` + wf + `","payload":` + data + `}`},
		{"POST", "/v1/subscribers/" + p + "/messages/mark-all", `{"markAs":"seen"}`},
	} {
		okOrClientError(t, srv.Dev.Do(t, w.method, w.path, w.body), w.method, w.path)
	}
}

// waitDelivered waits for the broadcasts' in-app messages to reach the
// subscriber every text created.
func waitDelivered(t *testing.T, srv *apptest.Server) {
	t.Helper()
	var before int
	platformtest.Eventually(t, 20*time.Second, func() bool {
		var feed struct {
			Data []any `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/subscribers/plain/notifications/feed?limit=100", "").Decode(t, &feed)
		settled := len(feed.Data) > 0 && len(feed.Data) == before
		before = len(feed.Data)
		if !settled {
			time.Sleep(200 * time.Millisecond)
		}
		return settled
	}, "the broadcasts to be delivered")
}

// readOddText reads through every read route, with v as every path and
// query value they take.
func readOddText(t *testing.T, srv *apptest.Server, i int, v string) {
	t.Helper()
	p, q, wf, topic := pathText(v), url.QueryEscape(jsonText(v)), fmt.Sprintf("wf-%d", i), fmt.Sprintf("t-%d", i)
	payload := base64.StdEncoding.EncodeToString([]byte(`{"k":"` + v + `"}`))
	for _, path := range []string{
		"/v1/subscribers/" + p,
		"/v2/subscribers/" + p,
		"/v2/subscribers?subscriberId=" + q,
		"/v2/subscribers?name=" + q + "&email=" + q + "&phone=" + q,
		"/v1/subscribers/" + p + "/notifications/feed?payload=" + url.QueryEscape(payload),
		"/v1/subscribers/plain/notifications/feed?limit=100",
		"/v1/subscribers/" + p + "/notifications/unseen",
		"/v1/subscribers/" + p + "/preferences",
		"/v1/subscribers/" + p + "/preferences/global",
		"/v1/subscribers/" + p + "/preferences/template",
		"/v2/subscribers/" + p + "/preferences",
		"/v2/subscribers/" + p + "/preferences/global",
		"/v1/integrations",
		"/v1/integrations/active",
		"/v2/workflows?tags=" + q + "&query=" + q,
		"/v2/workflows?tags=t&limit=100",
		"/v2/workflows/" + wf,
		"/v2/workflows/" + p,
		"/v1/messages?subscriberId=" + q + "&transactionId=" + q + "&limit=100",
		"/v1/notifications?search=" + q + "&subscriberIds=" + q + "&emails=" + q + "&topicKey=" + q,
		"/v1/notifications?transactionId=" + q + "&contextKeys=" + q + "&channels=in_app",
		"/v1/notifications?limit=50",
		"/v1/topics?key=" + q + "&name=" + q,
		"/v1/topics/" + topic,
		"/v1/topics/" + topic + "/subscribers/" + p,
		"/v2/topics?key=" + q + "&name=" + q,
		"/v2/topics/" + p,
		"/v2/topics/" + topic + "/subscriptions?subscriberId=" + q,
		"/v2/topics/" + topic + "/subscriptions/tk_" + topic + ":si_" + p,
		"/v1/environments",
	} {
		okOrClientError(t, srv.Dev.Do(t, "GET", path, ""), "GET", path)
	}
}

// inboxOddText reads v's inbox, filtered by v as a tag and a data value,
// and then marks, archives and deletes all of it by the same filters.
func inboxOddText(t *testing.T, srv *apptest.Server, v string) {
	t.Helper()
	c := apptest.NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+
		`","subscriber":{"subscriberId":"`+v+`","firstName":"`+v+`"}}`)
	if status >= 500 {
		t.Errorf("session for %q: %d %s", v, status, body)
	}
	var session struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &session) != nil || session.Data.Token == "" {
		c, _ = apptest.OpenInbox(t, srv, "plain", "")
	} else {
		c.Token = session.Data.Token
	}
	tags, q := `["`+v+`","t"]`, url.QueryEscape(jsonText(v))
	data := url.QueryEscape(`{"k":"` + v + `"}`)
	filters := url.QueryEscape(`[{"tags":` + tags + `,"data":{"k":"` + v + `"}},{"read":false}]`)
	inner, _ := json.Marshal(`{"k":"` + v + `"}`) // the client sends the data filter as a string
	bulk := `{"tags":` + tags + `,"data":` + string(inner) + `}`
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/inbox/notifications?tags[]=" + q + "&tags[]=t&data=" + data + "&limit=100", ""},
		{"GET", "/v1/inbox/notifications/count?filters=" + filters, ""},
		{"GET", "/v1/inbox/preferences?tags=" + q, ""},
		{"GET", "/v1/inbox/preferences/global", ""},
		{"PATCH", "/v1/inbox/preferences/wf-0", `{"in_app":true}`},
		{"POST", "/v1/inbox/notifications/seen", bulk},
		{"POST", "/v1/inbox/notifications/read", bulk},
		{"POST", "/v1/inbox/notifications/archive", bulk},
		{"POST", "/v1/inbox/notifications/read-archive", bulk},
		{"POST", "/v1/inbox/notifications/delete", bulk},
	} {
		status, body, _ := c.Do(r.method, r.path, r.body)
		if status >= 500 {
			t.Errorf("inbox %s %s: %d %s", r.method, r.path, status, body)
		}
	}
}

// jsonText is the text the inside of a JSON string stands for.
func jsonText(v string) string {
	var s string
	if err := json.Unmarshal([]byte(`"`+v+`"`), &s); err != nil {
		panic(err)
	}
	return s
}

// pathText is v as one escaped path segment.
func pathText(v string) string { return url.PathEscape(jsonText(v)) }

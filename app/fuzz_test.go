package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/herald-notify/herald/app/apptest"
)

// apiRoutes is every route of the API, {name} standing for the id of a
// fixture; the deletions come last, so that each seed finds the records
// it addresses.
var apiRoutes = []struct{ method, path, seed string }{
	{"POST", "/v1/subscribers", `{"subscriberId":"fz","email":"fz@example.com","data":{"a":1}}`},
	{"POST", "/v2/subscribers", `{"subscriberId":"fz2","firstName":"F"}`},
	{"GET", "/v1/subscribers/{subscriber}", ""},
	{"GET", "/v2/subscribers/{subscriber}", ""},
	{"PUT", "/v1/subscribers/{subscriber}", `{"lastName":"L","locale":"en"}`},
	{"PATCH", "/v2/subscribers/{subscriber}", `{"phone":"+15550000000"}`},
	{"GET", "/v2/subscribers", ""},
	{"PUT", "/v1/subscribers/{subscriber}/credentials", `{"providerId":"slack","credentials":{"webhookUrl":"https://example.com/h"}}`},
	{"PATCH", "/v1/subscribers/{subscriber}/credentials", `{"providerId":"discord","credentials":{"webhookUrl":"https://example.com/d"}}`},
	{"GET", "/v1/subscribers/{subscriber}/notifications/feed", ""},
	{"POST", "/v1/subscribers/{subscriber}/messages/mark-as", `{"messageId":"{message}","markAs":"read"}`},
	{"POST", "/v1/subscribers/{subscriber}/messages/markAs", `{"messageId":"{message}","mark":{"seen":true}}`},
	{"POST", "/v1/subscribers/{subscriber}/messages/mark-all", `{"markAs":"seen"}`},
	{"GET", "/v1/subscribers/{subscriber}/notifications/unseen", ""},
	{"POST", "/v1/subscribers/bulk", `{"subscribers":[{"subscriberId":"fz-bulk","email":"b@example.com"}]}`},
	{"GET", "/v1/integrations", ""},
	{"GET", "/v1/integrations/active", ""},
	{"POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","credentials":{"applicationId":"a"},"active":true}`},
	{"PUT", "/v1/integrations/{integration}", `{"name":"Renamed","active":true}`},
	{"POST", "/v1/integrations/{integration}/set-primary", ""},
	{"GET", "/v2/workflows", ""},
	{"POST", "/v2/workflows", `{"name":"Fz","workflowId":"fz-new","steps":[{"name":"S","type":"in_app","controlValues":{"body":"{{ payload.x }}"}}]}`},
	{"GET", "/v2/workflows/{workflow}", ""},
	{"PUT", "/v2/workflows/{workflow}", `{"name":"Fz","steps":[{"name":"S","type":"sms","controlValues":{"body":"hi"}}]}`},
	{"PATCH", "/v2/workflows/{workflow}", `{"active":false,"tags":["t"],"payloadSchema":{"type":"object"}}`},
	{"PUT", "/v2/workflows/{workflow}/sync", `{"targetEnvironmentId":"x"}`},
	{"POST", "/v1/events/trigger", `{"name":"fz","to":["ada",{"subscriberId":"bea","email":"b@example.com"}],"payload":{"x":1}}`},
	{"POST", "/v1/events/trigger/bulk", `{"events":[{"name":"fz","to":"ada"}]}`},
	{"POST", "/v1/events/trigger/broadcast", `{"name":"fz","payload":{"x":2}}`},
	{"GET", "/v1/messages", ""},
	{"GET", "/v1/notifications", ""},
	{"GET", "/v1/notifications/{notification}", ""},
	{"GET", "/v1/environments", ""},
	{"POST", "/v1/environments", `{"name":"Fz env","color":"#fff","parentId":"{environment}"}`},
	{"PUT", "/v1/environments/{environment}", `{"name":"Fz renamed","identifier":"fz-env","parentId":"{environment}","color":"#000","dns":{},"bridge":{}}`},
	{"GET", "/v1/environments/me", ""},
	{"GET", "/v1/environments/api-keys", ""},
	{"GET", "/v1/subscribers", ""},
	{"GET", "/v1/integrations/in-app/status", ""},
	{"GET", "/v1/integrations/webhook/provider/{provider}/status", ""},
	{"GET", "/v1/execution-details", ""},
	{"GET", "/v1/notification-groups", ""},
	{"POST", "/v1/notification-groups", `{"name":"Fz group"}`},
	{"GET", "/v1/notification-groups/{group}", ""},
	{"PATCH", "/v1/notification-groups/{group}", `{"name":"Fz renamed"}`},
	{"GET", "/v1/notification-templates", ""},
	{"POST", "/v1/notification-templates", `{"name":"Fz v1","notificationGroupId":"{group}","steps":[{"template":{"type":"email","subject":"S","content":[{"type":"text","content":"Hi"}]}}]}`},
	{"GET", "/v1/notification-templates/{workflow}", ""},
	{"PUT", "/v1/notification-templates/{workflow}", `{"description":"d","critical":true,"preferenceSettings":{"sms":false},"steps":[{"template":{"type":"in_app","content":"Hi"}}]}`},
	{"PUT", "/v1/notification-templates/{workflow}/status", `{"active":true}`},
	{"POST", "/v1/tenants", `{"identifier":"fz-new","name":"New","data":{"k":1}}`},
	{"GET", "/v1/tenants", ""},
	{"GET", "/v1/tenants/{tenant}", ""},
	{"PATCH", "/v1/tenants/{tenant}", `{"name":"Renamed","data":{"k":2}}`},
	{"GET", "/v1/subscribers/{subscriber}/preferences", ""},
	{"GET", "/v1/subscribers/{subscriber}/preferences/global", ""},
	{"PATCH", "/v1/subscribers/{subscriber}/preferences", `{"preferences":[{"type":"email","enabled":false}]}`},
	{"PATCH", "/v1/subscribers/{subscriber}/preferences/{workflow}", `{"channel":{"type":"in_app","enabled":true}}`},
	{"GET", "/v2/subscribers/{subscriber}/preferences", ""},
	{"GET", "/v2/subscribers/{subscriber}/preferences/global", ""},
	{"PATCH", "/v2/subscribers/{subscriber}/preferences", `{"workflowId":"{workflow}","channels":{"sms":false}}`},
	{"PATCH", "/v2/subscribers/{subscriber}/preferences/bulk", `{"preferences":[{"workflowId":"{workflow}","channels":{"chat":true}}]}`},
	{"POST", "/v1/topics", `{"key":"fz-new","name":"New"}`},
	{"GET", "/v1/topics", ""},
	{"GET", "/v1/topics/{topic}", ""},
	{"PATCH", "/v1/topics/{topic}", `{"name":"Renamed"}`},
	{"POST", "/v1/topics/{topic}/subscribers", `{"subscribers":["{subscriber}","nobody"]}`},
	{"GET", "/v1/topics/{topic}/subscribers/{subscriber}", ""},
	{"POST", "/v1/topics/{topic}/subscribers/removal", `{"subscribers":["nobody"]}`},
	{"POST", "/v2/topics", `{"key":"fz-v2","name":"V2"}`},
	{"GET", "/v2/topics", ""},
	{"GET", "/v2/topics/{topic}", ""},
	{"PATCH", "/v2/topics/{topic}", `{"name":"Again"}`},
	{"GET", "/v2/topics/{topic}/subscriptions", ""},
	{"POST", "/v2/topics/{topic}/subscriptions", `{"subscriptions":["{subscriber}",{"subscriberId":"nobody"}]}`},
	{"GET", "/v2/topics/{topic}/subscriptions/tk_{topic}:si_{subscriber}", ""},
	{"POST", "/v1/events/trigger", `{"name":"fz","to":[{"type":"Topic","topicKey":"{topic}"},"ada"],"actor":"ada"}`},
	{"POST", "/v1/inbox/session", `{"applicationIdentifier":"{app}","subscriber":{"subscriberId":"ada","firstName":"Ada"}}`},
	{"GET", "/v1/inbox/notifications", ""},
	{"GET", "/v1/inbox/notifications/count", ""},
	{"GET", "/v1/inbox/preferences", ""},
	{"GET", "/v1/inbox/preferences/global", ""},
	{"PATCH", "/v1/inbox/preferences", `{"in_app":true}`},
	{"PATCH", "/v1/inbox/preferences/bulk", `{"preferences":[{"workflowId":"{workflow}","in_app":true}]}`},
	{"PATCH", "/v1/inbox/preferences/{workflow}", `{"email":false}`},
	{"PATCH", "/v1/inbox/notifications/{message}/read", ""},
	{"PATCH", "/v1/inbox/notifications/{message}/unread", ""},
	{"PATCH", "/v1/inbox/notifications/{message}/archive", ""},
	{"PATCH", "/v1/inbox/notifications/{message}/unarchive", ""},
	{"PATCH", "/v1/inbox/notifications/{message}/snooze", `{"snoozeUntil":"2099-01-01T00:00:00.000Z"}`},
	{"PATCH", "/v1/inbox/notifications/{message}/unsnooze", ""},
	{"PATCH", "/v1/inbox/notifications/{message}/complete", `{"actionType":"primary"}`},
	{"PATCH", "/v1/inbox/notifications/{message}/revert", `{"actionType":"primary"}`},
	{"POST", "/v1/inbox/notifications/seen", `{"notificationIds":["{message}"]}`},
	{"POST", "/v1/inbox/notifications/read", `{"tags":["t"],"data":"{\"x\":1}"}`},
	{"POST", "/v1/inbox/notifications/archive", `{"tags":{"or":["t"]}}`},
	{"POST", "/v1/inbox/notifications/read-archive", `{"tags":["t"]}`},
	{"DELETE", "/v2/topics/{topic}/subscriptions", `{"subscriberIds":["nobody"]}`},
	{"DELETE", "/v1/topics/{topic}", ""},
	{"DELETE", "/v2/topics/{topic}", ""},
	{"POST", "/v1/inbox/notifications/delete", `{"tags":["none"]}`},
	{"DELETE", "/v1/inbox/notifications/{message}/delete", ""},
	{"DELETE", "/v1/messages/{message}", ""},
	{"DELETE", "/v1/messages/transaction/{transaction}", ""},
	{"DELETE", "/v1/events/trigger/{transaction}", ""},
	{"DELETE", "/v1/subscribers/{subscriber}/credentials/{provider}", ""},
	{"DELETE", "/v1/integrations/{integration}", ""},
	{"DELETE", "/v1/tenants/{tenant}", ""},
	{"DELETE", "/v1/notification-templates/{workflow}", ""},
	{"DELETE", "/v1/notification-groups/{group}", ""},
	{"DELETE", "/v2/workflows/{workflow}", ""},
	{"DELETE", "/v2/subscribers/{subscriber}", ""},
	{"DELETE", "/v1/subscribers/{subscriber}", ""},
	{"DELETE", "/v1/environments/{environment}", ""},
}

// FuzzAPI sends requests made of fuzzed parts (a route, a path id, a query
// and a body) to an API holding real records, the inbox's routes with a
// subscriber's token, and holds every answer to the rule each handler
// keeps: bad input gets a 4xx whose body is a JSON object, never a 5xx.
// Without -fuzz it runs its seeds, on PostgreSQL too when TEST_DATABASE_URL
// is set: for each route, one valid request and its mutations (mutations);
// to search further:
//
//	go test -run '^$' -fuzz FuzzAPI -fuzztime 5m ./app
func FuzzAPI(f *testing.F) {
	srv := apptest.NewServer(f)
	ids := fuzzFixtures(f, srv)
	inbox, _ := apptest.OpenInbox(f, srv, "ada", "")
	for i, r := range apiRoutes {
		// The mutations come first: the valid request may delete what
		// they address.
		for _, c := range mutations(r.method, r.path, r.seed) {
			f.Add(uint8(i), c.id, c.query, c.body)
		}
		f.Add(uint8(i), "", "limit=2", r.seed)
	}
	route := func(method, path string) uint8 {
		for i, r := range apiRoutes {
			if r.method == method && r.path == path {
				return uint8(i)
			}
		}
		panic("no route " + method + " " + path)
	}
	f.Add(route("GET", "/v1/subscribers/{subscriber}/notifications/feed"), "ada", "page=-1&limit=1e9&read=maybe&payload=%7B", "")
	f.Add(route("POST", "/v1/events/trigger"), "", "", `{"name":"fz","to":[],"payload":[1]}`)
	f.Add(route("GET", "/v1/execution-details"), "", "subscriberId=ada&notificationId="+ids["notification"], "")
	f.Fuzz(func(t *testing.T, route uint8, id, query, body string) {
		r := apiRoutes[int(route)%len(apiRoutes)]
		path := r.path
		for name, real := range ids {
			if id != "" {
				real = id
			}
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(real))
			body = strings.ReplaceAll(body, "{"+name+"}", real)
		}
		if query != "" {
			path += "?" + sendable(query)
		}
		if _, err := http.NewRequest(r.method, srv.URL+path, nil); err != nil {
			t.Skip("not a request a client can send:", err)
		}
		status, answer := fuzzSend(t, srv, inbox.Token, r.method, path, body)
		if status >= 500 {
			t.Fatalf("%s %s with %q: %d %s", r.method, path, body, status, answer)
		}
		var obj map[string]any
		if status >= 400 && json.Unmarshal(answer, &obj) != nil {
			t.Fatalf("%s %s with %q: %d with a body that is not a JSON object: %q", r.method, path, body, status, answer)
		}
	})
}

// sendable percent-encodes each byte of query that a request line cannot
// hold (net/http refuses it before any handler), so that the fuzzer's
// bytes reach the handlers as the escapes a client would send.
func sendable(query string) string {
	var b strings.Builder
	for i := range len(query) {
		if c := query[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fuzzSend sends the request with the API key, or to the inbox's routes
// with the subscriber token, and returns the answer's status and body.
func fuzzSend(t *testing.T, srv *apptest.Server, token, method, path, body string) (int, []byte) {
	if strings.HasPrefix(path, "/v1/inbox/") {
		status, answer, _ := apptest.NewInbox(t, srv, token).Do(method, path, body)
		return status, answer
	}
	res := srv.Dev.Do(t, method, path, body)
	return res.Status, res.Body
}

// fuzzFixtures creates a record of every kind the routes address and
// returns their ids by the names the routes use.
func fuzzFixtures(t testing.TB, srv *apptest.Server) map[string]string {
	t.Helper()
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Fz","workflowId":"fz","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi {{ payload.x }}"}}]}`)
	var integration, ack map[string]any
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"slack","channel":"chat","credentials":{},"active":true}`).Decode(t, &integration)
	apptest.MustCreate(t, srv.Dev, "/v1/events/trigger", `{"name":"fz","to":"ada","payload":{"x":1}}`).Decode(t, &ack)
	apptest.MustCreate(t, srv.Dev, "/v2/topics/fzt/subscriptions", `{"subscriptions":["ada"]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/tenants", `{"identifier":"fzt","name":"Fz"}`)
	var group map[string]any
	apptest.MustCreate(t, srv.Dev, "/v1/notification-groups", `{"name":"Fz"}`).Decode(t, &group)
	var feed struct {
		Data []struct {
			ID             string `json:"_id"`
			NotificationID string `json:"_notificationId"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	var env map[string]any
	apptest.MustCreate(t, srv.Dev, "/v1/environments", `{"name":"Fz","color":"#fff"}`).Decode(t, &env)
	if len(feed.Data) != 1 {
		t.Fatalf("feed holds %d messages, want 1", len(feed.Data))
	}
	return map[string]string{
		"subscriber": "ada", "provider": "slack", "workflow": "fz", "topic": "fzt", "tenant": "fzt", "app": srv.App.Development.Identifier,
		"group":        fmt.Sprint(group["_id"]),
		"integration":  fmt.Sprint(integration["_id"]),
		"transaction":  fmt.Sprint(ack["transactionId"]),
		"message":      feed.Data[0].ID,
		"notification": feed.Data[0].NotificationID,
		"environment":  fmt.Sprint(env["_id"]),
	}
}

package messaging_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// These tests drive /v2/subscribers/{subscriberId}/notifications… with the
// API key, as a server does: the inbox's notifications, its filters and its
// actions, answered bare.

const apiNotifications = "/v2/subscribers/ada/notifications"

// listed reads a page of ada's notifications through the API.
func listed(t *testing.T, srv *apptest.Server, query string) []apptest.InboxNotification {
	t.Helper()
	var page struct {
		Data    []apptest.InboxNotification `json:"data"`
		HasMore bool                        `json:"hasMore"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", apiNotifications+"?"+query, "", 200).Decode(t, &page)
	return page.Data
}

func TestSubscriberNotifications_ReadAndAct(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,"tags":["ops"],"severity":"high",
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Alert {{ payload.n }}","data":{"n":"{{ payload.n }}"},
		"primaryAction":{"label":"Ack"}}}]}`)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.OpenInbox(t, srv, "bob", "")
	apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"1"}`)
	apptest.TriggerTo(t, srv, "alerts", "ada", `{"n":"2"}`)
	apptest.TriggerTo(t, srv, "hello", "bob", `{"n":"3"}`)
	inbox.Wait(2)

	is := is.New(t)
	all := listed(t, srv, "limit=10")
	is.Equal(len(all), 2)                                      // ada's two, not bob's
	is.Equal(all[0].Body, "Alert 2")                           // newest first
	is.Equal(all[0].To.SubscriberID, "ada")                    // to the subscriber of the path
	is.Equal(all[0].Severity, "high")                          // with the workflow's severity
	is.Equal(len(listed(t, srv, "limit=10&severity=high")), 1) // filtered as the inbox filters
	is.Equal(len(listed(t, srv, "limit=1&offset=1")), 1)       // paged
	alert, hello := all[0].ID, all[1].ID

	var counts []struct {
		Count int `json:"count"`
	}
	filters := url.QueryEscape(`[{"read":false},{"tags":["ops"]},{"seen":true}]`)
	apptest.MustStatus(t, srv.Dev, "GET", apiNotifications+"/count?filters="+filters, "", 200).Decode(t, &counts)
	is.Equal(len(counts), 3)     // a bare list, one count per filter
	is.Equal(counts[0].Count, 2) // unread
	is.Equal(counts[1].Count, 1) // tagged
	is.Equal(counts[2].Count, 0) // seen

	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/seen", `{"notificationIds":["`+hello+`"],"contextKeys":[]}`, 204)
	seen := listed(t, srv, "limit=10&seen=true")
	is.True(len(seen) == 1 && seen[0].ID == hello) // the one named seen

	one := func(method, path, body string) apptest.InboxNotification {
		t.Helper()
		var n apptest.InboxNotification
		apptest.MustStatus(t, srv.Dev, method, apiNotifications+"/"+path, body, 200).Decode(t, &n)
		return n
	}
	is.True(one("PATCH", hello+"/read", "").IsRead)           // read, answered bare
	is.True(!one("PATCH", hello+"/unread", "").IsRead)        // unread again
	is.True(one("PATCH", hello+"/archive", "").IsArchived)    // archived
	is.True(!one("PATCH", hello+"/unarchive", "").IsArchived) // and back
	until := srv.App.Clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	is.True(one("PATCH", hello+"/snooze", `{"snoozeUntil":"`+until+`"}`).IsSnoozed)        // snoozed
	is.True(!one("PATCH", hello+"/unsnooze", "").IsSnoozed)                                // unsnoozed
	is.True(one("PATCH", alert+"/actions/primary/complete", "").PrimaryAction.IsCompleted) // its button done
	is.True(!one("PATCH", alert+"/actions/primary/revert", "").PrimaryAction.IsCompleted)  // and pending again
	inboxView, _ := inbox.List("limit=10")
	is.True(inboxView[0].IsRead) // the inbox sees what the server did: completing read it

	one("PATCH", hello+"/unread", "")
	one("PATCH", alert+"/unread", "")
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/read", `{"tags":["ops"]}`, 204)
	is.Equal(len(listed(t, srv, "limit=10&read=false")), 1) // read-all by tag: the alert only
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/read-archive", `{}`, 204)
	is.Equal(len(listed(t, srv, "limit=10&archived=true")), 1) // the read one archived
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/archive", `{"data":"{\"n\":\"none\"}"}`, 204)
	is.Equal(len(listed(t, srv, "limit=10&archived=true")), 1) // a data filter that selects nothing archives nothing
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/archive", "", 204)
	is.Equal(len(listed(t, srv, "limit=10&archived=true")), 2) // without a body, all of them
	apptest.MustStatus(t, srv.Dev, "DELETE", apiNotifications+"/"+alert, "", 204)
	is.Equal(len(listed(t, srv, "limit=10")), 1) // deleted
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/delete", `{}`, 204)
	is.Equal(len(listed(t, srv, "limit=10")), 0) // all deleted
	var bob []apptest.InboxNotification
	var page struct {
		Data []apptest.InboxNotification `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/bob/notifications", "", 200).Decode(t, &page)
	bob = page.Data
	is.Equal(len(bob), 1) // another subscriber's are untouched
}

func TestSubscriberNotifications_Refusals(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	bob, _ := apptest.OpenInbox(t, srv, "bob", "")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	apptest.TriggerTo(t, srv, "hello", "bob", `{}`)
	id := inbox.Wait(1)[0].ID
	bobs := bob.Wait(1)[0].ID
	soon := srv.App.Clock.Now().Add(30 * time.Second).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"unknown subscriber", "GET", "/v2/subscribers/nobody/notifications", "", 404},
		{"unknown subscriber's count", "GET", "/v2/subscribers/nobody/notifications/count", "", 404},
		{"unknown subscriber's read", "PATCH", "/v2/subscribers/nobody/notifications/" + id + "/read", "", 404},
		{"unknown subscriber's bulk", "POST", "/v2/subscribers/nobody/notifications/read", `{}`, 404},
		{"limit out of range", "GET", apiNotifications + "?limit=101", "", 422},
		{"a cursor that is no id", "GET", apiNotifications + "?after=nope", "", 422},
		{"unread and archived", "GET", apiNotifications + "?read=false&archived=true", "", 400},
		{"unknown severity", "GET", apiNotifications + "?severity=urgent", "", 422},
		{"data not JSON", "GET", apiNotifications + "?data=nope", "", 422},
		{"filters not JSON", "GET", apiNotifications + "/count?filters=nope", "", 400},
		{"unknown notification", "PATCH", apiNotifications + "/" + "0123456789abcdef01234567/read", "", 404},
		{"not an id", "PATCH", apiNotifications + "/nope/archive", "", 404},
		{"another subscriber's", "PATCH", apiNotifications + "/" + bobs + "/read", "", 404},
		{"another subscriber's delete", "DELETE", apiNotifications + "/" + bobs, "", 404},
		{"unsnooze of what is not snoozed", "PATCH", apiNotifications + "/" + id + "/unsnooze", "", 404},
		{"snooze without a time", "PATCH", apiNotifications + "/" + id + "/snooze", `{}`, 422},
		{"snooze too soon", "PATCH", apiNotifications + "/" + id + "/snooze", `{"snoozeUntil":"` + soon + `"}`, 422},
		{"snooze not JSON", "PATCH", apiNotifications + "/" + id + "/snooze", `{`, 400},
		{"unknown button type", "PATCH", apiNotifications + "/" + id + "/actions/tertiary/complete", "", 422},
		{"no such button", "PATCH", apiNotifications + "/" + id + "/actions/primary/complete", "", 400},
		{"seen of a bad id", "POST", apiNotifications + "/seen", `{"notificationIds":["nope"]}`, 422},
		{"bad tags", "POST", apiNotifications + "/read", `{"tags":7}`, 400},
		{"bad data", "POST", apiNotifications + "/archive", `{"data":"[1]"}`, 400},
		{"contextKeys not a list", "POST", apiNotifications + "/delete", `{"contextKeys":"a"}`, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status) // refused
		})
	}
	is := is.New(t)
	noKey := platformtest.NewClient(srv.URL, "")
	is.Equal(noKey.Do(t, "GET", apiNotifications, "").Status, 401) // the API key is required
	n, _ := inbox.List("limit=10")
	is.True(len(n) == 1 && !n[0].IsRead && !n[0].IsSeen && !n[0].IsSnoozed) // nothing refused changed it
}

// An action through the API updates an open inbox at once: its socket
// hears the counts change, as for the inbox's own actions.
func TestSubscriberNotifications_HeardByTheInbox(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	sock := dialSocket(t, srv, c.Token)
	sock.next() // CONNECT answered
	apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"1"}`)
	_, p := sock.events(3)
	id := p[0]["message"].(map[string]any)["_id"].(string)

	apptest.MustStatus(t, srv.Dev, "PATCH", apiNotifications+"/"+id+"/read", "", 200)
	names, p := sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // a read through the API is heard
	is.Equal(p[1]["unreadCount"], 0.0)                                        // nothing unread

	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/seen", `{"notificationIds":["`+id+`"]}`, 204)
	name, _ := sock.event()
	is.Equal(name, "unseen_count_changed") // seen changes the unseen count only

	apptest.MustStatus(t, srv.Dev, "PATCH", apiNotifications+"/"+id+"/unread", "", 200)
	_, p = sock.events(2)
	is.Equal(p[1]["unreadCount"], 1.0) // unread again

	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/read", `{}`, 204)
	_, p = sock.events(2)
	is.Equal(p[1]["unreadCount"], 0.0) // read-all is heard

	apptest.MustStatus(t, srv.Dev, "DELETE", apiNotifications+"/"+id, "", 204)
	names, _ = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // a delete is heard
}

// contextKeys selects the notifications of exactly that context, as an
// inbox session's context does.
func TestSubscriberNotifications_Context(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	acme, _ := openContextInbox(t, srv, "ada", `,"context":{"tenant":"acme"}`)
	plain, _ := openContextInbox(t, srv, "ada", "")
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":"acme"},"context":{"tenant":"acme"}}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":"none"}}`)
	acmeID := acme.Wait(1)[0].ID
	plain.Wait(1)

	is.Equal(bodies(listed(t, srv, "limit=10")), []string{"Hello none"})                         // without contextKeys: no context's
	is.Equal(bodies(listed(t, srv, "limit=10&contextKeys=tenant:acme")), []string{"Hello acme"}) // that context's alone
	is.Equal(len(listed(t, srv, "limit=10&contextKeys=tenant:globex")), 0)                       // another context's: none
	is.Equal(srv.Dev.Do(t, "PATCH", apiNotifications+"/"+acmeID+"/read", "").Status, 404)        // not in the query's context
	apptest.MustStatus(t, srv.Dev, "PATCH", apiNotifications+"/"+acmeID+"/read?contextKeys=tenant:acme", "", 200)
	apptest.MustStatus(t, srv.Dev, "POST", apiNotifications+"/archive", `{"contextKeys":["tenant:acme"]}`, 204)
	n, _ := acme.List("limit=10&archived=true")
	is.Equal(len(n), 1) // the context's archived
	n, _ = plain.List("limit=10&archived=true")
	is.Equal(len(n), 0) // the other left alone
}

package messaging_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// feedState is what a test of the kept pages compares: the first page of
// a subscriber's feed, read through one unchanging query.
type feedState struct {
	TotalCount int `json:"totalCount"`
	Data       []struct {
		ID   string `json:"_id"`
		Read bool   `json:"read"`
		Seen bool   `json:"seen"`
		CTA  struct {
			Action struct {
				Status string `json:"status"`
			} `json:"action"`
		} `json:"cta"`
	} `json:"data"`
}

// Every write to a subscriber's messages shows in the next read of the
// same feed page, which the read before it kept.
func TestPages_FeedSeesEveryWrite(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Approve","workflowId":"approve","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Approve?","primaryAction":{"label":"Yes"}}}]}`)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	ids := feedIDs(t, srv, "ada", 3)
	feed := func() feedState {
		var f feedState
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=10", "").Decode(t, &f)
		return f
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T)
		check func(is *is.I, f feedState)
	}{
		{"a new message", func(t *testing.T) {
			apptest.TriggerTo(t, srv, "approve", "ada", `{}`)
			platformtest.Eventually(t, 10*time.Second, func() bool { return feed().TotalCount == 4 }, "the new message")
		}, func(is *is.I, f feedState) { is.Equal(f.TotalCount, 4) }},
		{"mark-as", func(t *testing.T) {
			wantStatus(t, srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+ids[0]+`","markAs":"read"}`), 201)
		}, func(is *is.I, f feedState) { is.True(f.Data[1].Read) }},
		{"the legacy mark-as", func(t *testing.T) {
			wantStatus(t, srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":"`+ids[1]+`","mark":{"seen":true}}`), 201)
		}, func(is *is.I, f feedState) { is.True(f.Data[2].Seen) }},
		{"an action", func(t *testing.T) {
			id := feed().Data[0].ID
			wantStatus(t, srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/"+id+"/actions/primary", `{"status":"done"}`), 201)
		}, func(is *is.I, f feedState) { is.Equal(f.Data[0].CTA.Action.Status, "done") }},
		{"mark-all", func(t *testing.T) {
			wantStatus(t, srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"read"}`), 201)
		}, func(is *is.I, f feedState) {
			for _, m := range f.Data {
				is.True(m.Read) // every message read
			}
		}},
		{"a delete", func(t *testing.T) {
			wantStatus(t, srv.Dev.Do(t, "DELETE", "/v1/messages/"+ids[2], ""), 200)
		}, func(is *is.I, f feedState) { is.Equal(f.TotalCount, 3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := feed()
			if again := feed(); len(again.Data) != len(before.Data) {
				t.Fatalf("the page changed without a write")
			}
			tc.write(t)
			tc.check(is.New(t), feed())
		})
	}
}

// Every write to a subscriber's inbox shows in the next read of the same
// inbox page, which the read before it kept.
func TestPages_InboxSeesEveryWrite(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Approve","workflowId":"approve","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Approve?","primaryAction":{"label":"Yes"}}}]}`)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.TriggerTo(t, srv, "approve", "ada", `{}`)
	apptest.TriggerTo(t, srv, "approve", "ada", `{}`)
	n := c.Wait(2)
	const tab = "limit=10&archived=false&snoozed=false"
	do := func(t *testing.T, method, path, body string) {
		t.Helper()
		if status, out, _ := c.Do(method, path, body); status != 200 && status != 204 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T)
		check func(is *is.I, page []apptest.InboxNotification)
	}{
		{"read", func(t *testing.T) { do(t, "PATCH", "/v1/inbox/notifications/"+n[0].ID+"/read", "") },
			func(is *is.I, page []apptest.InboxNotification) { is.True(page[0].IsRead) }},
		{"unread", func(t *testing.T) { do(t, "PATCH", "/v1/inbox/notifications/"+n[0].ID+"/unread", "") },
			func(is *is.I, page []apptest.InboxNotification) { is.True(!page[0].IsRead) }},
		{"complete", func(t *testing.T) {
			do(t, "PATCH", "/v1/inbox/notifications/"+n[0].ID+"/complete", `{"actionType":"primary"}`)
		},
			func(is *is.I, page []apptest.InboxNotification) { is.True(page[0].PrimaryAction.IsCompleted) }},
		{"read all", func(t *testing.T) { do(t, "POST", "/v1/inbox/notifications/read", `{}`) },
			func(is *is.I, page []apptest.InboxNotification) { is.True(page[1].IsRead) }},
		{"archive", func(t *testing.T) { do(t, "PATCH", "/v1/inbox/notifications/"+n[0].ID+"/archive", "") },
			func(is *is.I, page []apptest.InboxNotification) { is.Equal(len(page), 1) }},
		{"snooze", func(t *testing.T) {
			until := srv.App.Clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
			do(t, "PATCH", "/v1/inbox/notifications/"+n[1].ID+"/snooze", `{"snoozeUntil":"`+until+`"}`)
		}, func(is *is.I, page []apptest.InboxNotification) { is.Equal(len(page), 0) }},
		{"the snooze's end", func(t *testing.T) {
			srv.App.Clock.Advance(2*time.Hour + time.Second)
			platformtest.Eventually(t, 10*time.Second, func() bool {
				page, _ := c.List(tab)
				return len(page) == 1
			}, "the snooze to end")
		}, func(is *is.I, page []apptest.InboxNotification) { is.Equal(len(page), 1) }},
		{"delete", func(t *testing.T) { do(t, "DELETE", "/v1/inbox/notifications/"+n[1].ID+"/delete", "") },
			func(is *is.I, page []apptest.InboxNotification) { is.Equal(len(page), 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.List(tab)
			tc.write(t)
			page, _ := c.List(tab)
			tc.check(is.New(t), page)
		})
	}
}

// A page read through the API's inbox route is kept apart from the
// session's, and both see a write through either.
func TestPages_BothInboxRoutes(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	n := c.Wait(1)[0]
	api := func() bool {
		var out struct {
			Data []struct {
				IsRead bool `json:"isRead"`
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v2/subscribers/ada/notifications?limit=10", "").Decode(t, &out)
		is.Equal(len(out.Data), 1) // the one notification
		return out.Data[0].IsRead
	}
	is.True(!api()) // unread, and kept
	status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/read", "")
	is.Equal(status, 200) // read through the session
	var read struct {
		Data apptest.InboxNotification `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &read))
	is.True(read.Data.IsRead) // answered read
	is.True(api())            // and the API's page sees it
}

func wantStatus(t *testing.T, res *platformtest.Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("answered %d, want %d: %s", res.Status, status, res.Body)
	}
}

// With two instances on one database, a page one keeps is dropped when the
// other writes: a delivery, the inbox's marks, the server API's mark-as and
// deletes.
func TestPages_WritesOfAnotherInstance(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("several instances share a PostgreSQL database only")
	}
	instances := apptest.NewInstances(t, 2)
	a, b := instances[0], instances[1]
	a.Herald.Worker.Stop(context.Background()) // b runs every job
	apptest.CreateHello(t, b, "Hello")
	c, _ := apptest.OpenInbox(t, a, "ada", "")
	onB := apptest.NewInbox(t, b, c.Token)
	feedOnA := func() feedState {
		var f feedState
		a.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=10", "").Decode(t, &f)
		return f
	}
	// seenOnA waits until a's pages show what ok looks for.
	seenOnA := func(what string, ok func(f feedState, inbox []apptest.InboxNotification) bool) {
		t.Helper()
		platformtest.Eventually(t, 10*time.Second, func() bool {
			page, _ := c.List("limit=10")
			return ok(feedOnA(), page)
		}, what)
	}

	feedOnA()
	c.List("limit=10") // both pages kept on a, empty
	apptest.TriggerTo(t, b, "hello", "ada", `{}`)
	seenOnA("b's delivery on a", func(f feedState, inbox []apptest.InboxNotification) bool {
		return f.TotalCount == 1 && len(inbox) == 1
	})
	id := feedOnA().Data[0].ID

	if status, body, _ := onB.Do("PATCH", "/v1/inbox/notifications/"+id+"/read", ""); status != 200 {
		t.Fatalf("read through b: %d %s", status, body)
	}
	seenOnA("b's inbox read on a", func(f feedState, inbox []apptest.InboxNotification) bool {
		return f.Data[0].Read && inbox[0].IsRead
	})
	wantStatus(t, b.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+id+`","markAs":"unread"}`), 201)
	seenOnA("b's mark-as on a", func(f feedState, inbox []apptest.InboxNotification) bool {
		return !f.Data[0].Read && !inbox[0].IsRead
	})
	wantStatus(t, b.Dev.Do(t, "DELETE", "/v1/messages/"+id, ""), 200)
	seenOnA("b's delete on a", func(f feedState, inbox []apptest.InboxNotification) bool {
		return f.TotalCount == 0 && len(inbox) == 0
	})
}

// A page stays kept while other subscribers' messages change, and the
// metrics say how pages were answered.
func TestPages_KeptAcrossOtherSubscribersWrites(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	feedIDs(t, srv, "ada", 1)
	pages := func(result string) float64 {
		n, _ := platformtest.Sample(platformtest.Scrape(t, srv.URL+"/metrics"), "herald_inbox_pages_total", map[string]string{"result": result})
		return n
	}
	read := func() { srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=5", "") }
	read()
	kept, fromDB := pages("kept"), pages("read")
	// Another subscriber's deliveries, waited for through the messages
	// list, which no page cache answers.
	apptest.TriggerTo(t, srv, "hello", "bob", `{"n":1}`)
	apptest.TriggerTo(t, srv, "hello", "bob", `{"n":2}`)
	platformtest.Eventually(t, 10*time.Second, func() bool {
		var list struct {
			TotalCount int `json:"totalCount"`
		}
		srv.Dev.Do(t, "GET", "/v1/messages?channel=in_app&subscriberId=bob", "").Decode(t, &list)
		return list.TotalCount == 2
	}, "bob's messages")
	read()
	is.Equal(pages("kept"), kept+1) // ada's page answered from memory
	is.Equal(pages("read"), fromDB) // not from the database
}

// With no memory for pages, every read asks the database.
func TestPages_NoneKept(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.PageCache(-1))
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	feedIDs(t, srv, "ada", 1)
	for range 3 {
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=5", "")
	}
	m := platformtest.Scrape(t, srv.URL+"/metrics")
	kept, _ := platformtest.Sample(m, "herald_inbox_pages_total", map[string]string{"result": "kept"})
	is.Equal(kept, 0.0) // none kept
}

package activity_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

const day = 24 * time.Hour

// retentionServer is the wired application with the given retention, on
// the test clock, and its sweeper, which the test runs by hand.
func retentionServer(t *testing.T, keep app.Retention) (*apptest.Server, *activity.Sweeper) {
	t.Helper()
	srv := apptest.NewServer(t, apptest.Retention(keep))
	return srv, srv.Herald.Sweeper
}

// retentionRecords triggers, on srv, an in-app and a chat notification
// and a notification whose delay outlasts every retention, and waits for
// each to reach its state; it answers their transactionIds.
func retentionRecords(t *testing.T, srv *apptest.Server) (inApp, chat, pending string) {
	t.Helper()
	inApp = apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":1}}`)
	chat = apptest.Trigger(t, srv, `{"name":"ping","to":"ada","payload":{"n":2}}`)
	pending = apptest.Trigger(t, srv, `{"name":"later","to":"ada"}`)
	apptest.WaitJobs(t, srv, inApp, "trigger:completed", "in_app:completed")
	apptest.WaitJobs(t, srv, chat, "trigger:completed", "chat:completed")
	apptest.WaitJobs(t, srv, pending, "trigger:completed", "delay:delayed", "in_app:pending")
	return inApp, chat, pending
}

// TestRetention_SweepKeepsNewerAndPending: with the default retention, a
// sweep 40 days on deletes the old finished notifications and the old chat
// message, keeps the old in-app message (kept a year), the newer records
// and the pending notification; every read endpoint answers for what is
// left, and a year on the old in-app message goes too. With 0 everywhere,
// nothing is deleted.
func TestRetention_SweepKeepsNewerAndPending(t *testing.T) {
	defaults := app.Retention{Activity: 30 * day, InApp: 365 * day, Messages: 30 * day}
	for _, tc := range []struct {
		name string
		keep app.Retention
	}{
		{"OK defaults", defaults},
		{"OK zero keeps forever", app.Retention{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv, sweeper := retentionServer(t, tc.keep)
			hook := apptest.NewChatHook(t, http.StatusOK)
			apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
				"credentials":{"webhookUrl":"`+hook.URL+`"}}`)
			apptest.SetUpChat(t, srv, "ada", hook.URL)
			apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
			apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
				"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Ping"}}]}`)
			apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Later","workflowId":"later","active":true,"steps":[
				{"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":1000,"unit":"days"}},
				{"name":"Inbox","type":"in_app","controlValues":{"body":"Later"}}]}`)

			oldInApp, oldChat, pending := retentionRecords(t, srv)
			srv.App.Clock.Advance(40 * day)
			newInApp, newChat, _ := retentionRecords(t, srv)
			is.NoErr(sweeper.Sweep(context.Background())) // swept

			expired := tc.keep != app.Retention{}
			has := func(tx string) bool { _, ok := apptest.NotificationOf(t, srv, tx); return ok }
			is.Equal(has(oldInApp), !expired) // an old finished notification goes with its activity retention
			is.Equal(has(oldChat), !expired)  // whatever its channel
			is.True(has(pending))             // work still to do stays
			is.True(has(newInApp))            // newer records stay
			is.True(has(newChat))
			apptest.WaitJobs(t, srv, pending, "trigger:completed", "delay:delayed", "in_app:pending") // whole

			// Every read endpoint answers for what is left.
			var list struct {
				TotalCount int `json:"totalCount"`
				Data       []struct {
					ID   string `json:"_id"`
					Jobs []any  `json:"jobs"`
				} `json:"data"`
			}
			res := srv.Dev.Do(t, "GET", "/v1/notifications", "")
			is.Equal(res.Status, 200) // the activity list answers
			res.Decode(t, &list)
			want := map[bool]int{true: 4, false: 6}[expired]
			is.Equal(len(list.Data), want) // what is left, and all of it
			for _, n := range list.Data {
				is.True(len(n.Jobs) > 0)                                                  // never a notification without its jobs
				is.Equal(srv.Dev.Do(t, "GET", "/v1/notifications/"+n.ID, "").Status, 200) // each read alone
			}
			var msgs struct {
				Data []struct {
					TransactionID string         `json:"transactionId"`
					Channel       string         `json:"channel"`
					Payload       map[string]any `json:"payload"`
				} `json:"data"`
			}
			res = srv.Dev.Do(t, "GET", "/v1/messages?limit=100", "")
			is.Equal(res.Status, 200) // the messages list answers
			res.Decode(t, &msgs)
			byTx := map[string]string{}
			for _, m := range msgs.Data {
				byTx[m.TransactionID] = m.Channel
				is.True(m.Payload["n"] != nil) // each with its payload
			}
			is.Equal(byTx[oldInApp], "in_app")                                         // the old in-app message is kept a year
			is.Equal(byTx[oldChat], map[bool]string{true: "", false: "chat"}[expired]) // the old chat message goes after 30 days
			is.Equal(byTx[newChat], "chat")                                            // the newer one stays
			var feed struct {
				TotalCount int `json:"totalCount"`
				Data       []struct {
					TransactionID string         `json:"transactionId"`
					Payload       map[string]any `json:"payload"`
				} `json:"data"`
			}
			res = srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
			is.Equal(res.Status, 200) // the feed answers
			res.Decode(t, &feed)
			is.Equal(feed.TotalCount, 2)                    // both in-app messages
			is.Equal(feed.Data[1].TransactionID, oldInApp)  // the old one
			is.Equal(feed.Data[1].Payload["n"], float64(1)) // with its payload, though its notification is gone

			srv.App.Clock.Advance(400 * day)
			is.NoErr(sweeper.Sweep(context.Background())) // a year on
			res = srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
			res.Decode(t, &feed)
			is.Equal(feed.TotalCount, map[bool]int{true: 0, false: 2}[expired]) // in-app messages go after a year
			is.True(has(pending))                                               // the pending notification still stays
		})
	}
}

// TestRetention_SweepRemovesTopicEntries: a notification a topic reached
// leaves no entry in the topicKey filter's index once it is swept, so the
// filter finds nothing where the notification was.
func TestRetention_SweepRemovesTopicEntries(t *testing.T) {
	is := is.New(t)
	srv, sweeper := retentionServer(t, app.Retention{Activity: 30 * day, InApp: 365 * day, Messages: 30 * day})
	apptest.CreateHello(t, srv, "Hello")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	apptest.MustStatus(t, srv.Dev, "POST", "/v1/topics/news/subscribers", `{"subscribers":["ada"]}`, 200)
	tx := apptest.Trigger(t, srv, `{"name":"hello","to":[{"type":"Topic","topicKey":"news"}]}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	entries := func() (n int) {
		is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM notification_topics`).Scan(&n))
		return n
	}
	is.Equal(entries(), 1) // the topic's notification is indexed

	srv.App.Clock.Advance(40 * day)
	is.NoErr(sweeper.Sweep(context.Background())) // swept
	is.Equal(entries(), 0)                        // its index entry went with it
	res := srv.Dev.Do(t, "GET", "/v1/notifications?topicKey=news", "")
	is.Equal(res.Status, 200)                                // the filter still answers
	is.True(strings.Contains(string(res.Body), `"data":[]`)) // with nothing
}

// TestRetention_SweepKeepsSnoozedMessages: an in-app message the inbox
// snoozed is kept past its retention until its snooze ends, since the
// subscriber is to see it again; once back and old enough it goes, with
// the job that brought it back.
func TestRetention_SweepKeepsSnoozedMessages(t *testing.T) {
	is := is.New(t)
	srv, sweeper := retentionServer(t, app.Retention{Activity: 400 * day, InApp: 365 * day, Messages: 30 * day})
	c, _, n := inboxMessage(t, srv)
	count := func(query string) (n int) {
		t.Helper()
		is.NoErr(srv.App.DB.QueryRowContext(context.Background(), query).Scan(&n))
		return n
	}

	srv.App.Clock.Advance(370 * day)
	c, _ = apptest.OpenInbox(t, srv, "ada", "") // a session of today
	until := srv.App.Clock.Now().Add(2 * time.Hour).UTC()
	status, _, _ := c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/snooze", `{"snoozeUntil":"`+until.Format(time.RFC3339)+`"}`)
	is.Equal(status, 200)                                                   // snoozed, past the in-app retention
	is.NoErr(sweeper.Sweep(context.Background()))                           // swept
	is.Equal(count(`SELECT count(*) FROM messages`), 1)                     // the snoozed message stays
	is.Equal(count(`SELECT count(*) FROM jobs WHERE type = 'unsnooze'`), 1) // with the job that ends its snooze

	srv.App.Clock.Advance(2*time.Hour + time.Second)
	platformtest.Eventually(t, 10*time.Second, func() bool {
		inbox, _ := c.List("limit=10&archived=false&snoozed=false")
		return len(inbox) == 1
	}, "the snooze to end")
	srv.App.Clock.Advance(401 * day)
	is.NoErr(sweeper.Sweep(context.Background()))       // a year after it came back
	is.Equal(count(`SELECT count(*) FROM messages`), 0) // the message goes
	is.Equal(count(`SELECT count(*) FROM jobs`), 0)     // and no job is left behind
}

// TestRetention_SnoozeAfterTheNotificationExpired: an in-app message
// outlives its notification, but the job that would end a snooze belongs
// to one; snoozing such a message is refused with a 422 that says why,
// and leaves it in the inbox, instead of failing with a 500 after
// snoozing it for good.
func TestRetention_SnoozeAfterTheNotificationExpired(t *testing.T) {
	is := is.New(t)
	srv, sweeper := retentionServer(t, app.Retention{Activity: 30 * day, InApp: 365 * day, Messages: 30 * day})
	c, tx, n := inboxMessage(t, srv)
	srv.App.Clock.Advance(40 * day)
	is.NoErr(sweeper.Sweep(context.Background())) // the notification expires, its message stays
	_, ok := apptest.NotificationOf(t, srv, tx)
	is.True(!ok) // gone

	c, _ = apptest.OpenInbox(t, srv, "ada", "") // a session of today
	until := srv.App.Clock.Now().Add(2 * time.Hour).UTC()
	status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/snooze", `{"snoozeUntil":"`+until.Format(time.RFC3339)+`"}`)
	is.Equal(status, 422)                                               // refused
	is.True(strings.Contains(string(body), "can no longer be snoozed")) // saying why
	inbox, _ := c.List("limit=10&archived=false&snoozed=false")
	is.Equal(len(inbox), 1) // still in the inbox
}

// inboxMessage delivers one in-app message to ada on srv and returns her
// inbox client, its transactionId and the message as her inbox shows it.
func inboxMessage(t *testing.T, srv *apptest.Server) (*apptest.Inbox, string, apptest.InboxNotification) {
	t.Helper()
	apptest.CreateHello(t, srv, "Hello")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	return c, tx, c.Wait(1)[0]
}

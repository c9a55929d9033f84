package activity_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestBroadcast_LargePayloadStoredOnce broadcasts a large payload to a few
// subscribers through an in-app and an email step (two messages per
// notification) and checks that the database grows by one copy of it for
// the whole broadcast (not one per notification, nor per message, nor in
// a feed item), while the feed, its payload filter and the messages list
// still show it. The payload is 400 KB, under the trigger's payload limit.
func TestBroadcast_LargePayloadStoredOnce(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"http://127.0.0.1:1/mail"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Big","workflowId":"big","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hello {{ payload.name }}"}},
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hello {{ payload.name }}"}}]}`)
	const subscribers = 4
	for i := range subscribers {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"big-%d","email":"big-%d@example.com"}`, i, i))
	}
	blob := strings.Repeat("x", 400<<10)
	// SQLite's dbstat says what the file grew by; PostgreSQL, which
	// compresses the blob, has its rows checked below only.
	measure := !sqldbtest.OnPostgres()
	var before int64
	if measure {
		_, before = footprint(t, srv.App.DB)
	}

	res := srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"big","payload":{"name":"Ada","blob":"`+blob+`"}}`)
	is.Equal(res.Status, 200) // broadcast accepted
	platformtest.Eventually(t, 10*time.Second, func() bool {
		var n int
		srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM messages`).Scan(&n)
		return n == 2*subscribers
	}, "every message stored")

	if measure {
		_, after := footprint(t, srv.App.DB)
		copies := float64(after-before) / float64(len(blob))
		t.Logf("database grew %d KB, %.2f payload copies", (after-before)>>10, copies)
		is.True(copies < 1.3) // one copy for the broadcast, no more
	}

	var stored, rows int
	is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*), coalesce(sum(length(payload)), 0) FROM message_payloads`).Scan(&rows, &stored))
	is.Equal(rows, subscribers) // one payload per notification, not per message
	is.True(stored < len(blob)) // each names the payload stored once
	is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*), coalesce(sum(length(body)), 0) FROM stored_values`).Scan(&rows, &stored))
	is.Equal(rows, 1)           // the notifications and messages share one stored payload
	is.True(stored > len(blob)) // the whole payload

	var feed struct {
		Data []struct {
			Payload struct {
				Name string `json:"name"`
				Blob string `json:"blob"`
			} `json:"payload"`
		} `json:"data"`
	}
	filter := base64.StdEncoding.EncodeToString([]byte(`{"name":"Ada"}`))
	srv.Dev.Do(t, "GET", "/v1/subscribers/big-1/notifications/feed?payload="+filter, "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                // the payload filter reads the payload kept apart
	is.Equal(feed.Data[0].Payload.Blob, blob)  // the feed shows the whole payload
	is.Equal(feed.Data[0].Payload.Name, "Ada") // and its fields
	var list struct {
		Data []struct {
			Channel string         `json:"channel"`
			Payload map[string]any `json:"payload"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?limit=100", "").Decode(t, &list)
	is.Equal(len(list.Data), 2*subscribers) // every message listed
	for _, m := range list.Data {
		is.Equal(m.Payload["blob"], blob) // each with the payload of its notification
	}
}

// TestInbox_DeleteDropsPayloads: a message deleted from the inbox, alone
// or in bulk, takes its notification's stored payload with it once no
// message is left to read it, as every other way a message is deleted
// does; the sweeper would never find those payloads again.
func TestInbox_DeleteDropsPayloads(t *testing.T) {
	for _, tc := range []struct {
		name string
		del  func(c *apptest.Inbox, id string) int
	}{
		{"OK one", func(c *apptest.Inbox, id string) int {
			status, _, _ := c.Do("DELETE", "/v1/inbox/notifications/"+id+"/delete", "")
			return status
		}},
		{"OK bulk", func(c *apptest.Inbox, id string) int {
			status, _, _ := c.Do("POST", "/v1/inbox/notifications/delete", `{}`)
			return status
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv := apptest.NewServer(t)
			apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
			c, _ := apptest.OpenInbox(t, srv, "ada", "")
			apptest.TriggerTo(t, srv, "hello", "ada", `{"name":"Ada","note":"`+strings.Repeat("n", 300)+`"}`) // too large for the message's row
			n := c.Wait(1)[0]
			payloads := func() (n int) {
				is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM message_payloads`).Scan(&n))
				return n
			}
			is.Equal(payloads(), 1) // the message's payload is stored apart

			is.Equal(tc.del(c, n.ID), 204) // deleted
			is.Equal(payloads(), 0)        // and its payload with it
		})
	}
}

// TestMessage_SmallPayloadInItsRow: a small payload is kept in each
// message's own row, not apart in message_payloads, and every read shows
// it as it shows one kept apart; deleting the messages leaves nothing.
func TestMessage_SmallPayloadInItsRow(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Two","workflowId":"two","active":true,"steps":[
		{"name":"First","type":"in_app","controlValues":{"body":"one {{ payload.name }}"}},
		{"name":"Second","type":"in_app","controlValues":{"body":"two"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	tx := apptest.TriggerTo(t, srv, "two", "ada", `{"name":"Ada"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "in_app:completed")
	db := srv.App.DB
	inRows := func() (out []string) {
		rows, err := db.QueryContext(ctx, `SELECT payload FROM messages ORDER BY created_at, id`)
		is.NoErr(err)
		defer rows.Close()
		for rows.Next() {
			var p string
			is.NoErr(rows.Scan(&p))
			out = append(out, p)
		}
		return out
	}
	is.Equal(inRows(), []string{`{"name":"Ada"}`, `{"name":"Ada"}`}) // in each row
	var apart int
	is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM message_payloads`).Scan(&apart))
	is.Equal(apart, 0) // and not apart

	filter := base64.StdEncoding.EncodeToString([]byte(`{"name":"Ada"}`))
	for _, path := range []string{"/v1/subscribers/ada/notifications/feed", "/v1/subscribers/ada/notifications/feed?payload=" + filter, "/v1/messages?subscriberId=ada"} {
		var page struct {
			Data []struct {
				Payload map[string]any `json:"payload"`
			} `json:"data"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", path, "", 200).Decode(t, &page)
		is.Equal(len(page.Data), 2) // both messages
		for _, m := range page.Data {
			is.Equal(m.Payload["name"], "Ada") // each with its payload
		}
	}
	apptest.MustStatus(t, srv.Dev, "DELETE", "/v1/messages/transaction/"+tx, "", 204)
	is.Equal(len(inRows()), 0) // gone with them
}

// TestRetention_StoredValueGoesWithItsLastReference: a large payload is
// stored once and kept while a notification or message names it; once
// retention has swept every record that named it, the sweep of stored
// values deletes it, and keeps one a newer trigger named again.
func TestRetention_StoredValueGoesWithItsLastReference(t *testing.T) {
	is := is.New(t)
	keep := 30 * day
	srv, sweeper := retentionServer(t, app.Retention{Activity: keep, InApp: keep, Messages: keep})
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	kept, dropped := strings.Repeat("k", 4<<10), strings.Repeat("d", 4<<10)
	trigger := func(blob string) {
		tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"name":"Ada","blob":"`+blob+`"}}`)
		apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	}
	stored := func(blob string) (n int) {
		is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM stored_values WHERE body LIKE ?`,
			`%`+blob[:64]+`%`).Scan(&n))
		return n
	}
	trigger(kept)
	trigger(dropped)
	is.Equal(stored(kept), 1)    // each payload stored once, for its notification and its message
	is.Equal(stored(dropped), 1) // the other too

	srv.App.Clock.Advance(40 * day)
	trigger(kept)
	is.NoErr(sweeper.Sweep(context.Background())) // swept
	is.Equal(stored(dropped), 0)                  // nothing names it any more
	is.Equal(stored(kept), 1)                     // the newer trigger stored it again
	srv.App.Clock.Advance(2 * time.Hour)
	is.NoErr(sweeper.Sweep(context.Background())) // swept past the grace of a value just stored
	is.Equal(stored(kept), 1)                     // the newer notification and message name it

	var feed struct {
		Data []struct {
			Payload map[string]any `json:"payload"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                  // the newer message alone
	is.Equal(feed.Data[0].Payload["blob"], kept) // with its payload
}

// TestBroadcast_RenderedContentStoredOncePerMessage: an in-app template
// that renders a large payload makes each message's content large; the
// database grows by that content once per message and the payload once,
// not by the content again in each message's stored feed item, and the
// feed still shows it.
func TestBroadcast_RenderedContentStoredOncePerMessage(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "{{ payload.blob }}")
	const subscribers = 4
	for i := range subscribers {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"big-%d"}`, i))
	}
	blob := strings.Repeat("x", 100<<10)
	measure := !sqldbtest.OnPostgres()
	var before int64
	if measure {
		_, before = footprint(t, srv.App.DB)
	}
	res := srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"hello","payload":{"blob":"`+blob+`"}}`)
	is.Equal(res.Status, 200) // broadcast accepted
	platformtest.Eventually(t, 10*time.Second, func() bool {
		var n int
		srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM messages`).Scan(&n)
		return n == subscribers
	}, "every message stored")
	if measure {
		_, after := footprint(t, srv.App.DB)
		copies := float64(after-before) / float64(len(blob))
		t.Logf("database grew %d KB, %.2f copies of the rendered content", (after-before)>>10, copies)
		is.True(copies < subscribers+1.5) // each message's content and the payload, once each
	}
	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/big-1/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)          // the subscriber's message
	is.Equal(feed.Data[0].Content, blob) // with its whole content
}

package activity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestBroadcast_LargeOverridesStoredOnce broadcasts large overrides to a
// few subscribers through an in-app and an email step and checks that the
// database grows by one copy of them for the whole broadcast (not one per
// notification, message or feed item), while the feed, the messages list,
// the inbox and the activity feed show them byte for byte as sent, the
// feed item's fields in the order of one whose small overrides are kept
// in its row.
func TestBroadcast_LargeOverridesStoredOnce(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"http://127.0.0.1:1/mail"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Big","workflowId":"big","active":true,"tags":["t1"],"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hello {{ payload.name }}"}},
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hello {{ payload.name }}"}}]}`)
	const subscribers = 8
	for i := range subscribers {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"ov-%d","email":"ov-%d@example.com"}`, i, i))
	}
	// Compact, with fields in no sorted order, and a "tags" field of its
	// own: the reads must give back these very bytes.
	overrides := `{"zeta":1,"email":{"tags":["x"],"blob":"` + strings.Repeat("o", 256<<10) + `"},"alpha":"é\u003c"}`
	inbox, _ := apptest.OpenInbox(t, srv, "ov-0", "")
	countMessages := func() (n int) {
		srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM messages`).Scan(&n)
		return n
	}
	// The same broadcast with small overrides, kept in each row, first:
	// what the large one adds to it is what the overrides cost.
	measure := !sqldbtest.OnPostgres()
	broadcast := func(overrides string, messages int) (grew int64) {
		t.Helper()
		var before int64
		if measure {
			_, before = footprint(t, srv.App.DB)
		}
		res := srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"big","payload":{"name":"Ada"},"overrides":`+overrides+`}`)
		is.Equal(res.Status, 200) // broadcast accepted
		platformtest.Eventually(t, 10*time.Second, func() bool { return countMessages() == messages }, "every message stored")
		if measure {
			_, after := footprint(t, srv.App.DB)
			grew = after - before
		}
		return grew
	}
	small := broadcast(`{"small":true}`, 2*subscribers)
	large := broadcast(overrides, 4*subscribers)
	if measure {
		copies := float64(large-small) / float64(len(overrides))
		t.Logf("database grew %d KB with small overrides, %d KB with large ones: %.2f copies of them for %d messages",
			small>>10, large>>10, copies, 2*subscribers)
		is.True(copies < 1.3) // one copy for the broadcast, not one per recipient
	}
	db := srv.App.DB
	var rows, stored int
	is.NoErr(db.QueryRowContext(context.Background(), `SELECT count(*), coalesce(sum(length(body)), 0) FROM stored_values`).Scan(&rows, &stored))
	is.Equal(rows, 1)                                   // the notifications and messages share one stored copy
	is.Equal(stored, utf8.RuneCountInString(overrides)) // the whole of it, counted in characters
	var inMessages int
	is.NoErr(db.QueryRowContext(context.Background(), `SELECT coalesce(sum(length(overrides)), 0) FROM messages`).Scan(&inMessages))
	is.True(inMessages < len(overrides)) // each message names it

	var feed struct {
		Data []json.RawMessage `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ov-1/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 2)                                      // the large overrides' message, then the small ones'
	is.Equal(string(field(t, feed.Data[0], "overrides")), overrides) // the overrides as sent
	is.Equal(string(field(t, feed.Data[1], "overrides")), `{"small":true}`)
	is.Equal(keys(t, feed.Data[0]), keys(t, feed.Data[1])) // in the same place as the small ones

	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?limit=100", "").Decode(t, &list)
	is.Equal(len(list.Data), 4*subscribers) // every message listed
	n := 0
	for _, m := range list.Data {
		if o := field(t, m, "overrides"); string(o) != `{"small":true}` {
			is.Equal(string(o), overrides) // each with its trigger's overrides
			n++
		}
	}
	is.Equal(n, 2*subscribers)

	got := inbox.Wait(2)
	is.Equal(len(got), 2) // the inbox lists both messages

	var activity struct {
		Data []struct {
			Jobs []struct {
				Overrides json.RawMessage `json:"overrides"`
			} `json:"jobs"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications?subscriberIds=ov-2", "").Decode(t, &activity)
	is.Equal(len(activity.Data), 2)
	is.True(len(activity.Data[0].Jobs) > 0)
	for _, j := range activity.Data[0].Jobs { // the newer
		is.Equal(string(j.Overrides), overrides) // the activity feed's jobs too
	}
}

// field is the raw JSON of obj's field name.
func field(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// keys are obj's field names in the order it writes them.
func keys(t *testing.T, obj json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	var out []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return slices.Clip(out)
}

// TestRetention_OverridesKeptWhileAMessageNamesThem: large overrides are
// stored once for a trigger's notification and messages; when retention
// deletes the notification but keeps its in-app message longer, the
// stored overrides stay, and the feed shows them, until the message goes
// too.
func TestRetention_OverridesKeptWhileAMessageNamesThem(t *testing.T) {
	is := is.New(t)
	srv, sweeper := retentionServer(t, app.Retention{Activity: day, InApp: 30 * day, Messages: day})
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	overrides := `{"blob":"` + strings.Repeat("o", 4<<10) + `"}`
	tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"name":"Ada"},"overrides":`+overrides+`}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	count := func(query string) (n int) {
		is.NoErr(srv.App.DB.QueryRowContext(context.Background(), query).Scan(&n))
		return n
	}
	feedOverrides := func() string {
		var feed struct {
			Data []json.RawMessage `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
		if len(feed.Data) == 0 {
			return ""
		}
		return string(field(t, feed.Data[0], "overrides"))
	}
	is.Equal(count(`SELECT count(*) FROM stored_values`), 1) // stored once

	srv.App.Clock.Advance(2 * day)
	is.NoErr(sweeper.Sweep(context.Background()))            // past the notification's retention, and the grace
	is.Equal(count(`SELECT count(*) FROM notifications`), 0) // the notification is gone
	is.Equal(count(`SELECT count(*) FROM messages`), 1)      // its in-app message is kept
	is.Equal(count(`SELECT count(*) FROM stored_values`), 1) // and so are the overrides it names
	is.Equal(feedOverrides(), overrides)                     // which the feed shows as sent

	srv.App.Clock.Advance(40 * day)
	is.NoErr(sweeper.Sweep(context.Background()))
	is.Equal(count(`SELECT count(*) FROM messages`), 0)      // the message is gone
	is.Equal(count(`SELECT count(*) FROM stored_values`), 0) // and with it the last name of the overrides
}

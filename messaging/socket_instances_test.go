package messaging_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestSocket_EventsFromAnotherInstance: with two instances on one
// database, a subscriber's socket held by one hears what happens to its
// inbox through the other — a delivery, inbox actions, the server API's
// mark-as and deletes — in order, with the counts as they stand.
func TestSocket_EventsFromAnotherInstance(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("several instances share a PostgreSQL database only; on SQLite one process holds every socket")
	}
	is := is.New(t)
	instances := apptest.NewInstances(t, 2)
	a, b := instances[0], instances[1]
	a.Herald.Worker.Stop(context.Background()) // a holds the socket and runs no jobs
	apptest.CreateHello(t, b, "Hello {{ payload.n }}")
	c, _ := apptest.OpenInbox(t, a, "ada", "")
	sock := dialSocket(t, a, c.Token)
	is.True(strings.HasPrefix(sock.next(), `40{"sid":"`)) // connected to a
	onB := apptest.NewInbox(t, b, c.Token)

	// Delivered by b, which ran the trigger and its job.
	apptest.TriggerTo(t, b, "hello", "ada", `{"n":"1"}`)
	names, p := sock.events(3)
	is.Equal(names, []string{"notification_received", "unseen_count_changed", "unread_count_changed"}) // b's delivery heard on a
	msg := p[0]["message"].(map[string]any)
	is.Equal(msg["content"], "Hello 1") // the message, read by a
	is.Equal(p[1]["unseenCount"], 1.0)  // one unseen
	is.Equal(p[2]["unreadCount"], 1.0)  // one unread
	id := msg["_id"].(string)

	// Seen, then read, through b's inbox routes.
	status, _, _ := onB.Do("POST", "/v1/inbox/notifications/seen", `{"notificationIds":["`+id+`"]}`)
	is.Equal(status, 204) // seen through b
	name, p0 := sock.event()
	is.Equal(name, "unseen_count_changed") // heard on a
	is.Equal(p0["unseenCount"], 0.0)       // nothing unseen
	status, _, _ = onB.Do("PATCH", "/v1/inbox/notifications/"+id+"/read", "")
	is.Equal(status, 200) // read through b
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // heard on a
	is.Equal(p[1]["unreadCount"], 0.0)                                        // nothing unread

	// Unread through b's server API.
	res := b.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+id+`","markAs":"unread"}`)
	is.Equal(res.Status, 201) // marked through b
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // heard on a
	is.Equal(p[1]["unreadCount"], 1.0)                                        // unread again

	// Deleted through b's server API.
	res = b.Dev.Do(t, "DELETE", "/v1/messages/"+id, "")
	is.Equal(res.Status, 200) // deleted through b
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // heard on a
	is.Equal(p[1]["unreadCount"], 0.0)                                        // none left

	// Every connection to the database dropped: a's listener, back, may
	// have missed events, and sends its sockets their counts again.
	var database string
	is.NoErr(a.App.DB.QueryRowContext(context.Background(), `SELECT current_database()`).Scan(&database)) // the instances' database
	u, err := url.Parse(sqldbtest.DatabaseURL)
	is.NoErr(err) // TEST_DATABASE_URL
	u.Path = "/" + database
	admin, err := sql.Open("pgx", u.String())
	is.NoErr(err)
	defer admin.Close()
	_, err = admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	is.NoErr(err) // connections dropped
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // counts sent again
	is.Equal(p[1]["unreadCount"], 0.0)                                        // as they stand
}

// TestInboxDoor_HMACOnRevokesOnEveryInstance: tokens bought without a hash
// are refused by every instance once one turns HMAC on, the others within
// the moment they reuse a token generation for.
func TestInboxDoor_HMACOnRevokesOnEveryInstance(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("several instances share a PostgreSQL database only")
	}
	is := is.New(t)
	instances := apptest.NewInstances(t, 2)
	a, b := instances[0], instances[1]
	c, _ := apptest.OpenInbox(t, a, "ada", "")
	onB := apptest.NewInbox(t, b, c.Token)
	status, _, _ := onB.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 200) // good on b while HMAC is off

	setCredentials(t, a, a.App.Development, `{"hmac":true}`)
	status, _, _ = c.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 401) // refused at once by the instance that turned it on
	platformtest.Eventually(t, 2*time.Second, func() bool {
		status, _, _ := onB.Do("GET", "/v1/inbox/notifications?limit=10", "")
		return status == 401
	}, "b to refuse the token")
}

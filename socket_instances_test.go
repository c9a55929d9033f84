package main

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// wiredInstance is one Herald process of several on one PostgreSQL
// database, as run starts it: its own pools, listener and worker, served
// behind the real middleware. Without a worker (noWorker) its jobs wait for
// another instance's.
func wiredInstance(t *testing.T, url string, noWorker bool) *platformtest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := sqldb.Open(ctx, url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { db.Close() })
	logs := &platformtest.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("instance %s logs:\n%s", db.Instance(), logs)
		}
	})
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: platformtest.DevKey,
		ProductionKey: platformtest.ProdKey, Secret: []byte(platformtest.Secret)}, io.Discard)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	app := &platformtest.App{DB: db, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Clock: platformtest.NewClock(time.Now()), Secret: []byte(platformtest.Secret),
		Development: envs[0], Production: envs[1], Outbound: platformtest.Loopback}
	app.Inbox = platform.NewSubscriberAuth(db, app.Secret, app.Clock.Now)
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db)
	var stoppers []func(context.Context)
	d := deps{db: db, logger: app.Logger, secret: app.Secret, now: app.Clock.Now, environments: envs,
		stoppers: &stoppers, outbound: app.Outbound, inbox: app.Inbox}
	if err := start(ctx, mux, d); err != nil {
		t.Fatalf("start: %v", err)
	}
	stop := func() {
		stopCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		for _, stop := range stoppers {
			stop(stopCtx)
		}
	}
	t.Cleanup(func() { cancel(); stop() })
	if noWorker {
		stoppers[0](ctx) // the worker's Stop, which start registers first
	}
	hs := httptest.NewServer(platform.NewHandler(app.Logger, db, mux, platform.ServerConfig{Secret: app.Secret,
		Inbox: app.Inbox, Limits: platform.RateLimits{Write: -1}}))
	t.Cleanup(hs.Close)
	return &platformtest.Server{Server: hs, Mux: mux, App: app,
		Dev: platformtest.NewClient(hs.URL, platformtest.DevKey), Prod: platformtest.NewClient(hs.URL, platformtest.ProdKey)}
}

// TestSocket_EventsFromAnotherInstance: with two instances on one
// database, a subscriber's socket held by one hears what happens to its
// inbox through the other — a delivery, inbox actions, the server API's
// mark-as and deletes — in order, with the counts as they stand.
func TestSocket_EventsFromAnotherInstance(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("several instances share a PostgreSQL database only; on SQLite one process holds every socket")
	}
	is := is.New(t)
	url := sqldbtest.NewPostgresURL(t)
	a := wiredInstance(t, url, true) // holds the socket, runs no jobs
	b := wiredInstance(t, url, false)
	createHello(t, b, "Hello {{ payload.n }}")
	c, _ := openInbox(t, a, "ada", "")
	sock := dialSocket(t, a, c.token)
	is.True(strings.HasPrefix(sock.next(), `40{"sid":"`)) // connected to a
	onB := &inboxClient{t: t, srv: b, token: c.token}

	// Delivered by b, which ran the trigger and its job.
	triggerTo(t, b, "hello", "ada", `{"n":"1"}`)
	names, p := sock.events(3)
	is.Equal(names, []string{"notification_received", "unseen_count_changed", "unread_count_changed"}) // b's delivery heard on a
	msg := p[0]["message"].(map[string]any)
	is.Equal(msg["content"], "Hello 1") // the message, read by a
	is.Equal(p[1]["unseenCount"], 1.0)  // one unseen
	is.Equal(p[2]["unreadCount"], 1.0)  // one unread
	id := msg["_id"].(string)

	// Seen, then read, through b's inbox routes.
	status, _, _ := onB.do("POST", "/v1/inbox/notifications/seen", `{"notificationIds":["`+id+`"]}`)
	is.Equal(status, 204) // seen through b
	name, p0 := sock.event()
	is.Equal(name, "unseen_count_changed") // heard on a
	is.Equal(p0["unseenCount"], 0.0)       // nothing unseen
	status, _, _ = onB.do("PATCH", "/v1/inbox/notifications/"+id+"/read", "")
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
	admin, err := sql.Open("pgx", url)
	is.NoErr(err)
	defer admin.Close()
	_, err = admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	is.NoErr(err) // connections dropped
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // counts sent again
	is.Equal(p[1]["unreadCount"], 0.0)                                        // as they stand
}

package messaging_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

type onlineStatus struct {
	IsOnline     *bool   `json:"isOnline"`
	LastOnlineAt *string `json:"lastOnlineAt"`
}

// statusOf reads the subscriber's online status through srv.
func statusOf(t *testing.T, srv *apptest.Server, subscriberID string) onlineStatus {
	t.Helper()
	var s onlineStatus
	apptest.MustStatus(t, srv.Dev, "GET", "/v1/subscribers/"+subscriberID, "", 200).Decode(t, &s)
	return s
}

// waitStatus polls until the subscriber's isOnline is want through srv.
func waitStatus(t *testing.T, srv *apptest.Server, subscriberID string, want bool) onlineStatus {
	t.Helper()
	var s onlineStatus
	platformtest.Eventually(t, 10*time.Second, func() bool {
		s = statusOf(t, srv, subscriberID)
		return s.IsOnline != nil && *s.IsOnline == want
	}, "the subscriber's online status to follow its sockets")
	return s
}

// leave closes a socket as the client does when its page goes away.
func (c *socketClient) leave() {
	c.conn.Close(websocket.StatusNormalClosure, "")
}

func TestOnline_FollowsTheInboxSockets(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	before := statusOf(t, srv, "ada")
	is.True(before.IsOnline == nil && before.LastOnlineAt == nil) // never connected: unknown, as the reference answers

	one := dialSocket(t, srv, c.Token)
	is.True(strings.HasPrefix(one.next(), `40{"sid":"`)) // connected
	waitStatus(t, srv, "ada", true)
	two := dialSocket(t, srv, c.Token)
	two.next()
	one.leave()
	waitSockets(t, srv, 1)
	is.True(*statusOf(t, srv, "ada").IsOnline) // one of two tabs closed: still online
	two.send("41")
	s := waitStatus(t, srv, "ada", false)
	is.True(s.LastOnlineAt != nil) // offline with the last, stamped when it left
	three := dialSocket(t, srv, c.Token)
	three.next()
	s = waitStatus(t, srv, "ada", true)
	is.True(s.LastOnlineAt != nil) // back online; lastOnlineAt still says when it last left
}

// waitSockets polls until the process holds n live inbox sockets.
func waitSockets(t *testing.T, srv *apptest.Server, n float64) {
	t.Helper()
	platformtest.Eventually(t, 10*time.Second, func() bool {
		got, _ := platformtest.Sample(platformtest.Scrape(t, srv.URL+"/metrics"), "herald_inbox_sockets", nil)
		return got == n
	}, "the sockets to be counted")
}

func TestOnline_SetByTheAPI(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"no flag", "/v1/subscribers/ada/online-status", `{}`, 422},
		{"a flag of the wrong type", "/v1/subscribers/ada/online-status", `{"isOnline":"yes"}`, 422},
		{"not JSON", "/v1/subscribers/ada/online-status", `{`, 400},
		{"unknown subscriber", "/v1/subscribers/nobody/online-status", `{"isOnline":true}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(srv.Dev.Do(t, "PATCH", tc.path, tc.body).Status, tc.status) // refused
		})
	}
	is := is.New(t)
	is.True(statusOf(t, srv, "ada").IsOnline == nil) // nothing refused set it
	var s onlineStatus
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/subscribers/ada/online-status", `{"isOnline":true}`, 200).Decode(t, &s)
	is.True(*s.IsOnline && s.LastOnlineAt == nil) // online, answered as the subscriber
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/subscribers/ada/online-status", `{"isOnline":false}`, 200).Decode(t, &s)
	is.True(!*s.IsOnline && s.LastOnlineAt != nil) // offline, stamped
	is.True(!*statusOf(t, srv, "ada").IsOnline)    // and it reads back
}

// A process that stopped holding sockets leaves its subscribers offline at
// the next start.
func TestOnline_ResetAtStart(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	dialSocket(t, srv, c.Token).next()
	waitStatus(t, srv, "ada", true)
	// As a process killed with the socket open leaves it.
	is.NoErr(srv.Herald.Subscribers.SocketsOpened(context.Background(), srv.App.Development.ID, "gone"))
	_, err := srv.App.DB.ExecContext(context.Background(), `UPDATE subscriber_sockets SET instance_id = 'dead'`)
	is.NoErr(err)
	is.NoErr(srv.Herald.Subscribers.ResetPresence(context.Background()))
	s := waitStatus(t, srv, "ada", false)
	is.True(s.LastOnlineAt != nil) // stamped when it was found gone
}

// With two instances on one database, a subscriber with a socket on each
// stays online when one closes, and goes offline with the last.
func TestOnline_AcrossInstances(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("several instances share a PostgreSQL database only")
	}
	is := is.New(t)
	instances := apptest.NewInstances(t, 2)
	a, b := instances[0], instances[1]
	c, _ := apptest.OpenInbox(t, a, "ada", "")
	onA := dialSocket(t, a, c.Token)
	onA.next()
	onB := dialSocket(t, b, c.Token)
	onB.next()
	held := func(n int, what string) {
		t.Helper()
		platformtest.Eventually(t, 10*time.Second, func() bool {
			var got int
			a.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM subscriber_sockets`).Scan(&got)
			return got == n
		}, what)
	}
	held(2, "each instance to record its socket")
	waitStatus(t, b, "ada", true)
	onA.leave()
	// a's socket is gone; b's holds it online, as read through either.
	held(1, "a's socket to be forgotten")
	is.True(*statusOf(t, a, "ada").IsOnline) // still online through a
	is.True(*statusOf(t, b, "ada").IsOnline) // and through b
	onB.leave()
	s := waitStatus(t, a, "ada", false)
	is.True(s.LastOnlineAt != nil) // offline with the last socket anywhere
}

// A tab closed as another opens: whichever status write comes last, the
// subscriber with a socket open is online.
func TestOnline_CloseRacingAnOpen(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	old := dialSocket(t, srv, c.Token)
	old.next()
	for range 10 {
		old.leave()
		next := dialSocket(t, srv, c.Token)
		next.next()
		waitSockets(t, srv, 1)
		// The close's write and the open's may still be under way, one
		// after the other: once both are done, the open socket is recorded.
		platformtest.Eventually(t, 10*time.Second, func() bool {
			var held int
			is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM subscriber_sockets`).Scan(&held))
			return held == 1
		}, "the open socket to be recorded")
		waitStatus(t, srv, "ada", true)
		old = next
	}
}

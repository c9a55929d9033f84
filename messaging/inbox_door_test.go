package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// These tests hold the inbox's public door: what a page that knows only
// an environment's public identifier can make Herald do.

// openSession opens a session for subscriberID in env and returns the status,
// the body and the header.
func openSession(t *testing.T, srv *apptest.Server, env platform.Environment, subscriberID string) (int, []byte, map[string][]string) {
	t.Helper()
	status, body, header := apptest.NewInbox(t, srv, "").Do("POST", "/v1/inbox/session",
		`{"applicationIdentifier":"`+env.Identifier+`","subscriber":{"subscriberId":"`+subscriberID+`"}}`)
	return status, body, header
}

func TestInboxDoor_SessionsThatCreateAreLimited(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t) // the default limits
	dev := srv.App.Development
	for i := range platform.DefaultNewSessionRate {
		status, _, _ := openSession(t, srv, dev, fmt.Sprint("new-", i))
		is.Equal(status, 201) // within the minute's new subscribers
	}
	status, body, header := openSession(t, srv, dev, "one-too-many")
	is.Equal(status, 429)                          // the 61st new subscriber of the minute from one address
	is.Equal(header["Retry-After"], []string{"1"}) // the next in a second: 60 a minute
	var e struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
		Path       string `json:"path"`
		Timestamp  string `json:"timestamp"`
	}
	is.NoErr(json.Unmarshal(body, &e))                                             // the API's error body
	is.Equal(e.StatusCode, 429)                                                    // with its status
	is.Equal(e.Path, "/v1/inbox/session")                                          // and path
	is.True(e.Message != "" && e.Timestamp != "")                                  // message and time
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/one-too-many", "").Status, 404) // the refused session created nothing

	status, _, _ = openSession(t, srv, dev, "new-0")
	is.Equal(status, 201) // a subscriber that exists has a bucket of its own
}

func TestInboxDoor_SessionsOfExistingSubscribersAreLimited(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.Limits(platform.RateLimits{Write: -1, Sessions: 3}))
	dev := srv.App.Development
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	for range 3 {
		status, _, _ := openSession(t, srv, dev, "ada")
		is.Equal(status, 201) // within the minute's sessions
	}
	status, _, header := openSession(t, srv, dev, "ada")
	is.Equal(status, 429)                           // the fourth of the minute
	is.Equal(header["Retry-After"], []string{"20"}) // 3 a minute: one every 20 s

	status, _, _ = openSession(t, srv, dev, "grace")
	is.Equal(status, 201) // a new subscriber's session counts against the other limit
}

func TestInboxDoor_SessionLimitsOff(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.Limits(platform.RateLimits{Write: -1, Sessions: -1, NewSessions: -1}))
	for i := range 70 {
		status, _, _ := openSession(t, srv, srv.App.Development, fmt.Sprint("s-", i))
		is.Equal(status, 201) // never 429
	}
}

// inAppOf returns the _id of env's in-app integration.
func inAppOf(t *testing.T, srv *apptest.Server, env platform.Environment) string {
	t.Helper()
	var list []struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
		Channel       string `json:"channel"`
	}
	srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &list)
	for _, in := range list {
		if in.Channel == "in_app" && in.EnvironmentID == env.ID {
			return in.ID
		}
	}
	t.Fatal("no in-app integration")
	return ""
}

// setCredentials replaces the credentials of env's in-app integration.
func setCredentials(t *testing.T, srv *apptest.Server, env platform.Environment, creds string) {
	t.Helper()
	if res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppOf(t, srv, env), `{"credentials":`+creds+`}`); res.Status != 200 {
		t.Fatalf("set credentials: %d %s", res.Status, res.Body)
	}
}

func TestInboxDoor_WhoMayCreateSubscribers(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	dev, prod := srv.App.Development, srv.App.Production

	status, body, _ := openSession(t, srv, prod, "ada")
	is.Equal(status, 404)                                                        // Production creates no subscriber by default
	is.True(strings.Contains(string(body), "autoCreateSubscribers"))             // and says which setting would
	is.Equal(srv.Prod.Do(t, "GET", "/v1/subscribers/ada", "").Status, 404)       // nothing created
	apptest.MustCreate(t, srv.Prod, "/v1/subscribers", `{"subscriberId":"ada"}`) // the team's backend creates it
	status, _, _ = openSession(t, srv, prod, "ada")
	is.Equal(status, 201) // then its inbox opens

	status, _, _ = openSession(t, srv, dev, "ada")
	is.Equal(status, 201)                                                 // Development creates by default
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Status, 200) // created

	// The setting is the in-app integration's, read and changed through the integrations API.
	setCredentials(t, srv, dev, `{"autoCreateSubscribers":false}`)
	status, _, _ = openSession(t, srv, dev, "grace")
	is.Equal(status, 404) // turned off in Development
	setCredentials(t, srv, prod, `{"autoCreateSubscribers":true}`)
	status, _, _ = openSession(t, srv, prod, "grace")
	is.Equal(status, 201) // and on in Production
	var list []struct {
		ID          string `json:"_id"`
		Credentials struct {
			AutoCreateSubscribers *bool `json:"autoCreateSubscribers"`
		} `json:"credentials"`
	}
	srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &list)
	seen := 0
	for _, in := range list {
		if in.ID == inAppOf(t, srv, prod) {
			is.True(in.Credentials.AutoCreateSubscribers != nil && *in.Credentials.AutoCreateSubscribers) // listed as set
			seen++
		}
	}
	is.Equal(seen, 1) // the integration is listed
}

func TestInboxDoor_HMACOnRevokesEarlierTokens(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	before, _ := apptest.OpenInbox(t, srv, "ada", "") // bought without a hash
	status, _, _ := before.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 200) // good while HMAC is off
	prod := openProductionInbox(t, srv, "ada")

	setCredentials(t, srv, srv.App.Development, `{"hmac":true}`)
	status, _, _ = before.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 401) // refused once HMAC is on

	after, _ := apptest.OpenInbox(t, srv, "ada", `},"subscriberHash":"`+platform.SubscriberHash(platformtest.DevKey, "ada")+`","x":{"a":1`)
	status, _, _ = after.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 200) // a token bought with the hash works
	status, _, _ = prod.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 200) // and another environment's tokens are not touched

	// Saving HMAC on again, or turning it off, revokes nothing more.
	setCredentials(t, srv, srv.App.Development, `{"hmac":true,"autoCreateSubscribers":true}`)
	setCredentials(t, srv, srv.App.Development, `{}`)
	status, _, _ = after.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 200) // still good
}

// openProductionInbox opens a session of a Production subscriber, created
// first through the API.
func openProductionInbox(t *testing.T, srv *apptest.Server, subscriberID string) *apptest.Inbox {
	t.Helper()
	apptest.MustCreate(t, srv.Prod, "/v1/subscribers", `{"subscriberId":"`+subscriberID+`"}`)
	status, body, _ := openSession(t, srv, srv.App.Production, subscriberID)
	if status != 201 {
		t.Fatalf("session: %d %s", status, body)
	}
	var out struct {
		Data apptest.Session `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return apptest.NewInbox(t, srv, out.Data.Token)
}

func TestInboxDoor_HMACOnDisconnectsEarlierSockets(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	sock := dialSocket(t, srv, c.Token)
	is.True(strings.HasPrefix(sock.next(), `40{"sid":"`)) // connected while HMAC is off

	setCredentials(t, srv, srv.App.Development, `{"hmac":true}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)
	is.Equal(sock.next(), "41") // disconnected instead of hearing the notification
}

func TestInboxDoor_SocketsPerToken(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	var open []*socketClient
	for range messaging.DefaultSocketsPerToken {
		sock := dialSocket(t, srv, c.Token)
		is.True(strings.HasPrefix(sock.next(), `40{"sid":"`)) // connected, within the limit
		open = append(open, sock)
	}
	refused := dialSocket(t, srv, c.Token)
	answer := refused.next()
	is.True(strings.HasPrefix(answer, `44{"message":"Too many sockets`)) // a CONNECT_ERROR: the client's connect_error says why
	_, _, err := refused.conn.Read(context.Background())
	is.True(err != nil) // and the socket is closed

	srv.App.Clock.Advance(time.Second) // a session in the same second buys the same token
	other, _ := apptest.OpenInbox(t, srv, "ada", "")
	sock := dialSocket(t, srv, other.Token)
	is.True(strings.HasPrefix(sock.next(), `40{"sid":"`)) // another token has a limit of its own

	is.NoErr(open[0].conn.Close(websocket.StatusNormalClosure, "")) // one closes
	platformtest.Eventually(t, 5*time.Second, func() bool {
		sock := dialSocket(t, srv, c.Token)
		defer sock.conn.CloseNow()
		return strings.HasPrefix(sock.next(), `40{"sid":"`)
	}, "a socket of the token opens again once one has closed")
}

func TestInboxDoor_ProductionWithoutHMACIsWarnedOf(t *testing.T) {
	is := is.New(t)
	logs := &platformtest.SyncBuffer{}
	srv := apptest.NewServer(t, apptest.Logs(logs))
	is.True(strings.Contains(logs.String(), `"level":"WARN","msg":"the inbox of Production takes sessions without an HMAC`)) // said at start
	is.True(strings.Contains(logs.String(), srv.App.Production.ID))                                                          // naming the environment

	res := srv.Dev.Do(t, "GET", "/v1/environments", "")
	is.Equal(res.Status, 200)                                                                    // the list, in the contract's shape (Do checks it)
	is.Equal(len(res.Header.Values("Warning")), 1)                                               // one warning: Production's
	is.True(strings.HasPrefix(res.Header.Get("Warning"), `299 herald "the inbox of Production`)) // a miscellaneous persistent warning (299)

	setCredentials(t, srv, srv.App.Production, `{"hmac":true}`)
	res = srv.Dev.Do(t, "GET", "/v1/environments", "")
	is.Equal(res.Header.Values("Warning"), nil) // none once Production's inbox needs an HMAC
}

// Sessions opened at once, as a page with two inbox clients opens them,
// each spend their own address's allowance: the gate a session request
// carries is its own (the race detector catches a shared one).
func TestInboxDoor_SessionsAtOnce(t *testing.T) {
	srv := apptest.NewServer(t)
	dev := srv.App.Development
	statuses := make(chan int, 8)
	for i := range cap(statuses) {
		go func() {
			status, _, _ := apptest.NewInbox(t, srv, "").Do("POST", "/v1/inbox/session",
				`{"applicationIdentifier":"`+dev.Identifier+`","subscriber":{"subscriberId":"`+fmt.Sprint("at-once-", i%2)+`"}}`)
			statuses <- status
		}()
	}
	for range cap(statuses) {
		if status := <-statuses; status != 201 {
			t.Errorf("a session opened beside others: %d", status)
		}
	}
}

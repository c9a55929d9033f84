package messaging_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
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

package platform_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// newLimitedServer serves a POST and a GET route behind the real
// middleware with the given limits, keyed as platformtest's servers are.
func newLimitedServer(t *testing.T, limits platform.RateLimits) (dev, prod platformtest.Client) {
	t.Helper()
	srv := platformtest.NewServer(t, nil)
	mux := http.NewServeMux()
	ok := platform.Handle(func(w http.ResponseWriter, r *http.Request) error { return platform.JSON(w, 200, true) })
	mux.Handle("POST /v1/things", ok)
	mux.Handle("GET /v1/things", ok)
	hs := httptest.NewServer(platform.NewHandler(slog.New(slog.NewTextHandler(io.Discard, nil)), srv.App.DB, mux,
		platform.ServerConfig{Limits: limits}))
	t.Cleanup(hs.Close)
	return srv.Dev.On(hs), srv.Prod.On(hs)
}

func TestRateLimit_FailedAuthentication(t *testing.T) {
	is := is.New(t)
	// Ten failures at once, then one every 1000 s: the eleventh is past it.
	dev, _ := newLimitedServer(t, platform.RateLimits{AuthFailure: 0.001, AuthFailureBurst: 10})
	guess := dev.WithKey("guessed-key-0000000000000000000000")
	for range 10 {
		is.Equal(guess.Do(t, "GET", "/v1/things", "").Status, 401) // a failure within the burst: 401
	}
	res := guess.Do(t, "GET", "/v1/things", "")
	is.Equal(res.Status, 429) // the eleventh is limited
	secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
	is.NoErr(err)                      // Retry-After is whole seconds
	is.True(secs >= 1 && secs <= 1000) // until the next token
	var body errorBody
	res.Decode(t, &body)
	is.Equal(body.StatusCode, 429)                                       // the body (docs/api.md, "Errors")
	is.True(body.Message != "" && body.Timestamp != "")                  // with its message and time
	is.Equal(dev.Do(t, "GET", "/v1/things", "").Status, 429)             // a right key from that address waits too, or guessing would go on
	is.Equal(dev.WithKey("").Do(t, "GET", "/v1/things", "").Status, 429) // and so does no key
}

func TestRateLimit_WritesPerKey(t *testing.T) {
	is := is.New(t)
	dev, prod := newLimitedServer(t, platform.RateLimits{Write: 0.001, WriteBurst: 3})
	for range 3 {
		is.Equal(dev.Do(t, "POST", "/v1/things", `{}`).Status, 200) // within the burst
	}
	res := dev.Do(t, "POST", "/v1/things", `{}`)
	is.Equal(res.Status, 429)                                    // the fourth write is limited
	is.True(res.Header.Get("Retry-After") != "")                 // with when to try again
	is.Equal(dev.Do(t, "GET", "/v1/things", "").Status, 200)     // reads are not limited
	is.Equal(prod.Do(t, "POST", "/v1/things", `{}`).Status, 200) // another key has its own limit
}

func TestRateLimit_Off(t *testing.T) {
	is := is.New(t)
	dev, _ := newLimitedServer(t, platform.RateLimits{Write: -1, AuthFailure: -1})
	for range 100 {
		is.Equal(dev.WithKey("wrong-key-000000000000000000000000").Do(t, "GET", "/v1/things", "").Status, 401) // never 429
		is.Equal(dev.Do(t, "POST", "/v1/things", `{}`).Status, 200)                                            // never 429
	}
}

// The inbox's failed authentications share the address's bucket of
// failures: refused sessions (a wrong HMAC) and refused tokens are
// limited as wrong API keys are.
func TestRateLimit_FailedInboxAuthentication(t *testing.T) {
	srv := platformtest.NewServer(t, nil)
	mux := http.NewServeMux()
	mux.Handle("POST "+platform.InboxSessionPath, platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return platform.BadRequest("Please provide a valid HMAC hash")
	}))
	mux.Handle("GET /v1/inbox/things", platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return platform.JSON(w, 200, true)
	}))
	hs := httptest.NewServer(platform.NewHandler(slog.New(slog.NewTextHandler(io.Discard, nil)), srv.App.DB, mux,
		platform.ServerConfig{Inbox: srv.App.Inbox, Limits: platform.RateLimits{AuthFailure: 0.001, AuthFailureBurst: 4}}))
	t.Cleanup(hs.Close)
	send := func(method, path, auth string) *http.Response {
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	is := is.New(t)
	for range 2 {
		is.Equal(send("POST", platform.InboxSessionPath, "").StatusCode, 400) // a refused session, within the burst
	}
	for range 2 {
		is.Equal(send("GET", "/v1/inbox/things", "Bearer forged").StatusCode, 401) // a refused token, within the burst
	}
	res := send("GET", "/v1/inbox/things", "Bearer forged")
	is.Equal(res.StatusCode, 429)                                         // the fifth failure is limited
	is.True(res.Header.Get("Retry-After") != "")                          // and says when to try again
	is.Equal(send("POST", platform.InboxSessionPath, "").StatusCode, 429) // sessions from that address wait too
}

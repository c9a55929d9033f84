package integrations_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform/platformtest"
)

// checkTime sends a request whose check must fail and returns how long
// the answer took.
func checkTime(t *testing.T, do func() *platformtest.Response) time.Duration {
	t.Helper()
	start := time.Now()
	res := do()
	took := time.Since(start)
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("check answered %d %s, want 422", res.Status, res.Body)
	}
	return took
}

// TestIntegration_CheckTellsNoPorts: a closed port and an open one that
// does not speak SMTP fail the same way, at the same moment, so the check
// cannot scan ports.
func TestIntegration_CheckTellsNoPorts(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t)
	web := httptest.NewServer(http.NotFoundHandler()) // open, silent until asked
	t.Cleanup(web.Close)
	_, open, _ := net.SplitHostPort(strings.TrimPrefix(web.URL, "http://"))
	closed := closedPort(t)

	failure := func(port string) (string, time.Duration) {
		var body struct {
			Errors map[string]struct {
				Messages []string `json:"messages"`
			} `json:"errors"`
		}
		var res *platformtest.Response
		took := checkTime(t, func() *platformtest.Response {
			res = srv.Dev.Do(t, "POST", "/v1/integrations", smtpBody(port))
			return res
		})
		res.Decode(t, &body)
		msg := strings.Join(body.Errors["credentials.host"].Messages, "; ")
		return strings.ReplaceAll(msg, port, "PORT"), took
	}
	closedMsg, closedTook := failure(closed)
	openMsg, openTook := failure(open)
	is.Equal(closedMsg, openMsg)                           // the same words for both
	is.True(strings.Contains(closedMsg, "no SMTP server")) // saying what the user needs
	is.True(closedTook >= testCheckTimeout)                // the closed port answered no sooner
	is.True(openTook >= testCheckTimeout)                  // than the open one, which waits out the check
}

// countingServer is a local receiver that counts the requests it gets.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	t.Cleanup(hs.Close)
	return hs, &asked
}

// checkWebhook creates a chat-webhook integration posting to url with
// check: true.
func checkWebhook(t *testing.T, srv *platformtest.Server, url string) *platformtest.Response {
	t.Helper()
	return srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","check":true,
		"credentials":{"webhookUrl":"`+url+`/hook"}}`)
}

// newServerAllowing is newServer whose checks may reach what list allows.
func newServerAllowing(t *testing.T, list string) *platformtest.Server {
	t.Helper()
	guard, err := outbound.ParseAllow(list)
	if err != nil {
		t.Fatalf("allow list %q: %v", list, err)
	}
	srv, _ := newServerWith(t, guard)
	return srv
}

func TestIntegration_CheckObeysGuard(t *testing.T) {
	t.Run("ErrSMTPOnLoopback", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServerWith(t, nil) // the default guard
		res := srv.Dev.Do(t, "POST", "/v1/integrations", smtpBody(fakeSMTP(t)))
		is.Equal(res.Status, http.StatusUnprocessableEntity)                 // the SMTP server on loopback is not reached
		is.True(strings.Contains(string(res.Body), "private network"))       // says why
		is.True(strings.Contains(string(res.Body), "HERALD_OUTBOUND_ALLOW")) // and what to set
	})

	t.Run("ErrWebhookNamedLocalhost", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServerWith(t, nil)
		hook, asked := countingServer(t)
		res := checkWebhook(t, srv, strings.Replace(hook.URL, "127.0.0.1", "localhost", 1))
		is.Equal(res.Status, http.StatusUnprocessableEntity)           // a name that resolves to loopback is refused
		is.True(strings.Contains(string(res.Body), "private network")) // says why
		is.Equal(asked.Load(), int32(0))                               // the receiver saw nothing
	})

	t.Run("ErrRedirectToRefusedHost", func(t *testing.T) {
		is := is.New(t)
		srv := newServerAllowing(t, "localhost")
		inside, asked := countingServer(t)
		redirector := httptest.NewServer(http.RedirectHandler(inside.URL+"/metadata", http.StatusFound))
		t.Cleanup(redirector.Close)
		res := checkWebhook(t, srv, strings.Replace(redirector.URL, "127.0.0.1", "localhost", 1)) // allowed by name
		is.Equal(res.Status, http.StatusUnprocessableEntity)                                      // a redirect elsewhere fails the check
		is.Equal(asked.Load(), int32(0))                                                          // and is not followed
	})

	t.Run("OKAllowed", func(t *testing.T) {
		is := is.New(t)
		srv := newServerAllowing(t, "127.0.0.0/8")
		in := mustCreate(t, srv.Dev, smtpBody(fakeSMTP(t)))
		is.True(in.Active) // allowed: checked and saved
	})
}

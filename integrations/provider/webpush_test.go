package provider

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

func webPushSubscription(t *testing.T, endpoint string) string {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(make([]byte, 16))}})
	return string(b)
}

// A push service that fails is retried, after its Retry-After; one that
// says a subscription is gone, or a token that is no subscription, names
// it dead; a push that reaches some subscriptions and not others is partial.
func TestSend_WebPush(t *testing.T) {
	is := is.New(t)
	var status atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			w.WriteHeader(http.StatusGone)
		default:
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(int(status.Load()))
		}
	}))
	defer svc.Close()
	var c Credentials
	c.Set("subject", "mailto:ops@example.com")
	is.NoErr(PrepareCredentials("web-push", &c, nil))
	is.Equal(len(Problems("web-push", c)), 0) // the generated pair is whole and matches
	s, err := New("web-push", c, Deps{Client: NewHTTPClient(platformtest.Loopback, 5*time.Second)})
	is.NoErr(err)

	live, gone := webPushSubscription(t, svc.URL+"/live"), webPushSubscription(t, svc.URL+"/gone")
	status.Store(http.StatusServiceUnavailable)
	_, err = s.Send(t.Context(), Message{Title: "T", Content: "Hi", DeviceTokens: []string{live}})
	var pe *Error
	is.True(errors.As(err, &pe))
	is.True(pe.Retryable)                   // a service that is down is tried again
	is.Equal(pe.RetryAfter, 30*time.Second) // when it says
	status.Store(http.StatusCreated)
	res, err := s.Send(t.Context(), Message{Title: "T", Content: "Hi", DeviceTokens: []string{live, gone, "not a subscription"}})
	is.NoErr(err)                                                  // the live one got it
	is.Equal(res.DeadTokens, []string{gone, "not a subscription"}) // the others are dead
	status.Store(http.StatusBadRequest)
	_, err = s.Send(t.Context(), Message{Title: "T", Content: "Hi", DeviceTokens: []string{live, webPushSubscription(t, svc.URL+"/other")}})
	is.True(errors.As(err, &pe) && !pe.Retryable) // refused everywhere: not retried

	// A changed integration keeps its pair; a new one gets its own.
	var changed Credentials
	changed.Set("subject", "https://example.com/contact")
	is.NoErr(PrepareCredentials("web-push", &changed, &c))
	is.Equal(val(changed.PublicKey), val(c.PublicKey))
	var other Credentials
	is.NoErr(PrepareCredentials("web-push", &other, nil))
	is.True(val(other.PublicKey) != val(c.PublicKey))
}

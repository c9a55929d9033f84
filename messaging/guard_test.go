package messaging_test

import (
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herald-notify/herald/messaging"
	"github.com/matryer/is"
)

// TestDeliver_SMTPGuard: the SMTP provider dials through the outbound guard,
// implicit TLS included.
func TestDeliver_SMTPGuard(t *testing.T) {
	t.Run("ErrLoopbackRefused", func(t *testing.T) {
		is := is.New(t)
		box, host, port := startSMTP(t)
		h := newHarness(t)
		h.engine = messaging.NewDeliverer(h.store, nil) // the default guard
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": host, "port": strconv.Itoa(port), "from": "noreply@acme.test"})
		ada := h.src.addSubscriber(dev, "ada", nil)
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
		is.Equal(out.Status, "error")                                               // not delivered
		is.True(!out.Retryable)                                                     // refusing again would not change
		is.True(strings.Contains(out.Details[1].Detail, "is on a private network")) // says why
		is.True(strings.Contains(out.Details[1].Detail, "HERALD_OUTBOUND_ALLOW"))   // and what to set
		box.mu.Lock()
		defer box.mu.Unlock()
		is.Equal(len(box.mails), 0) // the server saw nothing
	})

	t.Run("OKImplicitTLS", func(t *testing.T) {
		is := is.New(t)
		// httptest's certificate, for a TLS listener of our own.
		ts := httptest.NewUnstartedServer(nil)
		ts.StartTLS()
		certs := ts.TLS.Certificates
		ts.Close()
		box := &mailbox{}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: certs})
		is.NoErr(err) // a TLS port
		serveSMTP(t, box, ln)

		h := newHarness(t)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": "127.0.0.1",
			"port": strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), "from": "noreply@acme.test", "secure": true,
			"tlsOptions": map[string]any{"rejectUnauthorized": false}})
		ada := h.src.addSubscriber(dev, "ada", nil)
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
		is.Equal(out.Status, "sent") // delivered over TLS from the first byte
		box.mu.Lock()
		defer box.mu.Unlock()
		is.Equal(len(box.mails), 1) // one mail
	})
}

// TestDeliver_RawReplyCapped: a provider's reply is recorded up to 4 KB,
// sent or failed.
func TestDeliver_RawReplyCapped(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		code         int
	}{
		{"OKSent", "sent", 200},
		{"ErrFailed", "error", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t)
			srv := newHook(t)
			srv.status, srv.reply = tc.code, `"`+strings.Repeat("é", 20<<10)+`"`
			dev := h.srv.App.Development
			h.src.addIntegration(dev, "chat", "chat-webhook", map[string]any{})
			ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{map[string]any{"providerId": "chat-webhook",
				"credentials": map[string]any{"webhookUrl": srv.URL + "/chat"}}}})
			out := h.deliver(t, job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "hi"}})
			is.Equal(out.Status, tc.status) // the send's outcome
			last := out.Details[len(out.Details)-1]
			is.True(last.Raw != nil)                                  // the reply is recorded
			is.True(len(*last.Raw) <= 4<<10 && len(*last.Raw) > 4000) // up to 4 KB
			is.True(utf8.ValidString(*last.Raw))                      // cut between characters
		})
	}
}

package integrations_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/matryer/is"
)

// closedPort returns a local port nothing listens on: one that was just
// listened on and closed.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	return port
}

// fakeSMTP listens on a local port and greets every connection with 220, as
// an SMTP server does, until the test ends.
func fakeSMTP(t *testing.T) string {
	t.Helper()
	return fakeServer(t, "220 fake.test ESMTP ready\r\n")
}

// fakeServer answers every connection with greeting, then closes it after
// one line from the client.
func fakeServer(t *testing.T, greeting string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte(greeting))
			bufio.NewReader(conn).ReadString('\n') // QUIT
			conn.Write([]byte("221 bye\r\n"))
			conn.Close()
		}
	}()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func smtpBody(port string) string {
	return `{"providerId":"nodemailer","channel":"email","active":true,"check":true,
		"credentials":{"host":"127.0.0.1","port":"` + port + `","from":"a@example.com"}}`
}

func TestIntegration_Check(t *testing.T) {
	srv, _ := newServer(t)

	t.Run("OKSMTP", func(t *testing.T) {
		is := is.New(t)
		in := mustCreate(t, srv.Dev, smtpBody(fakeSMTP(t)))
		is.True(in.Active) // the SMTP server greeted: saved
	})

	t.Run("ErrSMTPClosedPort", func(t *testing.T) {
		is := is.New(t)
		before := len(list(t, srv.Dev, "/v1/integrations"))
		res := srv.Dev.Do(t, "POST", "/v1/integrations", smtpBody(closedPort(t)))
		is.Equal(res.Status, http.StatusUnprocessableEntity) // the check failed
		var body struct {
			Errors map[string]any `json:"errors"`
		}
		res.Decode(t, &body)
		_, ok := body.Errors["credentials.host"]
		is.True(ok)                                                 // the failure names the credential
		is.Equal(len(list(t, srv.Dev, "/v1/integrations")), before) // nothing was saved
	})

	t.Run("ErrSMTPRefusing", func(t *testing.T) {
		is := is.New(t)
		port := fakeServer(t, "554 no service here\r\n")
		res := srv.Dev.Do(t, "POST", "/v1/integrations", smtpBody(port))
		is.Equal(res.Status, http.StatusUnprocessableEntity) // a server that does not greet with 220 fails
	})

	t.Run("ErrUpdateNotSaved", func(t *testing.T) {
		is := is.New(t)
		in := mustCreate(t, srv.Dev, smtpBody(fakeSMTP(t)))
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"check":true,
			"credentials":{"host":"127.0.0.1","port":"`+closedPort(t)+`","from":"new@example.com"}}`)
		is.Equal(res.Status, http.StatusUnprocessableEntity) // the check failed
		got, _ := byID(list(t, srv.Dev, "/v1/integrations"), in.ID)
		is.Equal(got.Credentials["from"], "a@example.com") // the update was not saved
	})

	t.Run("OKWebhook", func(t *testing.T) {
		is := is.New(t)
		var method string
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			method = r.Method
			w.WriteHeader(http.StatusMethodNotAllowed) // webhooks often accept POST only
		}))
		defer hook.Close()
		in := mustCreate(t, srv.Dev, `{"providerId":"email-webhook","channel":"email","active":true,"check":true,
			"credentials":{"webhookUrl":"`+hook.URL+`/hook"}}`)
		is.True(in.Active)                // the webhook answered: saved
		is.Equal(method, http.MethodHead) // the check asked with HEAD
	})

	for _, tc := range []struct {
		name, provider, channel, field string
		status                         int
	}{
		{"ErrWebhookServerError", "push-webhook", "push", "webhookUrl", http.StatusInternalServerError},
		{"ErrGenericSMSServerError", "generic-sms", "sms", "baseUrl", http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
			}))
			defer hook.Close()
			res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"`+tc.provider+`","channel":"`+tc.channel+`",
				"check":true,"credentials":{"`+tc.field+`":"`+hook.URL+`","from":"+1"}}`)
			is.Equal(res.Status, http.StatusUnprocessableEntity) // a server error fails the check
			var body struct {
				Errors map[string]any `json:"errors"`
			}
			res.Decode(t, &body)
			_, ok := body.Errors["credentials."+tc.field]
			is.True(ok) // the failure names the URL's field
		})
	}

	t.Run("ErrWebhookClosedPort", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","check":true,
			"credentials":{"webhookUrl":"http://127.0.0.1:`+closedPort(t)+`/hook"}}`)
		is.Equal(res.Status, http.StatusUnprocessableEntity) // nothing listens there
	})

	t.Run("OKSlackWithoutWebhook", func(t *testing.T) {
		is := is.New(t)
		in := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","active":true,"check":true}`)
		is.True(in.Active) // subscribers carry slack's webhook: nothing to try
	})
}

package messaging_test

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"
)

// mailbox is an SMTP server that keeps what it receives.
type mailbox struct {
	mu     sync.Mutex
	mails  []received
	reject bool // answer 554 to DATA
}

type received struct {
	from string
	to   []string
	data []byte
}

func (b *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{box: b}, nil }

type session struct {
	box  *mailbox
	from string
	to   []string
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error   { s.to = append(s.to, to); return nil }
func (s *session) Reset()                                      { s.from, s.to = "", nil }
func (s *session) Logout() error                               { return nil }
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	defer s.box.mu.Unlock()
	if s.box.reject {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "rejected by policy"}
	}
	s.box.mails = append(s.box.mails, received{from: s.from, to: s.to, data: b})
	return nil
}

// authSession is an SMTP conversation with a mailbox that asks for PLAIN
// authentication and records who logged in.
type authSession struct {
	session
	user *string
}

func (s *authSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *authSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "u" || pass != "p" {
			return errors.New("bad credentials")
		}
		s.box.mu.Lock()
		defer s.box.mu.Unlock()
		*s.user = user
		return nil
	}), nil
}

// authBox is a mailbox whose sessions authenticate.
type authBox struct {
	*mailbox
	user string
}

func (b *authBox) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &authSession{session: session{box: b.mailbox}, user: &b.user}, nil
}

// An integration that keeps its connection plain (ignoreTls) still logs in
// with user and password, as nodemailer does; discovery alone refuses
// PLAIN and LOGIN without TLS.
func TestDeliver_SMTPAuthWithoutTLS(t *testing.T) {
	is := is.New(t)
	box := &authBox{mailbox: &mailbox{}}
	srv := smtp.NewServer(box)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // a free port
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	h := newHarness(t)
	dev := h.srv.App.Development
	h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": "127.0.0.1",
		"port": strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), "from": "noreply@acme.test", "ignoreTls": true, "user": "u", "password": "p"})
	ada := h.src.addSubscriber(dev, "ada", nil)
	out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
	is.Equal(out.Status, "sent") // delivered
	box.mu.Lock()
	defer box.mu.Unlock()
	is.Equal(box.user, "u")     // after logging in
	is.Equal(len(box.mails), 1) // one mail
}

// startSMTP serves a mailbox on a free local port, without TLS.
func startSMTP(t *testing.T) (*mailbox, string, int) {
	t.Helper()
	box := &mailbox{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	serveSMTP(t, box, ln)
	return box, "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
}

// serveSMTP serves backend on ln until the test ends.
func serveSMTP(t *testing.T, backend smtp.Backend, ln net.Listener) {
	t.Helper()
	srv := smtp.NewServer(backend)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// htmlPart returns the text/html part of a message.
func htmlPart(t *testing.T, msg *mail.Message) string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			t.Fatalf("no text/html part: %v", err)
		}
		if strings.HasPrefix(part.Header.Get("Content-Type"), "text/html") {
			b, _ := io.ReadAll(part)
			return string(b)
		}
	}
}

func TestDeliver_SMTP(t *testing.T) {
	box, host, port := startSMTP(t)
	for _, tc := range []struct {
		name     string
		creds    map[string]any
		controls map[string]any
		check    func(is *is.I, html string)
	}{
		{
			name:  "OK html body with layout",
			creds: map[string]any{"host": host, "port": strconv.Itoa(port), "from": "noreply@acme.test", "senderName": "Acme Inc"},
			controls: map[string]any{"subject": "Welcome {{ subscriber.firstName }}",
				"body": `<p>Hello <b>{{ payload.name | upcase }}</b></p>`},
			check: func(is *is.I, html string) {
				is.True(strings.Contains(html, "<p>Hello <b>BEA</b></p>")) // body rendered
				is.True(strings.Contains(html, "<!DOCTYPE html>"))         // wrapped in the layout
			},
		},
		{
			name:  "OK block editor without layout",
			creds: map[string]any{"host": host, "port": strconv.Itoa(port), "from": "noreply@acme.test", "senderName": "Acme Inc", "ignoreTls": true},
			controls: map[string]any{"subject": "Welcome {{ subscriber.firstName }}", "editorType": "block", "layoutId": nil,
				"body": `{"type":"doc","content":[{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"Hi "},{"type":"variable","attrs":{"id":"payload.name"}}]},` +
					`{"type":"button","attrs":{"text":"Open","url":"https://acme.test/{{ payload.name }}"}}]}`},
			check: func(is *is.I, html string) {
				is.True(strings.HasPrefix(html, `<h2 style="margin:0 0 12px 0;">Hi Bea</h2>`)) // heading and variable
				is.True(strings.Contains(html, `href="https://acme.test/Bea"`))                // button URL rendered
				is.True(!strings.Contains(html, "<!DOCTYPE html>"))                            // layoutId null: no layout
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t)
			dev := h.srv.App.Development
			h.src.addIntegration(dev, "email", "nodemailer", tc.creds)
			ada := h.src.addSubscriber(dev, "ada", nil)
			box.mu.Lock()
			box.mails = nil
			box.mu.Unlock()
			out := h.deliver(t, job{subscriber: ada, channel: "email", controls: tc.controls, payload: map[string]any{"name": "Bea"}})
			is.Equal(out.Status, "sent")           // delivered
			is.Equal(out.ProviderID, "nodemailer") // through SMTP
			box.mu.Lock()
			mails := box.mails
			box.mu.Unlock()
			is.Equal(len(mails), 1)                            // one mail
			is.Equal(mails[0].from, "noreply@acme.test")       // envelope sender
			is.Equal(mails[0].to, []string{"ada@example.com"}) // envelope recipient
			msg, err := mail.ReadMessage(strings.NewReader(string(mails[0].data)))
			is.NoErr(err) // a parseable mail
			from, err := mail.ParseAddress(msg.Header.Get("From"))
			is.NoErr(err)                                       // From parses
			is.Equal(from.Name, "Acme Inc")                     // sender name
			is.Equal(from.Address, "noreply@acme.test")         // sender address
			is.Equal(msg.Header.Get("To"), "<ada@example.com>") // To header
			is.Equal(msg.Header.Get("Subject"), "Welcome Ada")  // subject rendered
			html := htmlPart(t, msg)
			tc.check(is, html)

			var p page
			h.srv.Dev.Do(t, "GET", "/v1/messages?channel=email", "").Decode(t, &p)
			is.Equal(p.TotalCount, 1) // stored
			var content string
			is.NoErr(json.Unmarshal(p.Data[0].Content, &content)) // content is the HTML string
			is.Equal(content, html)                               // exactly as sent
		})
	}
	t.Run("OK the trigger's overrides change sender, reply address and copies", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": host, "port": strconv.Itoa(port), "from": "noreply@acme.test", "senderName": "Acme"})
		ada := h.src.addSubscriber(dev, "ada", nil)
		box.mu.Lock()
		box.mails = nil
		box.mu.Unlock()
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"},
			overrides: map[string]any{
				"email":     map[string]any{"from": "sales@acme.test", "senderName": "Sales", "cc": "boss@acme.test", "bcc": 5},
				"providers": map[string]any{"nodemailer": map[string]any{"replyTo": "help@acme.test"}},
				"steps":     map[string]any{"step-1": map[string]any{"providers": map[string]any{"nodemailer": map[string]any{"bcc": []any{"audit@acme.test"}}}}},
			}})
		is.Equal(out.Status, "sent") // delivered
		box.mu.Lock()
		mails := box.mails
		box.mu.Unlock()
		is.Equal(len(mails), 1)                                                                 // one mail
		is.Equal(mails[0].from, "sales@acme.test")                                              // envelope sender overridden
		is.Equal(mails[0].to, []string{"ada@example.com", "boss@acme.test", "audit@acme.test"}) // copies delivered
		msg, err := mail.ReadMessage(strings.NewReader(string(mails[0].data)))
		is.NoErr(err)
		is.Equal(msg.Header.Get("From"), `"Sales" <sales@acme.test>`) // sender overridden
		is.Equal(msg.Header.Get("Cc"), "<boss@acme.test>")            // overrides.email
		is.Equal(msg.Header.Get("Reply-To"), "<help@acme.test>")      // overrides.providers.<id>
		is.Equal(msg.Header.Get("Bcc"), "")                           // a blind copy stays blind
	})
	t.Run("OK permanent SMTP rejection", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": host, "port": strconv.Itoa(port), "from": "noreply@acme.test"})
		ada := h.src.addSubscriber(dev, "ada", nil)
		box.mu.Lock()
		box.reject = true
		box.mu.Unlock()
		t.Cleanup(func() { box.mu.Lock(); box.reject = false; box.mu.Unlock() })
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
		is.Equal(out.Status, "error")                                          // refused
		is.True(!out.Retryable)                                                // a 5xx will not pass later
		is.True(strings.Contains(out.Details[1].Detail, "rejected by policy")) // says why
	})
	t.Run("OK unreachable server is retryable", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		dev := h.srv.App.Development
		h.src.addIntegration(dev, "email", "nodemailer", map[string]any{"host": "127.0.0.1", "port": "1", "from": "noreply@acme.test"})
		ada := h.src.addSubscriber(dev, "ada", nil)
		out := h.deliver(t, job{subscriber: ada, channel: "email", controls: map[string]any{"subject": "s", "body": "b"}})
		is.Equal(out.Status, "error") // not delivered
		is.True(out.Retryable)        // the server may come back
	})
}

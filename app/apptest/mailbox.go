package apptest

import (
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/herald-notify/herald/platform/platformtest"
)

// Mailbox is an SMTP server on a loopback port that keeps every mail it
// receives, for tests that follow an email to its recipient.
type Mailbox struct {
	Host string
	Port int

	mu    sync.Mutex
	mails [][]byte
}

// NewMailbox starts a Mailbox, closed when the test ends.
func NewMailbox(t testing.TB) *Mailbox {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	b := &Mailbox{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}
	srv := smtp.NewServer(b)
	srv.Domain = "localhost"
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

// NewSession serves one SMTP conversation.
func (b *Mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailboxSession{box: b}, nil }

type mailboxSession struct{ box *Mailbox }

func (s *mailboxSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailboxSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailboxSession) Reset()                               {}
func (s *mailboxSession) Logout() error                        { return nil }
func (s *mailboxSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	defer s.box.mu.Unlock()
	s.box.mails = append(s.box.mails, data)
	return nil
}

// UseFor creates the environment's email integration, nodemailer sending
// to the mailbox.
func (b *Mailbox) UseFor(t testing.TB, c platformtest.Client) {
	t.Helper()
	MustCreate(t, c, "/v1/integrations", `{"providerId":"nodemailer","channel":"email","active":true,
		"credentials":{"host":"`+b.Host+`","port":"`+strconv.Itoa(b.Port)+`","from":"noreply@acme.test","ignoreTls":true}}`)
}

// Wait waits for the n-th mail (from 1) to arrive and returns it as the
// server received it.
func (b *Mailbox) Wait(t testing.TB, n int) []byte {
	t.Helper()
	var data []byte
	platformtest.Eventually(t, 20*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.mails) >= n {
			data = b.mails[n-1]
		}
		return data != nil
	}, "the mail to arrive")
	return data
}

// WaitHTML waits for the n-th mail (from 1) to arrive and returns its HTML
// part.
func (b *Mailbox) WaitHTML(t testing.TB, n int) string {
	t.Helper()
	data := b.Wait(t, n)
	msg, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("mail: %v", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text/html part: %v", err)
		}
		if strings.HasPrefix(part.Header.Get("Content-Type"), "text/html") {
			body, _ := io.ReadAll(part)
			return string(body)
		}
	}
}

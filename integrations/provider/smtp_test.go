package provider

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"
)

// office is an SMTP submission server that, like Office 365's, offers
// AUTH only after STARTTLS, and keeps who logged in and who got mail.
type office struct {
	mu          sync.Mutex
	login, rcpt string
	tls         bool
}

func (o *office) NewSession(c *smtp.Conn) (smtp.Session, error) { return &officeSession{o, c}, nil }

type officeSession struct {
	o *office
	c *smtp.Conn
}

func (s *officeSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *officeSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		_, secure := s.c.TLSConnectionState()
		s.o.mu.Lock()
		defer s.o.mu.Unlock()
		s.o.login, s.o.tls = user+":"+pass, secure
		return nil
	}), nil
}

func (s *officeSession) Mail(string, *smtp.MailOptions) error { return nil }

func (s *officeSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	s.o.rcpt = to
	return nil
}

func (s *officeSession) Data(r io.Reader) error { _, err := io.ReadAll(r); return err }
func (*officeSession) Reset()                   {}
func (*officeSession) Logout() error            { return nil }

// TestSend_Outlook365: outlook365 submits to smtp.office365.com:587 with
// STARTTLS and logs in as the from address with the password
// (docs/providers.md, "Email"). The dial function stands in for the network,
// as the outbound guard will.
func TestSend_Outlook365(t *testing.T) {
	is := is.New(t)
	cert := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate
	defer cert.Close()
	o := &office{}
	srv := smtp.NewServer(o)
	srv.Domain = "smtp.office365.com"
	srv.TLSConfig = &tls.Config{Certificates: cert.TLS.Certificates}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // a free port
	go srv.Serve(ln)
	defer srv.Close()

	var dialed string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = addr
		return (&net.Dialer{}).DialContext(ctx, network, ln.Addr().String())
	}
	var c Credentials
	c.Set("from", "ada@acme.test")
	c.Set("password", "pw")
	c.TLSOptions = map[string]any{"rejectUnauthorized": false} // the test certificate is not Microsoft's
	s, err := New("outlook365", c, Deps{Dial: dial})
	is.NoErr(err) // built
	res, err := s.Send(t.Context(), Message{ID: "m1", To: "bea@example.com", Subject: "Hi", HTML: "<p>Hi</p>", Text: "Hi"})
	is.NoErr(err)                              // sent
	is.True(res.ID != "")                      // with its Message-ID
	is.Equal(dialed, "smtp.office365.com:587") // Office 365's submission port
	is.True(o.tls)                             // over STARTTLS
	is.Equal(o.login, "ada@acme.test:pw")      // as the sender, with the password
	is.Equal(o.rcpt, "bea@example.com")        // to the subscriber
}

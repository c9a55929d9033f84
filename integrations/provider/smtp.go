package provider

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/textproto"
	"slices"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/herald-notify/herald/outbound"
)

// smtpProviders send through an SMTP server with go-mail, which handles
// STARTTLS, implicit TLS, authentication discovery and MIME.
var smtpProviders = map[string]spec{
	"nodemailer": {channel: "email", files: true, required: []string{"host", "port", "from"}, build: newSMTP, check: checkSMTP, checkField: "host"},
	// outlook365 is Exchange Online's SMTP AUTH submission: STARTTLS on
	// 587, logging in as the sender (docs/providers.md, "Email").
	"outlook365": {channel: "email", files: true, required: []string{"from", "password"}, build: func(c Credentials, d Deps) (Sender, error) {
		host, port, yes := "smtp.office365.com", "587", true
		c.Host, c.Port, c.RequireTLS, c.Secure, c.IgnoreTLS = &host, &port, &yes, nil, nil
		if val(c.User) == "" {
			c.User = c.From
		}
		return newSMTP(c, d)
	}},
	// emailjs was the emailjs npm SMTP library: host, port, secure, user
	// and password, like nodemailer.
	"emailjs": {channel: "email", files: true, required: []string{"host", "from"}, build: newSMTP},
}

// smtpSender sends one email over SMTP.
type smtpSender struct {
	creds Credentials
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newSMTP(c Credentials, d Deps) (Sender, error) {
	if val(c.Host) == "" {
		return nil, Permanent("SMTP needs a host")
	}
	if val(c.From) == "" {
		return nil, Permanent("SMTP needs a from address")
	}
	return &smtpSender{creds: c, dial: d.dial()}, nil
}

// dialTLS connects through dial. go-mail wraps only its own dialer in TLS,
// so with a dial function of ours (the outbound guard's) an implicit-TLS
// connection (secure) does its handshake here.
func dialTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), secure bool, config *tls.Config) mail.DialContextFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil || !secure {
			return conn, err
		}
		tc := tls.Client(conn, config)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		return tc, nil
	}
}

// Send delivers one email. TLS follows nodemailer's settings: secure is TLS
// from the first byte (port 465 by default); otherwise requireTls insists on
// STARTTLS, ignoreTls never uses it, and by default STARTTLS is used when the
// server offers it.
func (p *smtpSender) Send(ctx context.Context, m Message) (Result, error) {
	c := p.creds
	port := 587
	if on(c.Secure) {
		port = 465
	}
	if v := val(c.Port); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return Result{}, Permanent("SMTP port %q is not a port number", v)
		}
		port = n
	}
	host := val(c.Host)
	tlsConfig := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if reject, ok := c.TLSOptions["rejectUnauthorized"].(bool); ok && !reject {
		tlsConfig.InsecureSkipVerify = true // the integration asked for it, as nodemailer allows
	}
	opts := []mail.Option{mail.WithPort(port), mail.WithTimeout(20 * time.Second), mail.WithTLSConfig(tlsConfig),
		mail.WithDialContextFunc(dialTLS(p.dial, on(c.Secure), tlsConfig))}
	switch {
	case on(c.Secure):
		opts = append(opts, mail.WithSSL())
	case on(c.IgnoreTLS):
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	case on(c.RequireTLS):
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if user := val(c.User); user != "" {
		auth := mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover)
		if on(c.IgnoreTLS) {
			// Discovery refuses PLAIN and LOGIN without TLS; a connection
			// the integration asked to keep plain may use them, as
			// nodemailer does (a local relay, a test server).
			auth = mail.WithOpportunisticSMTPAuth(mail.SMTPAuthSCRAMSHA256, mail.SMTPAuthSCRAMSHA1,
				mail.SMTPAuthCramMD5, mail.SMTPAuthPlainNoEnc, mail.SMTPAuthLoginNoEnc)
		}
		opts = append(opts, auth, mail.WithUsername(user), mail.WithPassword(val(c.Password)))
	}
	client, err := mail.NewClient(host, opts...)
	if err != nil {
		return Result{}, Permanent("SMTP settings: %v", err)
	}

	msg := mail.NewMsg()
	from, senderName := cmp.Or(m.From, val(c.From)), cmp.Or(m.SenderName, val(c.SenderName))
	if senderName != "" {
		err = msg.FromFormat(senderName, from)
	} else {
		err = msg.From(from)
	}
	if err != nil {
		return Result{}, Permanent("from address %q: %v", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return Result{}, Permanent("recipient %q: %v", m.To, err)
	}
	if err := addressed(msg, m); err != nil {
		return Result{}, err
	}
	msg.Subject(m.Subject)
	msg.SetMessageID()
	msg.SetDate()
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	attachFiles(msg, m.Attachments)

	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return Result{}, smtpError(err)
	}
	id := msg.GetMessageID()
	raw, _ := json.Marshal(map[string]any{"messageId": id, "accepted": slices.Concat([]string{m.To}, m.Cc, m.Bcc)})
	return Result{ID: id, Raw: string(raw)}, nil
}

// attachFiles adds an email's files: an inline one as a related part under
// its Content-ID, which the HTML refers to as cid:…, the others as
// attachments.
func attachFiles(msg *mail.Msg, files []Attachment) {
	for _, a := range files {
		opts := []mail.FileOption{mail.WithFileContentType(mail.ContentType(a.MIME)), mail.WithFileEncoding(mail.EncodingB64)}
		if a.CID != "" {
			opts = append(opts, mail.WithFileContentID("<"+a.CID+">"))
		}
		if a.Inline() {
			msg.EmbedReadSeeker(a.Name, bytes.NewReader(a.Content), opts...)
		} else {
			msg.AttachReadSeeker(a.Name, bytes.NewReader(a.Content), opts...)
		}
	}
}

// addressed adds the copies and the reply address a trigger's overrides
// ask for.
func addressed(msg *mail.Msg, m Message) error {
	if len(m.Cc) > 0 {
		if err := msg.Cc(m.Cc...); err != nil {
			return Permanent("cc %q: %v", m.Cc, err)
		}
	}
	if len(m.Bcc) > 0 {
		if err := msg.Bcc(m.Bcc...); err != nil {
			return Permanent("bcc %q: %v", m.Bcc, err)
		}
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return Permanent("replyTo %q: %v", m.ReplyTo, err)
		}
	}
	return nil
}

// smtpError classifies an SMTP failure: a refused connection, a timeout or a
// 4xx reply may pass later; a 5xx reply will not.
func smtpError(err error) error {
	var refused *outbound.RefusedError
	if errors.As(err, &refused) {
		return Permanent("SMTP: %s", refused.Error())
	}
	var se *mail.SendError
	if errors.As(err, &se) {
		return &Error{Msg: "SMTP: " + se.Error(), Retryable: se.IsTemp()}
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Msg: "SMTP: " + err.Error(), Retryable: true}
	}
	// Dial and handshake failures that are not net errors (TLS refused,
	// STARTTLS missing when required) are configuration problems.
	return &Error{Msg: "SMTP: " + err.Error()}
}

// checkSMTP dials the SMTP server (over TLS when secure, as port 465
// expects) and waits for its 220 greeting, then says QUIT. It does not
// authenticate: that would need the STARTTLS negotiation sending owns.
func checkSMTP(ctx context.Context, c Credentials, d Deps) error {
	host := val(c.Host)
	addr := net.JoinHostPort(host, val(c.Port))
	conn, err := d.dial()(ctx, "tcp", addr)
	var refused *outbound.RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	if err != nil {
		return &Error{Msg: "SMTP server " + addr + ": " + err.Error(), Unreachable: true}
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if on(c.Secure) {
		tc := tls.Client(conn, &tls.Config{ServerName: host})
		if err := tc.HandshakeContext(ctx); err != nil {
			return &Error{Msg: "SMTP server " + addr + ": " + err.Error(), Unreachable: true}
		}
		conn = tc
	}
	tp := textproto.NewConn(conn)
	if _, _, err := tp.ReadResponse(220); err != nil {
		return &Error{Msg: "SMTP server " + addr + ": no SMTP greeting: " + err.Error(), Unreachable: true}
	}
	tp.PrintfLine("QUIT") // best effort; the greeting already proved the server answers
	return nil
}

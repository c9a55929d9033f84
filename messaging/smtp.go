package messaging

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/herald-notify/herald/platform"
)

// smtpProvider is nodemailer: plain SMTP through go-mail, which handles
// STARTTLS, implicit TLS, authentication discovery and MIME for us.
type smtpProvider struct {
	creds credentials
	guard *platform.Outbound // where it may connect
}

func newSMTPProvider(in integration, guard *platform.Outbound) (Provider, error) {
	if in.Credentials.Host == "" {
		return nil, permanent("nodemailer needs a host")
	}
	if in.Credentials.From == "" {
		return nil, permanent("nodemailer needs a from address")
	}
	return &smtpProvider{creds: in.Credentials, guard: guard}, nil
}

// Send delivers one email. TLS follows nodemailer's settings: secure is TLS
// from the first byte (port 465 by default); otherwise requireTls insists on
// STARTTLS, ignoreTls never uses it, and by default STARTTLS is used when the
// server offers it.
func (p *smtpProvider) Send(ctx context.Context, m Message) (Result, error) {
	c := p.creds
	port := 587
	if c.Secure {
		port = 465
	}
	if c.Port != "" {
		n, err := strconv.Atoi(c.Port)
		if err != nil || n < 1 || n > 65535 {
			return Result{}, permanent("nodemailer port %q is not a port number", c.Port)
		}
		port = n
	}
	tlsConfig := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	if reject, ok := c.TLSOptions["rejectUnauthorized"].(bool); ok && !reject {
		tlsConfig.InsecureSkipVerify = true // the integration asked for it, as nodemailer allows
	}
	opts := []mail.Option{mail.WithPort(port), mail.WithTimeout(20 * time.Second), mail.WithTLSConfig(tlsConfig),
		mail.WithDialContextFunc(guardedDial(p.guard, bool(c.Secure), tlsConfig))}
	switch {
	case bool(c.Secure):
		opts = append(opts, mail.WithSSL())
	case bool(c.IgnoreTLS):
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	case bool(c.RequireTLS):
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if c.User != "" {
		auth := mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover)
		if c.IgnoreTLS {
			// Discovery refuses PLAIN and LOGIN without TLS; a connection
			// the integration asked to keep plain may use them, as
			// nodemailer does (a local relay, a test server).
			auth = mail.WithOpportunisticSMTPAuth(mail.SMTPAuthSCRAMSHA256, mail.SMTPAuthSCRAMSHA1,
				mail.SMTPAuthCramMD5, mail.SMTPAuthPlainNoEnc, mail.SMTPAuthLoginNoEnc)
		}
		opts = append(opts, auth, mail.WithUsername(c.User), mail.WithPassword(c.Password))
	}
	client, err := mail.NewClient(c.Host, opts...)
	if err != nil {
		return Result{}, permanent("nodemailer settings: %v", err)
	}

	msg := mail.NewMsg()
	from, senderName := cmp.Or(m.From, c.From), cmp.Or(m.SenderName, c.SenderName)
	if senderName != "" {
		err = msg.FromFormat(senderName, from)
	} else {
		err = msg.From(from)
	}
	if err != nil {
		return Result{}, permanent("from address %q: %v", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return Result{}, permanent("recipient %q: %v", m.To, err)
	}
	if err := addressed(msg, m.emailOverrides); err != nil {
		return Result{}, err
	}
	msg.Subject(m.Subject)
	msg.SetMessageID()
	msg.SetDate()
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)

	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return Result{}, smtpError(err)
	}
	id := msg.GetMessageID()
	raw, _ := json.Marshal(map[string]any{"messageId": id, "accepted": slices.Concat([]string{m.To}, m.Cc, m.Bcc)})
	return Result{ID: id, Raw: string(raw)}, nil
}

// guardedDial connects through guard. go-mail wraps only its own dialer in
// TLS, so with a dial function of ours an implicit-TLS connection (secure)
// does its handshake here.
func guardedDial(guard *platform.Outbound, secure bool, config *tls.Config) mail.DialContextFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := guard.DialContext(ctx, network, addr)
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

// addressed adds the copies and the reply address a trigger's overrides
// ask for.
func addressed(msg *mail.Msg, o emailOverrides) error {
	if len(o.Cc) > 0 {
		if err := msg.Cc(o.Cc...); err != nil {
			return permanent("cc %q: %v", o.Cc, err)
		}
	}
	if len(o.Bcc) > 0 {
		if err := msg.Bcc(o.Bcc...); err != nil {
			return permanent("bcc %q: %v", o.Bcc, err)
		}
	}
	if o.ReplyTo != "" {
		if err := msg.ReplyTo(o.ReplyTo); err != nil {
			return permanent("replyTo %q: %v", o.ReplyTo, err)
		}
	}
	return nil
}

// smtpError classifies an SMTP failure: a refused connection, a timeout or a
// 4xx reply may pass later; a 5xx reply will not.
func smtpError(err error) error {
	var refused *platform.OutboundRefusedError
	if errors.As(err, &refused) {
		return permanent("SMTP: %s", refused.Error())
	}
	var se *mail.SendError
	if errors.As(err, &se) {
		return &sendError{msg: "SMTP: " + se.Error(), retryable: se.IsTemp()}
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) {
		return &sendError{msg: "SMTP: " + err.Error(), retryable: true}
	}
	// Dial and handshake failures that are not net errors (TLS refused,
	// STARTTLS missing when required) are configuration problems.
	return &sendError{msg: "SMTP: " + err.Error(), retryable: false}
}

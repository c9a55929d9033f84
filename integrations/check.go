package integrations

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"time"

	"github.com/herald-notify/herald/platform"
)

// checkTimeout bounds each provider check, so a request with check: true
// answers within seconds even when the provider's host drops packets.
const checkTimeout = 5 * time.Second

// webhookField names the credential holding the URL a webhook provider posts to.
var webhookField = map[string]string{
	"email-webhook": "webhookUrl",
	"push-webhook":  "webhookUrl",
	"chat-webhook":  "webhookUrl",
	"slack":         "webhookUrl",
	"discord":       "webhookUrl",
	"msteams":       "webhookUrl",
	"mattermost":    "webhookUrl",
	"generic-sms":   "baseUrl",
}

// checkProvider tries the provider with creds, as `check: true` asks (spec
// §4.3): an SMTP greeting from nodemailer's host, an HTTP answer from a
// webhook URL. A failure is a 422 naming the credential that did not work.
// Providers Herald does not deliver through have nothing to try; for them the
// required-credential rules are the whole check.
//
// The check connects only where the outbound guard allows, and its failures
// tell an attacker nothing about the port they name (issue 37): a closed
// port, a silent one and one that speaks another protocol all fail with the
// same words, at the same moment, the end of the check's time.
func (s *Store) checkProvider(ctx context.Context, providerID string, creds Credentials) error {
	ctx, cancel := context.WithTimeout(ctx, s.checkTimeout)
	defer cancel()
	values := credentialValues(creds)
	if providerID == "nodemailer" {
		addr := net.JoinHostPort(values["host"], values["port"])
		if err := s.checkSMTP(ctx, addr, creds.Secure != nil && *creds.Secure, values["host"]); err != nil {
			return platform.InvalidField("credentials.host", values["host"], "integration check failed: %v", unreachable(ctx, err, "no SMTP server answered at "+addr))
		}
		return nil
	}
	field, ok := webhookField[providerID]
	if !ok || values[field] == "" {
		return nil
	}
	if err := s.checkHTTP(ctx, values[field]); err != nil {
		return platform.InvalidField("credentials."+field, values[field], "integration check failed: %v", err)
	}
	return nil
}

// unreachable is what a check that did not get its answer says: the guard's
// refusal or an unknown host as they are, anything else as generic, after
// waiting out the check's time so the moment of the answer says nothing
// either.
func unreachable(ctx context.Context, err error, generic string) error {
	var refused *platform.OutboundRefusedError
	var dns *net.DNSError
	switch {
	case errors.As(err, &refused):
		return refused
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Errorf("host %s not found", dns.Name)
	}
	<-ctx.Done()
	return errors.New(generic)
}

// checkSMTP dials addr (over TLS when secure, as port 465 expects) and waits
// for the server's 220 greeting, then says QUIT. It does not authenticate:
// that would need STARTTLS negotiation the delivery code owns.
func (s *Store) checkSMTP(ctx context.Context, addr string, secure bool, host string) error {
	conn, err := s.guard.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if secure {
		tc := tls.Client(conn, &tls.Config{ServerName: host})
		if err := tc.HandshakeContext(ctx); err != nil {
			return err
		}
		conn = tc
	}
	tp := textproto.NewConn(conn)
	if _, _, err := tp.ReadResponse(220); err != nil {
		return fmt.Errorf("no SMTP greeting: %w", err)
	}
	tp.PrintfLine("QUIT") // best effort; the greeting already proved the server answers
	return nil
}

// checkHTTP sends a HEAD to rawURL. Any answer below 500 proves the endpoint
// is there (a webhook often refuses HEAD with 404 or 405); a connection
// failure, a timeout, a server error or a redirect to another host does not.
func (s *Store) checkHTTP(ctx context.Context, rawURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("%s is not an http(s) URL", rawURL)
	}
	res, err := s.checkClient.Do(req)
	if err != nil {
		return unreachable(ctx, err, "no web server answered at "+req.URL.Host)
	}
	res.Body.Close()
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400 && res.Header.Get("Location") != "":
		return fmt.Errorf("%s redirects elsewhere; Herald follows no redirect to another host", req.URL.Host)
	case res.StatusCode >= 500:
		return fmt.Errorf("%s answered %s", req.URL.Host, res.Status)
	}
	return nil
}

// newCheckClient returns the client of HTTP checks: through guard, and
// following redirects only within the same scheme and host (at most 3), so
// a check cannot be bounced to a host the URL does not name.
func newCheckClient(guard *platform.Outbound) *http.Client {
	return &http.Client{
		Transport: guard.Transport(checkTimeout),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

package integrations

import (
	"context"
	"crypto/tls"
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
func checkProvider(ctx context.Context, providerID string, creds Credentials) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	values := credentialValues(creds)
	if providerID == "nodemailer" {
		addr := net.JoinHostPort(values["host"], values["port"])
		if err := checkSMTP(ctx, addr, creds.Secure != nil && *creds.Secure, values["host"]); err != nil {
			return platform.InvalidField("credentials.host", values["host"], "integration check failed: SMTP server %s: %v", addr, err)
		}
		return nil
	}
	field, ok := webhookField[providerID]
	if !ok || values[field] == "" {
		return nil
	}
	if err := checkHTTP(ctx, values[field]); err != nil {
		return platform.InvalidField("credentials."+field, values[field], "integration check failed: %v", err)
	}
	return nil
}

// checkSMTP dials addr (over TLS when secure, as port 465 expects) and waits
// for the server's 220 greeting, then says QUIT. It does not authenticate:
// that would need STARTTLS negotiation the delivery code owns.
func checkSMTP(ctx context.Context, addr string, secure bool, host string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
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

// checkHTTP sends a HEAD to url. Any answer below 500 proves the endpoint is
// there (a webhook often refuses HEAD with 404 or 405); a connection failure,
// a timeout or a server error does not.
func checkHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s unreachable: %w", url, unwrapURLError(err))
	}
	res.Body.Close()
	if res.StatusCode >= 500 {
		return fmt.Errorf("%s answered %s", url, res.Status)
	}
	return nil
}

// unwrapURLError drops *url.Error's "Head \"…\":" prefix, which repeats the URL.
func unwrapURLError(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

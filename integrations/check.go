package integrations

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"time"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
)

// checkTimeout bounds each provider check, so a request with check: true
// answers within seconds even when the provider's host drops packets.
const checkTimeout = 5 * time.Second

// CheckHeader tells the client of a create or update with check: true how
// its credentials were checked: "dialed" when the provider answered an
// authenticated call, "shape" when the provider has no such call and only
// the credentials' form was checked (docs/providers.md).
const CheckHeader = "Herald-Check"

// checkProvider tries the provider with creds, as `check: true` asks (spec
// §4.3): an SMTP greeting from nodemailer's host, the provider's cheapest
// authenticated call (SendGrid scopes, the Twilio account, an FCM token
// exchange, a HEAD to a webhook URL). A failure is a 422 naming the
// credential and the provider's reason. dialed is false when the provider
// has nothing to call and the required-credential rules were the check.
func checkProvider(ctx context.Context, client provider.Deps, providerID string, creds Credentials) (dialed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if providerID == "nodemailer" {
		host, port := creds.Value("host"), creds.Value("port")
		addr := net.JoinHostPort(host, port)
		if err := checkSMTP(ctx, addr, creds.Secure != nil && *creds.Secure, host); err != nil {
			return true, platform.InvalidField("credentials.host", host, "integration check failed: SMTP server %s: %v", addr, err)
		}
		return true, nil
	}
	err = provider.Check(ctx, providerID, creds, client)
	switch {
	case errors.Is(err, provider.ErrNoCheck):
		return false, nil
	case err != nil:
		field := "credentials"
		info, _ := provider.Lookup(providerID)
		if info.CheckField != "" {
			field += "." + info.CheckField
		}
		var shown any
		if strings.HasSuffix(info.CheckField, "Url") {
			shown = creds.Value(info.CheckField) // a URL, not a secret
		}
		return true, platform.InvalidField(field, shown, "integration check failed: %v", err)
	}
	return true, nil
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

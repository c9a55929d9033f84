package integrations

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/outbound"
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

// checkProvider tries the provider with creds, as `check: true` asks
// (docs/api.md, "Integrations"): an SMTP greeting from nodemailer's host,
// the provider's cheapest authenticated call (SendGrid scopes, the Twilio
// account, an FCM token exchange, a HEAD to a webhook URL). A failure is a
// 422 naming the credential and the provider's reason. dialed is false when
// the provider has nothing to call and the required-credential rules were
// the check.
//
// The check connects only where the outbound guard allows, and a target
// that did not answer tells an attacker nothing about the port it names: a
// closed port, a silent one and one that speaks another protocol all fail
// with the same words, at the same moment, the end of the check's time.
func (s *Store) checkProvider(ctx context.Context, providerID string, creds Credentials) (dialed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.checkTimeout)
	defer cancel()
	err = provider.Check(ctx, providerID, creds, s.outbound)
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
		if strings.HasSuffix(info.CheckField, "Url") || info.CheckField == "host" {
			shown = creds.Value(info.CheckField) // a URL, not a secret
		}
		return true, platform.InvalidField(field, shown, "integration check failed: %v", unreachable(ctx, err, info.CheckField, shown))
	}
	return true, nil
}

// unreachable is what a failed check says. A provider's own answer (a wrong
// key) and the guard's refusal are said as they are; an unknown host is
// named; a target that did not answer is said in generic words, after
// waiting out the check's time, so neither the words nor the moment of the
// answer tell a closed port from an open one.
func unreachable(ctx context.Context, err error, field string, shown any) error {
	var refused *outbound.RefusedError
	var dns *net.DNSError
	var pe *provider.Error
	switch {
	case errors.As(err, &refused):
		return refused
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Errorf("host %s not found", dns.Name)
	case !errors.As(err, &pe) || !pe.Unreachable:
		return err
	}
	<-ctx.Done()
	where := "the provider"
	if target, ok := shown.(string); ok && target != "" {
		where = target
	}
	if field == "host" {
		return fmt.Errorf("no SMTP server answered at %s", where)
	}
	return fmt.Errorf("no web server answered at %s", where)
}

// newCheckClient returns the client of HTTP checks: through guard, and
// following redirects only within the same scheme and host (at most 3), so
// a check cannot be bounced to a host the URL does not name.
func newCheckClient(guard *outbound.Guard) *http.Client {
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

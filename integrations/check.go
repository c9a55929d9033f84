package integrations

import (
	"context"
	"errors"
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
		if strings.HasSuffix(info.CheckField, "Url") || info.CheckField == "host" {
			shown = creds.Value(info.CheckField) // a URL, not a secret
		}
		return true, platform.InvalidField(field, shown, "integration check failed: %v", err)
	}
	return true, nil
}

package integrations

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// UseReceipts makes the receipt route apply what providers report through
// sink; it returns s. Without it the route answers 404.
func (s *Store) UseReceipts(sink ReceiptSink) *Store {
	s.receipts = sink
	return s
}

// UsePublicURL sets the address providers reach Herald at (HERALD_PUBLIC_URL):
// the receipt URL an integration shows starts with it, and the signatures
// that sign the URL (Twilio's, Plivo's) are checked against it. Unset, the
// request's own scheme and host are used. It returns s.
func (s *Store) UsePublicURL(base string) *Store {
	s.publicURL = strings.TrimSuffix(base, "/")
	return s
}

// errUnverified is a receipt whose signature is missing or wrong: 401, and
// nothing changes.
var errUnverified = errors.New("receipt not verified")

// receiptRequest is one provider callback, as a reader verifies and parses
// it.
type receiptRequest struct {
	r    *http.Request
	body []byte
	url  string // the URL the provider called, as it signed it
	in   integration
	now  time.Time
	// token is set by a reader that recorded the receipt's one-time
	// token (replayed), to be forgotten if the receipt is not applied.
	token *string
}

// signingKey is the integration's inbound webhook signing key, "" when none.
func (q receiptRequest) signingKey() string {
	if k := q.in.Configurations.InboundWebhookSigningKey; k != nil {
		return strings.TrimSpace(*k)
	}
	return ""
}

// receiptReader verifies a provider's callback as the provider documents
// and reads its receipts. It returns errUnverified for a callback it
// cannot verify, and a platform error for one it cannot read.
type receiptReader func(ctx context.Context, s *Store, q receiptRequest) ([]Receipt, error)

// receiptReaders are the providers whose delivery callbacks Herald reads
// (docs/webhooks.md, "Receipts from providers").
var receiptReaders = map[string]receiptReader{
	"sendgrid":    readSendGrid,
	"mailgun":     readMailgun,
	"postmark":    readPostmark,
	"resend":      readResend,
	"ses":         readSES,
	"twilio":      readTwilio,
	"plivo":       readPlivo,
	"telnyx":      readTelnyx,
	"nexmo":       readNexmo,
	"bandwidth":   readBandwidth,
	"messagebird": readMessageBird,
}

// getReceipts are the providers that call the receipt route with GET, the
// receipt in the query: MessageBird's status reports. Every other
// provider posts, and a GET for its integration is refused.
var getReceipts = map[string]bool{"messagebird": true}

// ReceiptPath is where a provider posts an integration's receipts: the
// reference platform's route.
func ReceiptPath(organizationID, environmentID, channel, integrationID string) string {
	return "/webhooks/organizations/" + organizationID + "/environments/" + environmentID + "/" + channel + "/" + integrationID
}

// handleReceipt serves POST (and, for a provider that calls with GET, GET)
// /webhooks/organizations/{organizationId}/environments/{environmentId}/{channel}/{integrationId}:
// a provider's delivery callback, verified as the provider documents it
// (401 and nothing changed when it is not), applied to the messages it
// names. It needs no API key: providers cannot send one.
func handleReceipt(s *Store) http.Handler {
	type event struct {
		Status     string `json:"status"`
		Date       string `json:"date"`
		ExternalID string `json:"externalId,omitempty"`
	}
	type result struct {
		ID    string `json:"id"`
		Event event  `json:"event"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		in, err := s.receiptIntegration(ctx, r)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return platform.Errorf(http.StatusRequestEntityTooLarge, "Request body is too large")
		}
		q := receiptRequest{r: r, body: body, url: s.requestURL(r), in: in, now: time.Now(), token: new(string)}
		receipts, err := receiptReaders[in.ProviderID](ctx, s, q)
		if errors.Is(err, errUnverified) {
			return platform.Unauthorized("The " + in.ProviderID + " webhook could not be verified")
		}
		if err != nil {
			return err
		}
		if _, err := s.receipts.ApplyReceipts(ctx, in.EnvironmentID, in.ProviderID, receipts); err != nil {
			if *q.token != "" {
				s.forget(context.WithoutCancel(ctx), in.ID, *q.token)
			}
			return err
		}
		out := make([]result, len(receipts))
		for i, rc := range receipts {
			at := rc.At
			if at.IsZero() {
				at = q.now
			}
			out[i] = result{ID: cmp.Or(rc.ProviderMessageID, rc.MessageID),
				Event: event{Status: rc.Event, Date: sqldb.FormatTime(at), ExternalID: rc.ProviderMessageID}}
		}
		return platform.JSON(w, http.StatusOK, map[string]any{"data": out})
	})
}

// receiptIntegration finds the integration a receipt route names, by _id or
// by provider id (the reference platform takes either), in the
// organization and environment of the path, on the path's channel, with
// inbound webhooks enabled and a provider whose receipts Herald reads.
func (s *Store) receiptIntegration(ctx context.Context, r *http.Request) (integration, error) {
	org, env := r.PathValue("organizationId"), r.PathValue("environmentId")
	channel, id := r.PathValue("channel"), r.PathValue("integrationId")
	notFound := platform.NotFound("Integration for %s was not found", id)
	if s.receipts == nil || !sqldb.IsID(org) || !sqldb.IsID(env) {
		return integration{}, notFound
	}
	list, err := s.query(ctx, s.db, `WHERE organization_id = ? AND environment_id = ? AND channel = ? AND deleted = 0
		AND (id = ? OR provider_id = ?) ORDER BY is_primary DESC, created_at, id LIMIT 1`, org, env, channel, id, id)
	if err != nil {
		return integration{}, err
	}
	if len(list) == 0 {
		return integration{}, notFound
	}
	in := list[0]
	if _, ok := receiptReaders[in.ProviderID]; !ok {
		return integration{}, platform.NotFound("Herald reads no delivery webhooks of %s", in.ProviderID)
	}
	if on := in.Configurations.InboundWebhookEnabled; on == nil || !*on {
		return integration{}, platform.NotFound("Inbound webhooks are not enabled for integration %s", in.ID)
	}
	if r.Method != http.MethodPost && !getReceipts[in.ProviderID] {
		return integration{}, platform.Errorf(http.StatusMethodNotAllowed, "The %s webhook is received with POST", in.ProviderID)
	}
	return in, nil
}

// requestURL is the URL the provider called: the public URL's scheme and
// host when one is set, else the request's own.
func (s *Store) requestURL(r *http.Request) string {
	return s.base(r) + r.URL.RequestURI()
}

// base is the scheme and host providers reach Herald at.
func (s *Store) base(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// receiptURL is the address an integration's provider posts receipts to,
// "" for a provider whose receipts Herald does not read.
func (s *Store) receiptURL(r *http.Request, in integration) string {
	if _, ok := receiptReaders[in.ProviderID]; !ok {
		return ""
	}
	u := s.base(r) + ReceiptPath(in.OrganizationID, in.EnvironmentID, in.Channel, in.ID)
	if _, err := url.Parse(u); err != nil {
		return ""
	}
	return u
}

// handleIntegrationGet serves GET /v1/integrations/{integrationId}: one
// integration of the organization with its configurations and, for a
// provider whose receipts Herald reads, inboundWebhookUrl, the address to
// give the provider (docs/webhooks.md, "Receipts from providers").
func handleIntegrationGet(s *Store) http.Handler {
	type response struct {
		integrationResponse
		InboundWebhookURL *string `json:"inboundWebhookUrl,omitempty"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("integrationId")
		in, err := s.find(r.Context(), platform.TenantFrom(r.Context()).OrganizationID, id)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Integration with id %s not found", id)
		}
		if err != nil {
			return err
		}
		out := response{integrationResponse: in.response(true, false)}
		if u := s.receiptURL(r, in); u != "" {
			out.InboundWebhookURL = &u
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

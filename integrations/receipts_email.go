package integrations

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
)

// invalidBody is the 400 of a verified callback whose body is not what the
// provider documents.
func invalidBody(provider string) error {
	return platform.BadRequest("The %s webhook body could not be read", provider)
}

// readSendGrid reads SendGrid's Event Webhook: a JSON array of events,
// signed with the account's ECDSA key over the timestamp header and the
// raw body; the signing key is the verification key SendGrid shows, in
// base64.
func readSendGrid(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	sig, err := base64.StdEncoding.DecodeString(q.r.Header.Get("X-Twilio-Email-Event-Webhook-Signature"))
	ts := q.r.Header.Get("X-Twilio-Email-Event-Webhook-Timestamp")
	if err != nil || len(sig) == 0 || ts == "" || !freshUnix(ts, q.now) {
		return nil, errUnverified
	}
	der, err := base64.StdEncoding.DecodeString(q.signingKey())
	if err != nil {
		return nil, errUnverified
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	key, ok := pub.(*ecdsa.PublicKey)
	if err != nil || !ok {
		return nil, errUnverified
	}
	digest := sha256.Sum256(append([]byte(ts), q.body...))
	if !ecdsa.VerifyASN1(key, digest[:], sig) {
		return nil, errUnverified
	}
	var events []struct {
		Event       string `json:"event"`
		SGMessageID string `json:"sg_message_id"`
		MessageID   string `json:"heraldMessageId"` // the custom argument the send set
		Timestamp   int64  `json:"timestamp"`
		Reason      string `json:"reason"`
		Response    string `json:"response"`
	}
	if err := json.Unmarshal(q.body, &events); err != nil {
		return nil, invalidBody("sendgrid")
	}
	kinds := map[string]string{"delivered": ReceiptDelivered, "bounce": ReceiptBounced, "dropped": ReceiptFailed,
		"open": ReceiptOpened, "click": ReceiptClicked, "spamreport": ReceiptComplained, "deferred": ReceiptDelayed,
		"processed": ReceiptSent}
	var out []Receipt
	for i, e := range events {
		kind, ok := kinds[e.Event]
		if !ok {
			continue
		}
		// SendGrid's message id is the send's X-Message-Id with a suffix
		// of its own after the first dot.
		id, _, _ := strings.Cut(e.SGMessageID, ".")
		raw, _ := json.Marshal(json.RawMessage(rawItem(q.body, i)))
		out = append(out, Receipt{MessageID: e.MessageID, ProviderMessageID: id, Event: kind, ProviderStatus: e.Event,
			Error: firstOf(e.Reason, e.Response), At: unixTime(e.Timestamp), Raw: string(raw)})
	}
	return out, nil
}

// rawItem is the i-th element of a JSON array body, as sent.
func rawItem(body []byte, i int) []byte {
	var items []json.RawMessage
	if json.Unmarshal(body, &items) != nil || i >= len(items) {
		return nil
	}
	return items[i]
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// signatureTolerance is how far a signed timestamp may be from now: a
// callback older than that is a replay.
const signatureTolerance = 5 * time.Minute

// freshUnix reports whether ts, Unix seconds, is within the tolerance of now.
func freshUnix(ts string, now time.Time) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	d := now.Sub(time.Unix(sec, 0))
	return d < signatureTolerance && d > -signatureTolerance
}

// readMailgun reads a Mailgun webhook: {signature: {timestamp, token,
// signature}, event-data}, the signature the hex HMAC-SHA256 of timestamp
// and token under the account's HTTP webhook signing key.
func readMailgun(ctx context.Context, s *Store, q receiptRequest) ([]Receipt, error) {
	var body struct {
		Signature struct {
			Timestamp string `json:"timestamp"`
			Token     string `json:"token"`
			Signature string `json:"signature"`
		} `json:"signature"`
		EventData struct {
			Event     string  `json:"event"`
			Severity  string  `json:"severity"`
			Timestamp float64 `json:"timestamp"`
			Reason    string  `json:"reason"`
			Message   struct {
				Headers struct {
					MessageID string `json:"message-id"`
				} `json:"headers"`
			} `json:"message"`
			UserVariables map[string]any `json:"user-variables"`
			Delivery      struct {
				Description string `json:"description"`
				Message     string `json:"message"`
			} `json:"delivery-status"`
		} `json:"event-data"`
	}
	if json.Unmarshal(q.body, &body) != nil {
		return nil, errUnverified
	}
	sig := body.Signature
	key := q.signingKey()
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sig.Timestamp + sig.Token))
	want := hex.EncodeToString(mac.Sum(nil))
	if key == "" || !freshUnix(sig.Timestamp, q.now) || !hmac.Equal([]byte(want), []byte(strings.ToLower(sig.Signature))) {
		return nil, errUnverified
	}
	// Mailgun's token is single-use: a pair taken before is a replay.
	token := sig.Timestamp + ":" + sig.Token
	switch seen, err := s.replayed(ctx, q.in.ID, token, q.now); {
	case err != nil:
		return nil, err
	case seen:
		return nil, errUnverified
	}
	*q.token = token
	e := body.EventData
	kind := map[string]string{"accepted": ReceiptSent, "delivered": ReceiptDelivered, "opened": ReceiptOpened,
		"clicked": ReceiptClicked, "complained": ReceiptComplained, "failed": ReceiptFailed}[e.Event]
	if e.Event == "failed" && e.Severity == "temporary" {
		kind = ReceiptDelayed
	}
	if e.Event == "failed" && e.Reason == "bounce" {
		kind = ReceiptBounced
	}
	if kind == "" {
		return nil, nil
	}
	id, _ := e.UserVariables["heraldMessageId"].(string)
	// Mailgun's send answers the id in angle brackets; its events, without.
	providerID := "<" + strings.Trim(e.Message.Headers.MessageID, "<>") + ">"
	if e.Message.Headers.MessageID == "" {
		providerID = ""
	}
	return []Receipt{{MessageID: id, ProviderMessageID: providerID, Event: kind, ProviderStatus: e.Event,
		Error: firstOf(e.Delivery.Description, e.Delivery.Message, e.Reason), At: unixTime(int64(e.Timestamp)),
		Raw: string(q.body)}}, nil
}

// readPostmark reads a Postmark webhook, which Postmark authenticates with
// the basic-auth credentials in the URL it is given, or a custom header:
// the signing key is "user:password" for the first, or the token the
// X-Webhook-Token header carries.
func readPostmark(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	key := q.signingKey()
	user, pass, basic := q.r.BasicAuth()
	given := q.r.Header.Get("X-Webhook-Token")
	if basic {
		given = user + ":" + pass
	}
	if key == "" || given == "" || subtle.ConstantTimeCompare([]byte(given), []byte(key)) != 1 {
		return nil, errUnverified
	}
	var e struct {
		RecordType  string            `json:"RecordType"`
		MessageID   string            `json:"MessageID"`
		Metadata    map[string]string `json:"Metadata"`
		Type        string            `json:"Type"`
		Description string            `json:"Description"`
		Details     string            `json:"Details"`
		DeliveredAt string            `json:"DeliveredAt"`
		BouncedAt   string            `json:"BouncedAt"`
		ReceivedAt  string            `json:"ReceivedAt"`
	}
	if json.Unmarshal(q.body, &e) != nil {
		return nil, invalidBody("postmark")
	}
	kind := map[string]string{"Delivery": ReceiptDelivered, "Bounce": ReceiptBounced, "Open": ReceiptOpened,
		"Click": ReceiptClicked, "SpamComplaint": ReceiptComplained}[e.RecordType]
	if kind == "" {
		return nil, nil
	}
	at, _ := time.Parse(time.RFC3339, firstOf(e.DeliveredAt, e.BouncedAt, e.ReceivedAt))
	return []Receipt{{MessageID: e.Metadata["heraldMessageId"], ProviderMessageID: e.MessageID, Event: kind,
		ProviderStatus: e.RecordType, Error: firstOf(e.Description, e.Details), At: at, Raw: string(q.body)}}, nil
}

// readResend reads a Resend webhook, which Resend signs through Svix: the
// signing key is the endpoint's whsec_ secret.
func readResend(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	h := q.r.Header
	if !verifySvix(q.signingKey(), h.Get("svix-id"), h.Get("svix-timestamp"), h.Get("svix-signature"), q.body, q.now) {
		return nil, errUnverified
	}
	var e struct {
		Type      string `json:"type"`
		CreatedAt string `json:"created_at"`
		Data      struct {
			EmailID string `json:"email_id"`
			Bounce  struct {
				Message string `json:"message"`
			} `json:"bounce"`
			Failed struct {
				Reason string `json:"reason"`
			} `json:"failed"`
		} `json:"data"`
	}
	if json.Unmarshal(q.body, &e) != nil {
		return nil, invalidBody("resend")
	}
	kind := map[string]string{"email.sent": ReceiptSent, "email.delivered": ReceiptDelivered,
		"email.delivery_delayed": ReceiptDelayed, "email.bounced": ReceiptBounced, "email.failed": ReceiptFailed,
		"email.opened": ReceiptOpened, "email.clicked": ReceiptClicked, "email.complained": ReceiptComplained}[e.Type]
	if kind == "" {
		return nil, nil
	}
	at, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	return []Receipt{{ProviderMessageID: e.Data.EmailID, Event: kind, ProviderStatus: e.Type,
		Error: firstOf(e.Data.Bounce.Message, e.Data.Failed.Reason), At: at, Raw: string(q.body)}}, nil
}

// verifySvix checks a Svix signature: a v1 entry of the signature header
// is the base64 HMAC-SHA256 of "id.timestamp.body" under the secret's key.
func verifySvix(secret, id, ts, header string, body []byte, now time.Time) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 || id == "" || !freshUnix(ts, now) {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for entry := range strings.FieldsSeq(header) {
		version, sig, ok := strings.Cut(entry, ",")
		if ok && version == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

package integrations

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"
)

// smsKinds maps the SMS providers' delivery statuses to receipts
// (docs/webhooks.md, "Receipts from providers"); a status not here (queued,
// sending, accepted) changes nothing.
var smsKinds = map[string]string{"sent": ReceiptSent, "delivered": ReceiptDelivered, "failed": ReceiptFailed,
	"undelivered": ReceiptFailed, "rejected": ReceiptFailed, "sending_failed": ReceiptFailed,
	"delivery_failed": ReceiptFailed, "delivery_unconfirmed": ReceiptFailed}

// formOf reads a form-encoded callback body.
func formOf(q receiptRequest) url.Values {
	v, err := url.ParseQuery(string(q.body))
	if err != nil {
		return nil
	}
	return v
}

// readTwilio reads a Twilio status callback: a form whose X-Twilio-Signature
// is the base64 HMAC-SHA1, under the account's auth token, of the URL
// Twilio called followed by each parameter's name and value, sorted by
// name.
func readTwilio(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	form := formOf(q)
	token := val(q.in.Credentials.Token)
	if form == nil || token == "" {
		return nil, errUnverified
	}
	var b strings.Builder
	b.WriteString(q.url)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range form {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range form[k] {
			b.WriteString(k + v)
		}
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(b.String()))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(q.r.Header.Get("X-Twilio-Signature"))) {
		return nil, errUnverified
	}
	status := form.Get("MessageStatus")
	kind := smsKinds[status]
	if kind == "" {
		return nil, nil
	}
	why := ""
	if code := form.Get("ErrorCode"); code != "" {
		why = "Twilio error " + code
	}
	return []Receipt{{ProviderMessageID: form.Get("MessageSid"), Event: kind, ProviderStatus: status, Error: why,
		Raw: string(q.body)}}, nil
}

// readPlivo reads a Plivo message status callback, signed (signature V2)
// with the base64 HMAC-SHA256, under the account's auth token, of the URL
// without its query followed by the X-Plivo-Signature-V2-Nonce header.
func readPlivo(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	form := formOf(q)
	token := val(q.in.Credentials.Token)
	nonce := q.r.Header.Get("X-Plivo-Signature-V2-Nonce")
	if form == nil || token == "" || nonce == "" {
		return nil, errUnverified
	}
	base, _, _ := strings.Cut(q.url, "?")
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(base + nonce))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(q.r.Header.Get("X-Plivo-Signature-V2"))) {
		return nil, errUnverified
	}
	status := form.Get("Status")
	kind := smsKinds[status]
	if kind == "" {
		return nil, nil
	}
	why := ""
	if code := form.Get("ErrorCode"); code != "" && code != "0" && code != "000" {
		why = "Plivo error " + code
	}
	return []Receipt{{ProviderMessageID: form.Get("MessageUUID"), Event: kind, ProviderStatus: status, Error: why,
		Raw: string(q.body)}}, nil
}

// readTelnyx reads a Telnyx messaging webhook, signed with Ed25519 over
// "timestamp|body" (the telnyx-timestamp header, then the raw body); the
// signing key is the account's public key, in base64.
func readTelnyx(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	key, err := base64.StdEncoding.DecodeString(q.signingKey())
	sig, err2 := base64.StdEncoding.DecodeString(q.r.Header.Get("telnyx-signature-ed25519"))
	ts := q.r.Header.Get("telnyx-timestamp")
	if err != nil || err2 != nil || len(key) != ed25519.PublicKeySize || !freshUnix(ts, q.now) ||
		!ed25519.Verify(ed25519.PublicKey(key), append([]byte(ts+"|"), q.body...), sig) {
		return nil, errUnverified
	}
	var e struct {
		Data struct {
			EventType  string `json:"event_type"`
			OccurredAt string `json:"occurred_at"`
			Payload    struct {
				ID string `json:"id"`
				To []struct {
					Status string `json:"status"`
				} `json:"to"`
				Errors []struct {
					Detail string `json:"detail"`
					Title  string `json:"title"`
				} `json:"errors"`
			} `json:"payload"`
		} `json:"data"`
	}
	if json.Unmarshal(q.body, &e) != nil {
		return nil, invalidBody("telnyx")
	}
	p := e.Data.Payload
	if len(p.To) == 0 {
		return nil, nil
	}
	status := p.To[0].Status
	kind := smsKinds[status]
	if kind == "" {
		return nil, nil
	}
	why := ""
	if len(p.Errors) > 0 {
		why = firstOf(p.Errors[0].Detail, p.Errors[0].Title)
	}
	at, _ := time.Parse(time.RFC3339Nano, e.Data.OccurredAt)
	return []Receipt{{ProviderMessageID: p.ID, Event: kind, ProviderStatus: status, Error: why, At: at,
		Raw: string(q.body)}}, nil
}

func val(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// basicAuthorized reports whether q carries, as basic auth, the
// "user:password" of the integration's signing key: how providers that
// sign nothing let a callback prove itself, the credentials provisioned
// in the callback URL or on the provider's application.
func basicAuthorized(q receiptRequest) bool {
	key := q.signingKey()
	user, pass, ok := q.r.BasicAuth()
	return ok && key != "" && subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte(key)) == 1
}

// readBandwidth reads Bandwidth's message callbacks, which carry the basic
// auth set on the messaging application: a JSON array of events, each
// naming the message by Bandwidth's id and by the tag Herald's send set.
func readBandwidth(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	if !basicAuthorized(q) {
		return nil, errUnverified
	}
	var events []struct {
		Type        string          `json:"type"`
		Time        string          `json:"time"`
		Description string          `json:"description"`
		ErrorCode   json.RawMessage `json:"errorCode"`
		Message     struct {
			ID  string `json:"id"`
			Tag string `json:"tag"`
		} `json:"message"`
	}
	if json.Unmarshal(q.body, &events) != nil {
		return nil, invalidBody("bandwidth")
	}
	var out []Receipt
	for _, e := range events {
		kind := map[string]string{"message-delivered": ReceiptDelivered, "message-failed": ReceiptFailed}[e.Type]
		if kind == "" {
			continue
		}
		why := ""
		if kind == ReceiptFailed {
			why = strings.TrimSpace("Bandwidth error " + strings.Trim(string(e.ErrorCode), `"`) + ": " + e.Description)
		}
		at, _ := time.Parse(time.RFC3339Nano, e.Time)
		raw, _ := json.Marshal(e)
		out = append(out, Receipt{MessageID: e.Message.Tag, ProviderMessageID: e.Message.ID, Event: kind,
			ProviderStatus: e.Type, Error: why, At: at, Raw: string(raw)})
	}
	return out, nil
}

package integrations

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"hash"
	"slices"
	"strings"
)

// vonageKinds maps the statuses of a Vonage SMS API delivery receipt to
// receipts; accepted, buffered and unknown change nothing.
var vonageKinds = map[string]string{"delivered": ReceiptDelivered, "expired": ReceiptFailed,
	"failed": ReceiptFailed, "rejected": ReceiptFailed}

// readNexmo reads a Vonage SMS API delivery receipt with signed webhooks
// on: its parameters (a form, or a JSON object) carry timestamp, nonce and
// sig, the signature of the others under the account's signature secret.
// The string signed is each parameter but sig, sorted by name, as
// "&name=value", with & and = in a value written as _; the default method
// hashes it with the secret appended (MD5), the others are HMACs of it
// under the secret. The dashboard picks the method and the receipt does
// not say which, so each is tried: all need the secret.
func readNexmo(_ context.Context, _ *Store, q receiptRequest) ([]Receipt, error) {
	params := vonageParams(q)
	secret := q.signingKey()
	sig := strings.ToLower(params["sig"])
	if secret == "" || sig == "" || !freshUnix(params["timestamp"], q.now) {
		return nil, errUnverified
	}
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range params {
			if k != "sig" && !yield(k) {
				return
			}
		}
	}) {
		b.WriteString("&" + k + "=" + strings.NewReplacer("&", "_", "=", "_").Replace(params[k]))
	}
	signed := b.String()
	sum := md5.Sum([]byte(signed + secret))
	ok := hmac.Equal([]byte(hex.EncodeToString(sum[:])), []byte(sig))
	for _, h := range []func() hash.Hash{md5.New, sha1.New, sha256.New, sha512.New} {
		mac := hmac.New(h, []byte(secret))
		mac.Write([]byte(signed))
		ok = hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sig)) || ok
	}
	if !ok {
		return nil, errUnverified
	}
	status := params["status"]
	kind := vonageKinds[status]
	if kind == "" {
		return nil, nil
	}
	why := ""
	if code := params["err-code"]; code != "" && code != "0" {
		why = "Vonage error " + code
	}
	// client-ref is Herald's message id, which the send set.
	return []Receipt{{MessageID: params["client-ref"], ProviderMessageID: params["messageId"], Event: kind,
		ProviderStatus: status, Error: why, Raw: string(q.body)}}, nil
}

// vonageParams are a Vonage callback's parameters: its JSON object's
// fields (a number as its JSON text), or its form's, or, for one sent as a
// GET-style callback, its query's.
func vonageParams(q receiptRequest) map[string]string {
	out := map[string]string{}
	if strings.HasPrefix(strings.TrimSpace(string(q.body)), "{") {
		var doc map[string]json.RawMessage
		if json.Unmarshal(q.body, &doc) != nil {
			return out
		}
		for k, v := range doc {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			out[k] = s
		}
		return out
	}
	form := formOf(q)
	if len(form) == 0 {
		form = q.r.URL.Query()
	}
	for k := range form {
		out[k] = form.Get(k)
	}
	return out
}

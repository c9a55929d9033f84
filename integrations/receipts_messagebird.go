package integrations

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// messagebirdKinds maps the statuses of a MessageBird status report to
// receipts; scheduled and buffered (still on its way) change nothing.
var messagebirdKinds = map[string]string{"sent": ReceiptSent, "delivered": ReceiptDelivered,
	"delivery_failed": ReceiptFailed, "expired": ReceiptFailed}

// messagebirdClaims are the claims of a MessageBird-Signature-JWT: the
// registered ones, the hex SHA-256 of the full URL MessageBird called, and
// of the body when there is one.
type messagebirdClaims struct {
	jwt.RegisteredClaims
	URLHash     string `json:"url_hash"`
	PayloadHash string `json:"payload_hash,omitempty"`
}

// readMessageBird reads a MessageBird SMS status report: a GET whose query
// carries the report, signed with a JWT in the MessageBird-Signature-JWT
// header. The JWT is an HMAC (HS256, HS384 or HS512) under the account's
// signing key, issued by "MessageBird", unexpired, with an id, and its
// url_hash is the hash of the URL called, query included, so the report
// cannot be altered; a body, when MessageBird sends one, is covered by
// payload_hash. Its id is single-use: a token taken before is a replay.
// Its nbf (or iat) must be within the tolerance of now, as every signed
// timestamp is, so that a token outlives the replay record of its id by
// no more than that whatever its exp.
func readMessageBird(ctx context.Context, s *Store, q receiptRequest) ([]Receipt, error) {
	claims, ok := messagebirdVerified(q)
	if !ok {
		return nil, errUnverified
	}
	token := "messagebird:" + claims.ID
	switch seen, err := s.replayed(ctx, q.in.ID, token, q.now); {
	case err != nil:
		return nil, err
	case seen:
		return nil, errUnverified
	}
	*q.token = token
	report := q.r.URL.Query()
	if len(q.body) > 0 {
		if form := formOf(q); len(form) > 0 {
			report = form
		}
	}
	return messagebirdReceipts(report), nil
}

// messagebirdVerified checks q's MessageBird-Signature-JWT and returns its
// claims.
func messagebirdVerified(q receiptRequest) (messagebirdClaims, bool) {
	key := q.signingKey()
	raw := q.r.Header.Get("MessageBird-Signature-JWT")
	var claims messagebirdClaims
	if key == "" || raw == "" {
		return claims, false
	}
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return []byte(key), nil },
		jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}), jwt.WithIssuer("MessageBird"),
		jwt.WithExpirationRequired(), jwt.WithLeeway(time.Second), jwt.WithTimeFunc(func() time.Time { return q.now }))
	if err != nil || claims.ID == "" || !freshClaims(claims, q.now) || !sameHash(claims.URLHash, []byte(q.url)) {
		return claims, false
	}
	if len(q.body) == 0 {
		return claims, claims.PayloadHash == ""
	}
	return claims, sameHash(claims.PayloadHash, q.body)
}

// freshClaims reports whether the token's nbf, or iat without one, is
// within the tolerance of now.
func freshClaims(c messagebirdClaims, now time.Time) bool {
	at := c.NotBefore
	if at == nil {
		at = c.IssuedAt
	}
	if at == nil {
		return false
	}
	d := now.Sub(at.Time)
	return d < signatureTolerance && d > -signatureTolerance
}

// sameHash reports whether claimed is the hex SHA-256 of data.
func sameHash(claimed string, data []byte) bool {
	sum := sha256.Sum256(data)
	return claimed != "" && subtle.ConstantTimeCompare([]byte(claimed), []byte(hex.EncodeToString(sum[:]))) == 1
}

// messagebirdReceipts reads a status report's parameters: reference is
// Herald's message id, which the send set, id MessageBird's.
func messagebirdReceipts(report url.Values) []Receipt {
	status := report.Get("status")
	kind := messagebirdKinds[status]
	if kind == "" {
		return nil
	}
	why := ""
	if kind == ReceiptFailed {
		why = "MessageBird " + status
		if code := report.Get("statusErrorCode"); code != "" {
			why += ", error " + code
		}
		if reason := report.Get("statusReason"); reason != "" {
			why += ": " + reason
		}
	}
	at, _ := time.Parse(time.RFC3339, report.Get("statusDatetime"))
	return []Receipt{{MessageID: report.Get("reference"), ProviderMessageID: report.Get("id"), Event: kind,
		ProviderStatus: status, Error: why, At: at, Raw: report.Encode()}}
}

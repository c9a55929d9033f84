package provider

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// signedSMSProviders are the SMS APIs that need more than a header: Azure
// Communication Services signs each request with HMAC-SHA256, RingCentral
// exchanges a JWT for an access token first.
var signedSMSProviders = map[string]spec{
	// azure-sms: accessKey is the resource's connection string,
	// "endpoint=https://….communication.azure.com/;accesskey=…".
	"azure-sms": {channel: "sms", required: []string{"accessKey", "from"}, shape: azureShape, build: func(c Credentials, d Deps) (Sender, error) {
		endpoint, key, err := azureConnection(c)
		if err != nil {
			return nil, Permanent("accessKey: %v", err)
		}
		return &httpSender{creds: c, deps: d, s: spec{id: "value.0.messageId", send: func(c Credentials, m Message) (*call, error) {
			first := time.Unix(idTime(m.ID), 0).UTC()
			return &call{url: endpoint + "/sms?api-version=2021-03-07",
				// A retried job repeats the request id and its first time,
				// so Azure sends once (docs/providers.md,
				// "Rules that hold for every provider").
				header: map[string]string{"Repeatability-Request-ID": uuid.NewSHA1(uuid.NameSpaceOID, []byte(m.ID)).String(),
					"Repeatability-First-Sent": first.Format(http.TimeFormat)},
				json: map[string]any{"from": sender(c, m), "smsRecipients": []any{map[string]string{"to": m.To}}, "message": m.Content},
				sign: azureSign(key, d)}, nil
		}, failed: func(r *reply, _ Message) error {
			if ok := pick(r.doc, "value.0.successful"); ok == "false" {
				return &Error{Msg: "provider refused: " + pick(r.doc, "value.0.errorMessage")}
			}
			return nil
		}}}, nil
	}},
	// ring-central: clientId and secretKey are the app's, token the JWT
	// credential; secure selects the sandbox.
	"ring-central": {channel: "sms", required: []string{"clientId", "secretKey", "token", "from"}, build: func(c Credentials, d Deps) (Sender, error) {
		server := origin(c, "https://platform.ringcentral.com")
		if on(c.Secure) {
			server = origin(c, "https://platform.devtest.ringcentral.com")
		}
		return &ringCentral{c: c, d: d, server: server}, nil
	}},
}

// azureConnection splits the connection string.
func azureConnection(c Credentials) (endpoint string, key []byte, err error) {
	for _, part := range strings.Split(val(c.AccessKey), ";") {
		k, v, _ := strings.Cut(part, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "endpoint":
			endpoint = strings.TrimRight(strings.TrimSpace(v), "/")
		case "accesskey":
			// The key is base64 and may end in "=": keep everything after the first "=".
			_, raw, _ := strings.Cut(part, "=")
			key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
		}
	}
	switch {
	case err != nil:
		return "", nil, errors.New("accesskey is not base64")
	case endpoint == "" || len(key) == 0:
		return "", nil, errors.New("must be the connection string endpoint=…;accesskey=…")
	}
	return origin(c, endpoint), key, nil
}

func azureShape(c Credentials) map[string]string {
	if val(c.AccessKey) == "" {
		return nil
	}
	if _, _, err := azureConnection(c); err != nil {
		return map[string]string{"accessKey": err.Error()}
	}
	return nil
}

// azureSign is Azure Communication Services' HMAC-SHA256 request signature.
func azureSign(key []byte, d Deps) func(*http.Request, []byte) error {
	return func(req *http.Request, body []byte) error {
		sum := sha256.Sum256(body)
		hash := base64.StdEncoding.EncodeToString(sum[:])
		date := d.now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-content-sha256", hash)
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(req.Method + "\n" + req.URL.RequestURI() + "\n" + date + ";" + req.URL.Host + ";" + hash))
		req.Header.Set("Authorization", "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="+
			base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		return nil
	}
}

// idTime is the creation second an id carries in its first four bytes
// (platform ids are ObjectIds); 0 for anything else.
func idTime(id string) int64 {
	if len(id) < 8 {
		return 0
	}
	b, err := hex.DecodeString(id[:8])
	if err != nil {
		return 0
	}
	return int64(b[0])<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3])
}

// ringCentral gets an access token with the JWT grant, cached until a
// minute before it expires, then sends.
type ringCentral struct {
	c      Credentials
	d      Deps
	server string
}

var ringCentralTokens sync.Map // client id + JWT → cachedToken (at = expiry)

func (rc *ringCentral) token(ctx context.Context) (string, error) {
	key := val(rc.c.ClientID) + "\x00" + val(rc.c.Token)
	if v, ok := ringCentralTokens.Load(key); ok && rc.d.now().Before(v.(cachedToken).at) {
		return v.(cachedToken).token, nil
	}
	r, err := do(ctx, rc.d.Client, &call{url: rc.server + "/restapi/oauth/token", user: val(rc.c.ClientID), pass: val(rc.c.SecretKey),
		form: url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {val(rc.c.Token)}}})
	if err != nil {
		return "", err
	}
	tok := pick(r.doc, "access_token")
	if tok == "" {
		return "", &Error{Msg: "RingCentral gave no access token", Raw: string(r.body)}
	}
	secs, _ := strconv.Atoi(cmp.Or(pick(r.doc, "expires_in"), "3600"))
	ringCentralTokens.Store(key, cachedToken{tok, rc.d.now().Add(time.Duration(secs)*time.Second - time.Minute)})
	return tok, nil
}

func (rc *ringCentral) Send(ctx context.Context, m Message) (Result, error) {
	tok, err := rc.token(ctx)
	if err != nil {
		return Result{}, err
	}
	r, err := do(ctx, rc.d.Client, &call{url: rc.server + "/restapi/v1.0/account/~/extension/~/sms", header: bearer(tok),
		json: map[string]any{"from": map[string]string{"phoneNumber": sender(rc.c, m)}, "to": []any{map[string]string{"phoneNumber": m.To}}, "text": m.Content}})
	if err != nil {
		return Result{}, err
	}
	return Result{ID: r.read("id"), Date: r.read("creationTime"), Raw: string(r.body)}, nil
}

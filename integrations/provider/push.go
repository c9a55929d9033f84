package provider

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	oauthjwt "golang.org/x/oauth2/jwt"
)

// pushProviders are the push APIs of the "Provider ids" and
// "Channel credentials" sections of docs/api.md (docs/providers.md, "Push").
// A token a provider calls dead is reported in Result.DeadTokens.
var pushProviders = map[string]spec{
	"fcm": {channel: "push", required: []string{"serviceAccount"}, build: newFCM, shape: fcmShape, check: func(ctx context.Context, c Credentials, d Deps) error {
		cfg, _, err := fcmConfig(c)
		if err != nil {
			return Permanent("serviceAccount: %v", err)
		}
		_, err = cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, d.Client)).Token()
		if err != nil {
			return Permanent("token exchange failed: %v", oauthText(err))
		}
		return nil
	}},
	"apns": {channel: "push", required: []string{"secretKey", "apiKey", "projectName", "applicationId"}, build: newAPNs, shape: apnsShape},
	"expo": {channel: "push", build: func(c Credentials, d Deps) (Sender, error) { return &expo{c, d}, nil }},
	"one-signal": {channel: "push", required: []string{"applicationId", "apiKey"}, id: "id", batch: 2000, send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"app_id": val(c.ApplicationID), "include_player_ids": m.DeviceTokens, "headings": map[string]string{"en": m.Title},
			"contents": map[string]string{"en": m.Content}, "data": payloadObject(m),
			// OneSignal takes a UUID: one derived from Herald's message id
			// is the same on every retry of the job.
			"idempotency_key": uuid.NewSHA1(uuid.NameSpaceOID, []byte(m.ID)).String()}
		return &call{url: origin(c, "https://onesignal.com") + "/api/v1/notifications", header: map[string]string{"Authorization": oneSignalAuth(val(c.APIKey))}, json: body}, nil
	}, failed: oneSignalFailed, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://onesignal.com") + "/api/v1/apps/" + val(c.ApplicationID), header: map[string]string{"Authorization": oneSignalAuth(val(c.APIKey))}}
	})},
	// pushpad's device tokens are Pushpad uids.
	"pushpad": {channel: "push", required: []string{"apiKey", "applicationId"}, id: "id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://pushpad.xyz") + "/api/v1/projects/" + val(c.ApplicationID) + "/notifications",
			header: map[string]string{"Authorization": `Token token="` + val(c.APIKey) + `"`},
			json:   map[string]any{"notification": map[string]string{"body": m.Content, "title": m.Title}, "uids": m.DeviceTokens}}, nil
	}},
	// pusher-beams' device tokens are Beams user ids.
	"pusher-beams": {channel: "push", required: []string{"instanceId", "secretKey"}, id: "publishId", batch: 1000, send: func(c Credentials, m Message) (*call, error) {
		n := map[string]string{"title": m.Title, "body": m.Content}
		return &call{url: beamsOrigin(c) + "/publish_api/v1/instances/" + val(c.InstanceID) + "/publishes/users", header: bearer(val(c.SecretKey)),
			json: map[string]any{"users": m.DeviceTokens, "apns": map[string]any{"aps": map[string]any{"alert": n}},
				"fcm": map[string]any{"notification": n, "data": payloadObject(m)}, "web": map[string]any{"notification": n, "data": payloadObject(m)}}}, nil
	}},
	// appio's device tokens are citizens' fiscal codes.
	"appio": {channel: "push", required: []string{"apiKey"}, build: func(c Credentials, d Deps) (Sender, error) { return &appIO{c, d}, nil }},
}

type jwtConfig = oauthjwt.Config

func payloadObject(m Message) json.RawMessage {
	if len(m.Payload) == 0 || m.Payload[0] != '{' {
		return json.RawMessage("{}")
	}
	return m.Payload
}

// oneSignalAuth: newer OneSignal keys ("os_v2_…") use the Key scheme.
func oneSignalAuth(key string) string {
	if strings.HasPrefix(key, "os_v2_") {
		return "Key " + key
	}
	return "Basic " + key
}

// oneSignalFailed: a 200 may carry no id and an errors list or object;
// invalid player ids are dead tokens (docs/providers.md, "Push").
func oneSignalFailed(r *reply, m Message) error {
	var dead []string
	if ids, ok := pickAny(r.doc, "errors.invalid_player_ids").([]any); ok {
		for _, id := range ids {
			if s, ok := id.(string); ok {
				dead = append(dead, s)
			}
		}
	}
	if pick(r.doc, "id") != "" {
		if len(dead) > 0 {
			return &deadOnly{dead}
		}
		return nil
	}
	msg := pick(r.doc, "errors.0")
	if msg == "" {
		msg = pick(r.doc, "errors")
	}
	return &Error{Msg: "provider refused: " + cmp.Or(msg, "no notification id"), DeadTokens: dead}
}

// deadOnly is a success that names dead tokens (httpSender turns it into
// Result.DeadTokens).
type deadOnly struct{ tokens []string }

func (d *deadOnly) Error() string { return "dead tokens" }

func beamsOrigin(c Credentials) string {
	return origin(c, "https://"+val(c.InstanceID)+".pushnotifications.pusher.com")
}

// fcm sends one HTTP v1 request per token with an OAuth2 access token
// from the service account (golang.org/x/oauth2/google signs the JWT grant
// and caches the token until it nears expiry).
func newFCM(c Credentials, d Deps) (Sender, error) {
	cfg, project, err := fcmConfig(c)
	if err != nil {
		return nil, Permanent("serviceAccount: %v", err)
	}
	ts := fcmTokens(cfg, d.Client)
	return &httpSender{creds: c, deps: d, s: spec{batch: 1, id: "name", send: func(c Credentials, m Message) (*call, error) {
		tok, err := ts.Token()
		if err != nil {
			return nil, &Error{Msg: "FCM token exchange failed: " + oauthText(err), Retryable: !isAuthRefusal(err)}
		}
		msg := map[string]any{"token": m.DeviceTokens[0], "notification": map[string]string{"title": m.Title, "body": m.Content}}
		if data := stringData(m.Payload); len(data) > 0 {
			msg["data"] = data
		}
		return &call{url: origin(c, "https://fcm.googleapis.com") + "/v1/projects/" + project + "/messages:send",
			header: bearer(tok.AccessToken), json: map[string]any{"message": msg}}, nil
	}, dead: func(r *reply) bool {
		return r.status == http.StatusNotFound || strings.Contains(string(r.body), "UNREGISTERED")
	}}}, nil
}

// fcmConfig reads the service-account JSON.
func fcmConfig(c Credentials) (*jwtConfig, string, error) {
	raw := []byte(cmp.Or(val(c.ServiceAccount), val(c.User)))
	var sa struct {
		ProjectID   string `json:"project_id"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal(raw, &sa); err != nil {
		return nil, "", errors.New("must be the service account's JSON key")
	}
	if sa.ProjectID == "" || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return nil, "", errors.New("must have project_id, client_email and private_key")
	}
	block, _ := pem.Decode([]byte(sa.PrivateKey))
	if block == nil {
		return nil, "", errors.New("private_key is not a PEM key")
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return nil, "", errors.New("private_key does not parse as an RSA key")
		}
	}
	cfg, err := google.JWTConfigFromJSON(raw, "https://www.googleapis.com/auth/firebase.messaging")
	if err != nil {
		return nil, "", err
	}
	return cfg, sa.ProjectID, nil
}

func fcmShape(c Credentials) map[string]string {
	if _, _, err := fcmConfig(c); err != nil {
		return map[string]string{"serviceAccount": err.Error()}
	}
	return nil
}

// fcmTokenSources share access tokens between sends of one service
// account: a token lasts an hour, and a sender is built per delivery.
var fcmTokenSources sync.Map // key → oauth2.TokenSource

func fcmTokens(cfg *jwtConfig, client *http.Client) oauth2.TokenSource {
	sum := sha256.Sum256([]byte(cfg.Email + "\x00" + cfg.TokenURL + "\x00" + string(cfg.PrivateKey)))
	key := hex.EncodeToString(sum[:])
	if ts, ok := fcmTokenSources.Load(key); ok {
		return ts.(oauth2.TokenSource)
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	ts, _ := fcmTokenSources.LoadOrStore(key, oauth2.ReuseTokenSource(nil, cfg.TokenSource(ctx)))
	return ts.(oauth2.TokenSource)
}

// isAuthRefusal: the token endpoint refused the key (a 4xx), which a
// retry will not change.
func isAuthRefusal(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 && re.Response.StatusCode != 429
}

func oauthText(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return cmp.Or(re.ErrorDescription, re.ErrorCode, truncate(string(re.Body), 300))
	}
	return errText(err)
}

// stringData is the trigger payload as FCM data: every value a string.
func stringData(payload json.RawMessage) map[string]string {
	var p map[string]any
	if json.Unmarshal(payload, &p) != nil || len(p) == 0 {
		return nil
	}
	out := make(map[string]string, len(p))
	for k, v := range p {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}

// apns sends one HTTP/2 request per token, authenticated by an ES256
// provider token (golang-jwt) reused for 50 minutes: Apple refuses tokens
// renewed more often than every 20 minutes or older than an hour.
type apns struct {
	c    Credentials
	d    Deps
	key  *ecdsa.PrivateKey
	host string
}

func newAPNs(c Credentials, d Deps) (Sender, error) {
	key, err := jwt.ParseECPrivateKeyFromPEM([]byte(val(c.SecretKey)))
	if err != nil {
		return nil, Permanent("secretKey: not an APNs .p8 key: %v", err)
	}
	host := "https://api.sandbox.push.apple.com"
	if on(c.Secure) {
		host = "https://api.push.apple.com"
	}
	a := &apns{c: c, d: d, key: key, host: origin(c, host)}
	return &httpSender{creds: c, deps: d, s: spec{batch: 1, id: "header:apns-id", send: a.call,
		dead: func(r *reply) bool { return r.status == http.StatusGone }}}, nil
}

func apnsShape(c Credentials) map[string]string {
	if val(c.SecretKey) == "" {
		return nil
	}
	if _, err := jwt.ParseECPrivateKeyFromPEM([]byte(val(c.SecretKey))); err != nil {
		return map[string]string{"secretKey": "must be the APNs .p8 private key (PEM): " + err.Error()}
	}
	return nil
}

func (a *apns) call(c Credentials, m Message) (*call, error) {
	tok, err := apnsToken(a.key, val(c.APIKey), val(c.ProjectName), a.d.now())
	if err != nil {
		return nil, Permanent("sign APNs token: %v", err)
	}
	var custom map[string]any
	json.Unmarshal(payloadObject(m), &custom)
	if custom == nil {
		custom = map[string]any{}
	}
	custom["aps"] = map[string]any{"alert": map[string]string{"title": m.Title, "body": m.Content}}
	return &call{url: a.host + "/3/device/" + url.PathEscape(m.DeviceTokens[0]), json: custom, header: map[string]string{
		"authorization": "bearer " + tok, "apns-topic": val(c.ApplicationID), "apns-push-type": "alert"}}, nil
}

var apnsTokens sync.Map // kid + team → apnsToken

type cachedToken struct {
	token string
	at    time.Time
}

func apnsToken(key *ecdsa.PrivateKey, keyID, teamID string, now time.Time) (string, error) {
	k := keyID + "\x00" + teamID
	if v, ok := apnsTokens.Load(k); ok {
		if t := v.(cachedToken); now.Sub(t.at) < 50*time.Minute && !now.Before(t.at) {
			return t.token, nil
		}
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": teamID, "iat": now.Unix()})
	t.Header["kid"] = keyID
	s, err := t.SignedString(key)
	if err != nil {
		return "", err
	}
	apnsTokens.Store(k, cachedToken{s, now})
	return s, nil
}

// expo sends up to 100 tokens a request, one ticket each
// (docs/providers.md, "Push").
type expo struct {
	c Credentials
	d Deps
}

func (e *expo) Send(ctx context.Context, m Message) (Result, error) {
	var out Result
	var first error
	sent, failed := 0, 0
	var ids, raws []string
	for start := 0; start < len(m.DeviceTokens); start += 100 {
		batch := m.DeviceTokens[start:min(start+100, len(m.DeviceTokens))]
		msgs := make([]any, 0, len(batch))
		for _, t := range batch {
			msgs = append(msgs, map[string]any{"to": t, "title": m.Title, "body": m.Content, "data": payloadObject(m)})
		}
		cl := &call{url: origin(e.c, "https://exp.host") + "/--/api/v2/push/send", json: msgs, header: map[string]string{}}
		if k := val(e.c.APIKey); k != "" {
			cl.header = bearer(k)
		}
		r, err := do(ctx, e.d.Client, cl)
		if err != nil {
			failed += len(batch)
			first = cmp.Or(first, err)
			continue
		}
		raws = append(raws, string(r.body))
		tickets, _ := pickAny(r.doc, "data").([]any)
		for i, tok := range batch {
			var t any
			if i < len(tickets) {
				t = tickets[i]
			}
			switch {
			case pick(t, "status") == "ok":
				sent++
				ids = append(ids, pick(t, "id"))
			case pick(t, "details.error") == "DeviceNotRegistered":
				out.DeadTokens = append(out.DeadTokens, tok)
			default:
				failed++
				first = cmp.Or(first, error(&Error{Msg: "provider refused: " + cmp.Or(pick(t, "message"), "no ticket"),
					Retryable: pick(t, "details.error") == "MessageRateExceeded"}))
			}
		}
	}
	out.ID, out.Raw = strings.Join(ids, ","), truncate(strings.Join(raws, "\n"), MaxReply)
	switch {
	case sent == 0:
		if first == nil {
			first = Permanent("every device token is unregistered")
		}
		var pe *Error
		if errors.As(first, &pe) {
			cp := *pe
			cp.DeadTokens, cp.Raw = out.DeadTokens, out.Raw
			return out, &cp
		}
		return out, first
	case failed > 0:
		return out, &Partial{Sent: sent, Of: len(m.DeviceTokens), Err: first, Result: out}
	}
	return out, nil
}

// appIO checks each citizen's profile, then sends (docs/providers.md, "Push").
type appIO struct {
	c Credentials
	d Deps
}

func (a *appIO) Send(ctx context.Context, m Message) (Result, error) {
	base := origin(a.c, cmp.Or(strings.TrimRight(val(a.c.AppIOBaseURL), "/"), "https://api.io.italia.it/api/v1"))
	h := map[string]string{"Ocp-Apim-Subscription-Key": val(a.c.APIKey)}
	return eachBatch(ctx, m, 1, func(ctx context.Context, m Message) (Result, error) {
		code := m.DeviceTokens[0]
		r, err := do(ctx, a.d.Client, &call{url: base + "/profiles", header: h, json: map[string]string{"fiscal_code": code}})
		if err != nil {
			return Result{}, err
		}
		if pick(r.doc, "sender_allowed") != "true" {
			return Result{}, &Error{Msg: "the citizen does not accept messages from this service", Raw: string(r.body)}
		}
		r, err = do(ctx, a.d.Client, &call{url: base + "/messages", header: h, json: map[string]any{"fiscal_code": code,
			"content": map[string]string{"subject": m.Title, "markdown": m.Content}}})
		if err != nil {
			return Result{}, err
		}
		return Result{ID: pick(r.doc, "id"), Raw: string(r.body)}, nil
	})
}

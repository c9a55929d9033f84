package integrations_test

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/matryer/is"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/herald-notify/herald/app/apptest"
)

// providerDouble answers every send of a provider with the message id
// each provider's sender reads (a header, or a field of its own name).
func providerDouble(t *testing.T, id string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Message-Id", id)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "MessageId": id, "MessageID": id, "sid": id,
			"message_uuid": []string{id}, "data": map[string]string{"id": id},
			"messages": []map[string]string{{"message-id": id, "status": "0"}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// receipt is one provider's callback as the provider builds and signs it.
type receipt struct {
	method      string // "" for POST
	query       string // the query of the URL called, the receipt itself for a GET
	contentType string
	body        string
	header      http.Header
	basicAuth   [2]string
}

// receiptCase is one provider: how its integration is set up, the
// callback it sends for its message, how it signs it, and what the
// callback does.
type receiptCase struct {
	provider, channel string
	credentials       map[string]any
	key               string                                        // the integration's inbound signing key
	sign              func(t *testing.T, url, pid string) receipt   // a correctly signed callback
	forge             func(r *receipt)                              // what a forger changes
	unsign            func(r *receipt)                              // takes the signature off; nil: the headers and basic auth
	alsoForged        []func(t *testing.T, url, pid string) receipt // more callbacks signed wrongly
	event             string                                        // the outbound event raised
	status            string                                        // the message's status after
	delivered, seen   bool                                          // whether it gains a delivery time, or is seen
}

func TestReceipts_SignedMovesTheMessageForgedChangesNothing(t *testing.T) {
	sendgridKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sendgridPub, _ := x509.MarshalPKIXPublicKey(&sendgridKey.PublicKey)
	telnyxPub, telnyxKey, _ := ed25519.GenerateKey(rand.Reader)
	resendSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend-signing-secret-of-32bytes"))
	now := func() string { return strconv.FormatInt(time.Now().Unix(), 10) }
	email := func(extra map[string]any) map[string]any {
		c := map[string]any{"apiKey": "key", "from": "herald@example.com"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	sms := map[string]any{"accountSid": "AC1", "token": "auth-token", "from": "+15550000000"}
	flipLast := func(r *receipt) { r.body = strings.Replace(r.body, "msg", "msh", 1) }

	for _, tc := range []receiptCase{
		{provider: "sendgrid", channel: "email", credentials: email(nil), key: base64.StdEncoding.EncodeToString(sendgridPub),
			sign: func(t *testing.T, _, pid string) receipt {
				ts := now()
				body := `[{"event":"bounce","sg_message_id":"` + pid + `.filter0001","timestamp":` + ts + `,"reason":"550 no such user"}]`
				sum := sha256.Sum256([]byte(ts + body))
				sig, _ := ecdsa.SignASN1(rand.Reader, sendgridKey, sum[:])
				return receipt{contentType: "application/json", body: body, header: http.Header{
					"X-Twilio-Email-Event-Webhook-Signature": {base64.StdEncoding.EncodeToString(sig)},
					"X-Twilio-Email-Event-Webhook-Timestamp": {ts}}}
			}, forge: flipLast, event: "message.bounced", status: "error"},
		{provider: "mailgun", channel: "email", credentials: email(map[string]any{"domain": "mg.example.com"}), key: "mailgun-signing-key",
			sign: func(t *testing.T, _, pid string) receipt {
				ts, token := now(), "token-123"
				mac := hmac.New(sha256.New, []byte("mailgun-signing-key"))
				mac.Write([]byte(ts + token))
				body := `{"signature":{"timestamp":"` + ts + `","token":"` + token + `","signature":"` + hex.EncodeToString(mac.Sum(nil)) +
					`"},"event-data":{"event":"delivered","timestamp":` + ts + `,"message":{"headers":{"message-id":"` + strings.Trim(pid, "<>") + `"}}}}`
				return receipt{contentType: "application/json", body: body}
			}, forge: func(r *receipt) { r.body = strings.Replace(r.body, `"signature":"`, `"signature":"0`, 1) },
			unsign: func(r *receipt) {
				var doc map[string]any
				json.Unmarshal([]byte(r.body), &doc)
				delete(doc, "signature")
				b, _ := json.Marshal(doc)
				r.body = string(b)
			},
			event: "message.delivered", status: "sent", delivered: true},
		{provider: "postmark", channel: "email", credentials: email(nil), key: "herald:s3cret",
			sign: func(t *testing.T, _, pid string) receipt {
				return receipt{contentType: "application/json", basicAuth: [2]string{"herald", "s3cret"},
					body: `{"RecordType":"Open","MessageID":"` + pid + `","ReceivedAt":"2026-01-02T03:04:05Z"}`}
			}, forge: func(r *receipt) { r.basicAuth[1] = "guess" }, event: "message.opened", status: "sent", seen: true},
		{provider: "resend", channel: "email", credentials: email(nil), key: resendSecret,
			sign: func(t *testing.T, _, pid string) receipt {
				body := `{"type":"email.clicked","created_at":"2026-01-02T03:04:05Z","data":{"email_id":"` + pid + `"}}`
				wh, _ := standardwebhooks.NewWebhook(resendSecret)
				at := time.Now()
				sig, _ := wh.Sign("msg_1", at, []byte(body))
				return receipt{contentType: "application/json", body: body, header: http.Header{
					"Svix-Id": {"msg_1"}, "Svix-Timestamp": {strconv.FormatInt(at.Unix(), 10)}, "Svix-Signature": {sig}}}
			}, forge: flipLast, event: "message.clicked", status: "sent", seen: true},
		{provider: "twilio", channel: "sms", credentials: sms,
			sign: func(t *testing.T, u, pid string) receipt {
				form := url.Values{"MessageSid": {pid}, "MessageStatus": {"delivered"}, "AccountSid": {"AC1"}}
				return receipt{contentType: "application/x-www-form-urlencoded", body: form.Encode(),
					header: http.Header{"X-Twilio-Signature": {twilioSignature("auth-token", u, form)}}}
			}, forge: func(r *receipt) { r.body = strings.Replace(r.body, "delivered", "failed", 1) },
			event: "message.delivered", status: "sent", delivered: true},
		{provider: "plivo", channel: "sms", credentials: sms,
			sign: func(t *testing.T, u, pid string) receipt {
				mac := hmac.New(sha256.New, []byte("auth-token"))
				mac.Write([]byte(u + "nonce-42"))
				form := url.Values{"MessageUUID": {pid}, "Status": {"failed"}, "ErrorCode": {"420"}}
				return receipt{contentType: "application/x-www-form-urlencoded", body: form.Encode(), header: http.Header{
					"X-Plivo-Signature-V2": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}, "X-Plivo-Signature-V2-Nonce": {"nonce-42"}}}
			}, forge: func(r *receipt) { r.header.Set("X-Plivo-Signature-V2-Nonce", "nonce-43") }, event: "message.failed", status: "error"},
		{provider: "telnyx", channel: "sms", credentials: map[string]any{"apiKey": "key", "from": "+15550000000"},
			key: base64.StdEncoding.EncodeToString(telnyxPub),
			sign: func(t *testing.T, _, pid string) receipt {
				ts := now()
				body := `{"data":{"event_type":"message.finalized","payload":{"id":"` + pid + `","to":[{"status":"delivered"}]}}}`
				sig := ed25519.Sign(telnyxKey, []byte(ts+"|"+body))
				return receipt{contentType: "application/json", body: body, header: http.Header{
					"Telnyx-Signature-Ed25519": {base64.StdEncoding.EncodeToString(sig)}, "Telnyx-Timestamp": {ts}}}
			}, forge: flipLast, event: "message.delivered", status: "sent", delivered: true},
		{provider: "nexmo", channel: "sms", credentials: map[string]any{"apiKey": "key", "secretKey": "secret", "from": "+15550000000"},
			key: "vonage-signature-secret",
			sign: func(t *testing.T, _, pid string) receipt {
				form := url.Values{"messageId": {pid}, "status": {"delivered"}, "msisdn": {"15551234567"}, "to": {"Herald"},
					"err-code": {"0"}, "message-timestamp": {"2026-01-02 03:04:05"}, "timestamp": {now()}, "nonce": {"n-1"}}
				form.Set("sig", vonageSignature("vonage-signature-secret", form))
				return receipt{contentType: "application/x-www-form-urlencoded", body: form.Encode()}
			}, forge: func(r *receipt) { r.body = strings.Replace(r.body, "delivered", "failed", 1) },
			unsign: func(r *receipt) {
				form, _ := url.ParseQuery(r.body)
				form.Del("sig")
				r.body = form.Encode()
			},
			event: "message.delivered", status: "sent", delivered: true},
		{provider: "bandwidth", channel: "sms", credentials: map[string]any{"user": "u", "password": "p", "accountSid": "9900000",
			"applicationId": "app-1", "from": "+15550000000"}, key: "callback-user:callback-pass",
			sign: func(t *testing.T, _, pid string) receipt {
				body := `[{"type":"message-failed","time":"2026-01-02T03:04:05.000Z","description":"rejected-unallocated-from-number",
					"errorCode":4720,"to":"+15551234567","message":{"id":"` + pid + `","direction":"out","tag":"not-a-herald-id"}}]`
				return receipt{contentType: "application/json", body: body, basicAuth: [2]string{"callback-user", "callback-pass"}}
			}, forge: func(r *receipt) { r.basicAuth[1] = "guess" }, event: "message.failed", status: "error"},
		{provider: "messagebird", channel: "sms", credentials: map[string]any{"accessKey": "key", "from": "+15550000000"},
			key: "messagebird-signing-key",
			sign: func(t *testing.T, u, pid string) receipt {
				return messagebirdReport("messagebird-signing-key", u, pid, time.Now(), "")
			}, forge: func(r *receipt) { r.query = strings.Replace(r.query, "delivered", "delivery_failed", 1) },
			alsoForged: []func(t *testing.T, u, pid string) receipt{
				func(t *testing.T, u, pid string) receipt { // under another key
					return messagebirdReport("not-the-signing-key", u, pid, time.Now(), "")
				},
				func(t *testing.T, u, pid string) receipt { // expired
					return messagebirdReport("messagebird-signing-key", u, pid, time.Now().Add(-time.Hour), "")
				},
				func(t *testing.T, u, pid string) receipt { // url_hash of another URL
					return messagebirdReport("messagebird-signing-key", u, pid, time.Now(), "https://elsewhere.example.com/webhook")
				},
			},
			event: "message.delivered", status: "sent", delivered: true},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			runReceiptCase(t, tc)
		})
	}
}

// messagebirdReport is a MessageBird status report as MessageBird sends
// it: a GET whose query is the report, with a MessageBird-Signature-JWT
// (HS256 under key, issued at at, valid five minutes) whose url_hash is
// the SHA-256 of the URL called, or of signedURL when set.
func messagebirdReport(key, u, pid string, at time.Time, signedURL string) receipt {
	query := url.Values{"id": {pid}, "reference": {"ref"}, "recipient": {"15551234567"}, "status": {"delivered"},
		"statusDatetime": {at.UTC().Format(time.RFC3339)}}.Encode()
	full := u + "?" + query
	if signedURL != "" {
		full = signedURL
	}
	return receipt{method: "GET", query: query, header: http.Header{
		"Messagebird-Signature-Jwt": {messagebirdToken(key, full, at, at.Add(5*time.Minute))}}}
}

// messagebirdToken is a MessageBird-Signature-JWT for a bodiless request
// to signedURL, issued at at, expiring at exp.
func messagebirdToken(key, signedURL string, at, exp time.Time) string {
	sum := sha256.Sum256([]byte(signedURL))
	token, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "MessageBird", "iat": at.Unix(),
		"nbf": at.Unix(), "exp": exp.Unix(), "jti": "jti-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		"url_hash": hex.EncodeToString(sum[:])}).SignedString([]byte(key))
	return token
}

// twilioSignature signs a form as Twilio documents: HMAC-SHA1 of the URL
// then each parameter's name and value, sorted by name.
func twilioSignature(token, u string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := u
	for _, k := range keys {
		s += k + form.Get(k)
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// vonageSignature signs a form as Vonage documents for its default
// method, "MD5 hash": each parameter sorted by name as &name=value, & and
// = in values written as _, the signature secret appended, hashed.
func vonageSignature(secret string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += "&" + k + "=" + strings.NewReplacer("&", "_", "=", "_").Replace(form.Get(k))
	}
	sum := md5.Sum([]byte(s + secret))
	return hex.EncodeToString(sum[:])
}

// sentMessage is a message as GET /v1/messages lists it.
type sentMessage struct {
	ID          string   `json:"_id"`
	Status      string   `json:"status"`
	Seen        bool     `json:"seen"`
	DeliveredAt []string `json:"deliveredAt"`
	ErrorText   string   `json:"errorText"`
}

// hookReceiver is an outbound webhook endpoint that keeps the event types
// it received.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	types []string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e struct {
			Type string `json:"type"`
		}
		json.NewDecoder(r.Body).Decode(&e)
		h.mu.Lock()
		h.types = append(h.types, e.Type)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.types...)
}

// setUpSend creates an active integration of the case's provider that
// sends through a double answering pid, a workflow of one step of its
// channel, and a sent message; it returns the integration's _id and the
// message.
func setUpSend(t *testing.T, srv *apptest.Server, tc receiptCase, pid string) (string, sentMessage) {
	is := is.New(t)
	creds := map[string]any{"baseUrl": providerDouble(t, pid).URL}
	for k, v := range tc.credentials {
		creds[k] = v
	}
	body, _ := json.Marshal(map[string]any{"providerId": tc.provider, "channel": tc.channel, "credentials": creds,
		"active": true, "check": false, "configurations": map[string]any{"inboundWebhookEnabled": true, "inboundWebhookSigningKey": tc.key}})
	var in struct {
		ID string `json:"_id"`
	}
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", string(body)).Decode(t, &in)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Receipt","workflowId":"receipt","active":true,
		"steps":[{"name":"S","type":"`+tc.channel+`","controlValues":{"subject":"Hi","body":"Hello"}}]}`)
	apptest.Trigger(t, srv, `{"name":"receipt","to":{"subscriberId":"ada","email":"ada@example.com","phone":"+15551234567"}}`)
	var list struct {
		Data []sentMessage `json:"data"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?channel="+tc.channel, "", 200).Decode(t, &list)
		if len(list.Data) == 1 && len(list.Data[0].DeliveredAt) == 1 { // sent, and its send recorded
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	is.Equal(len(list.Data), 1)           // the message was sent
	is.Equal(list.Data[0].Status, "sent") // through the double
	return in.ID, list.Data[0]
}

func runReceiptCase(t *testing.T, tc receiptCase) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	hooks := newHookReceiver(t)
	apptest.MustCreate(t, srv.Dev, "/v2/webhooks/endpoints", `{"url":"`+hooks.URL+`"}`)
	pid := "<" + tc.provider + "-msg-1>"
	integrationID, before := setUpSend(t, srv, tc, pid)

	var shown struct {
		InboundWebhookURL string `json:"inboundWebhookUrl"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v1/integrations/"+integrationID, "", 200).Decode(t, &shown)
	path := "/webhooks/organizations/" + srv.App.Development.OrganizationID + "/environments/" +
		srv.App.Development.ID + "/" + tc.channel + "/" + integrationID
	is.Equal(shown.InboundWebhookURL, srv.URL+path) // the integration shows where its receipts go

	post := func(r receipt) int {
		u := srv.URL + path
		if r.query != "" {
			u += "?" + r.query
		}
		req, _ := http.NewRequest(cmp.Or(r.method, "POST"), u, strings.NewReader(r.body))
		req.Header.Set("Content-Type", r.contentType)
		for k, v := range r.header {
			req.Header[k] = v
		}
		if r.basicAuth[0] != "" {
			req.SetBasicAuth(r.basicAuth[0], r.basicAuth[1])
		}
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err) // the receipt is posted
		res.Body.Close()
		return res.StatusCode
	}
	message := func() sentMessage {
		var list struct {
			Data []sentMessage `json:"data"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?channel="+tc.channel, "", 200).Decode(t, &list)
		return list.Data[0]
	}

	forged := tc.sign(t, srv.URL+path, pid)
	tc.forge(&forged)
	unsigned := tc.sign(t, srv.URL+path, pid)
	unsigned.header, unsigned.basicAuth = nil, [2]string{}
	if tc.unsign != nil {
		tc.unsign(&unsigned)
	}
	is.Equal(post(forged), 401)   // a forged receipt is refused
	is.Equal(post(unsigned), 401) // and an unsigned one
	for _, f := range tc.alsoForged {
		is.Equal(post(f(t, srv.URL+path, pid)), 401) // and each other forgery
	}
	if signed := tc.sign(t, srv.URL+path, pid); signed.method == "" {
		signed.method = "GET"
		is.Equal(post(signed), 405) // a provider that posts is not read from a GET
	}
	is.Equal(message(), before) // and nothing changed

	is.Equal(post(tc.sign(t, srv.URL+path, pid)), 200) // a receipt signed as the provider signs is taken
	after := message()
	is.Equal(after.Status, tc.status)                                        // the message moves
	is.Equal(len(after.DeliveredAt) > len(before.DeliveredAt), tc.delivered) // a delivery receipt adds its time
	is.Equal(after.Seen, tc.seen)                                            // an open or a click marks it seen
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(hooks.got(), ","), tc.event) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	is.True(strings.Contains(strings.Join(hooks.got(), ","), tc.event)) // and the outbound event is raised

	var n struct {
		Jobs []struct {
			ExecutionDetails []struct {
				Source string `json:"source"`
				Detail string `json:"detail"`
			} `json:"executionDetails"`
		} `json:"jobs"`
	}
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications", "", 200).Decode(t, &list)
	is.Equal(len(list.Data), 1)                // the notification
	is.NoErr(json.Unmarshal(list.Data[0], &n)) // with its jobs
	found := false
	for _, j := range n.Jobs {
		for _, d := range j.ExecutionDetails {
			found = found || d.Source == "Webhook"
		}
	}
	is.True(found) // the receipt added an execution detail
}

// snsDouble is Amazon SNS as a receipt route meets it: a TLS server that
// serves the signing certificate and the subscription confirmation URL,
// and signs messages with the certificate's key as SNS does.
type snsDouble struct {
	*httptest.Server
	key       *rsa.PrivateKey
	mu        sync.Mutex
	confirmed int
}

func newSNSDouble(t *testing.T) *snsDouble {
	d := &snsDouble{}
	d.key, _ = rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &d.key.PublicKey, d.key)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	d.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cert.pem":
			w.Write(cert)
		case "/confirm":
			d.mu.Lock()
			d.confirmed++
			d.mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(d.Close)
	return d
}

// message builds an SNS message of type typ, signed (SignatureVersion 2)
// over the fields SNS signs.
func (d *snsDouble) message(typ, message string) string {
	m := map[string]string{"Type": typ, "MessageId": "sns-1", "TopicArn": "arn:aws:sns:us-east-1:1:ses", "Message": message,
		"Timestamp": time.Now().UTC().Format(time.RFC3339), "SignatureVersion": "2", "SigningCertURL": d.URL + "/cert.pem"}
	names := []string{"Message", "MessageId", "Timestamp", "TopicArn", "Type"}
	if typ == "SubscriptionConfirmation" {
		m["Token"], m["SubscribeURL"] = "tok", d.URL+"/confirm"
		names = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var text string
	for _, n := range names {
		text += n + "\n" + m[n] + "\n"
	}
	sum := sha256.Sum256([]byte(text))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, d.key, crypto.SHA256, sum[:])
	m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	b, _ := json.Marshal(m)
	return string(b)
}

func TestReceipts_SESThroughSNS(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	sns := newSNSDouble(t)
	srv.Herald.Integrations.TrustSNSHost("127.0.0.1", sns.Client())
	hooks := newHookReceiver(t)
	apptest.MustCreate(t, srv.Dev, "/v2/webhooks/endpoints", `{"url":"`+hooks.URL+`"}`)
	tc := receiptCase{provider: "ses", channel: "email", credentials: map[string]any{"apiKey": "AKIA", "secretKey": "s",
		"region": "us-east-1", "from": "herald@example.com"}}
	integrationID, before := setUpSend(t, srv, tc, "ses-msg-1")
	path := "/webhooks/organizations/" + srv.App.Development.OrganizationID + "/environments/" +
		srv.App.Development.ID + "/email/" + integrationID
	post := func(body string) int {
		res, err := http.Post(srv.URL+path, "text/plain; charset=UTF-8", strings.NewReader(body))
		is.NoErr(err) // posted as SNS posts
		res.Body.Close()
		return res.StatusCode
	}
	message := func() sentMessage {
		var list struct {
			Data []sentMessage `json:"data"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?channel=email", "", 200).Decode(t, &list)
		return list.Data[0]
	}

	is.Equal(post(sns.message("SubscriptionConfirmation", "You have chosen to subscribe")), 200) // a signed confirmation is taken
	is.Equal(sns.confirmed, 1)                                                                   // and confirmed at its SubscribeURL

	bounce := `{"eventType":"Bounce","mail":{"messageId":"ses-msg-1"},"bounce":{"bounceType":"Permanent",` +
		`"bouncedRecipients":[{"diagnosticCode":"smtp; 550 5.1.1 user unknown"}]}}`
	signed := sns.message("Notification", bounce)
	is.Equal(post(strings.Replace(signed, "Permanent", "Transient", 1)), 401) // a changed message fails its signature
	elsewhere := strings.Replace(signed, sns.URL+"/cert.pem", "https://example.com/cert.pem", 1)
	is.Equal(post(elsewhere), 401) // a certificate from anywhere but SNS is not trusted
	is.Equal(message(), before)    // nothing changed
	is.Equal(post(signed), 200)    // the signed bounce is taken
	after := message()
	is.Equal(after.Status, "error")                            // the message bounced
	is.True(strings.Contains(after.ErrorText, "user unknown")) // with the server's reason
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(hooks.got(), ","), "message.bounced") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	is.True(strings.Contains(strings.Join(hooks.got(), ","), "message.bounced")) // and message.bounced raised
}

package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"github.com/herald-notify/herald/platform/platformtest"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/matryer/is"
)

// sendCase is one provider's documented send call (docs/providers.md)
// and the answers its double gives.
type sendCase struct {
	id      string
	creds   map[string]string             // besides baseUrl, which points at the double
	msg     func(m *Message, base string) // adjusts the channel's default message
	method  string                        // default POST
	path    string
	auth    string            // "Header: value", or "sigv4:<service>", "apns"
	headers map[string]string // further request headers expected
	ctype   string            // the request's content type, without parameters
	fields  map[string]string // body (or query) path → value
	aux     map[string]string // other paths the double answers 200 with this body
	status  int               // the success status, default 200
	reply   string            // the success body
	replyH  map[string]string // the success headers
	wantID  string
	in200   string // a 2xx answer that is a failure; "" when the provider has none
	h2      bool   // HTTP/2 over TLS only (APNs)
	// dead is the answer to a request for the device token "tok-dead",
	// which the provider no longer knows ("" when it cannot say).
	dead       string
	deadStatus int
}

// request is what the double received.
type request struct {
	method, path string
	header       http.Header
	host         string
	query        url.Values
	body         []byte
	proto        int
}

// double is a provider's API: it records the last request outside aux and
// answers it with status, body and headers.
type double struct {
	*httptest.Server
	mu     sync.Mutex
	got    *request
	status int
	body   string
	header map[string]string
}

func newDouble(t *testing.T, tc sendCase) *double {
	d := &double{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if reply, ok := tc.aux[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, reply)
			return
		}
		if tc.dead != "" && strings.Contains(r.URL.Path+string(body), "tok-dead") {
			w.WriteHeader(cmpInt(tc.deadStatus, http.StatusOK))
			io.WriteString(w, tc.dead)
			return
		}
		d.mu.Lock()
		d.got = &request{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), host: r.Host, query: r.URL.Query(), body: body, proto: r.ProtoMajor}
		status, reply, hdr := d.status, d.body, d.header
		d.mu.Unlock()
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, reply)
	})
	if tc.h2 {
		d.Server = httptest.NewUnstartedServer(h)
		d.EnableHTTP2 = true
		d.StartTLS()
	} else {
		d.Server = httptest.NewServer(h)
	}
	t.Cleanup(d.Close)
	return d
}

func (d *double) answer(status int, body string, header map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.status, d.body, d.header = status, body, header
}

func (d *double) last() *request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got
}

// testKeys are the keys the FCM and APNs cases sign with.
var testKeys = sync.OnceValues(func() (*rsa.PrivateKey, *ecdsa.PrivateKey) {
	r, _ := rsa.GenerateKey(rand.Reader, 2048)
	e, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return r, e
})

func pemOf(kind string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}))
}

func serviceAccount(tokenURL string) string {
	r, _ := testKeys()
	der, _ := x509.MarshalPKCS8PrivateKey(r)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "client_email": "herald@proj.iam.gserviceaccount.com",
		"private_key": pemOf("PRIVATE KEY", der), "token_uri": tokenURL})
	return string(b)
}

func apnsKey() string {
	_, e := testKeys()
	der, _ := x509.MarshalPKCS8PrivateKey(e)
	return pemOf("PRIVATE KEY", der)
}

// defaultMessage is what each channel's case sends.
func defaultMessage(channel, base string) Message {
	m := Message{ID: "m1", Payload: json.RawMessage(`{"name":"Ada"}`)}
	switch channel {
	case "email":
		m.To, m.Subject, m.HTML, m.Text = "ada@example.com", "Hi", "<p>Hi</p>", "Hi"
	case "sms":
		m.To, m.Content = "+15550100", "Hi"
	case "push":
		m.DeviceTokens, m.Title, m.Content = []string{"tok-1"}, "T", "Hi"
	case "chat":
		m.WebhookURL, m.Content, m.ChatChannel, m.PhoneNumber = base+"/hook", "Hi", "room", "+15550100"
	}
	return m
}

// credentials are the case's, with baseUrl and {base} pointing at the
// double at base.
func (tc sendCase) credentials(base string) Credentials {
	var c Credentials
	c.Set("baseUrl", base)
	for k, v := range tc.creds {
		switch v {
		case "{serviceAccount}":
			v = serviceAccount(base + "/token")
		case "{p8}":
			v = apnsKey()
		}
		c.Set(k, strings.ReplaceAll(v, "{base}", base))
	}
	return c
}

func (tc sendCase) sender(t *testing.T, d *double, now time.Time) (Sender, Message) {
	t.Helper()
	info, ok := Lookup(tc.id)
	if !ok {
		t.Fatalf("provider %s is not in the catalog", tc.id)
	}
	c := tc.credentials(d.URL)
	client := NewHTTPClient(platformtest.Loopback, 5*time.Second)
	if tc.h2 {
		client = d.Client()
	}
	s, err := New(tc.id, c, Deps{Client: client, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("New(%s): %v", tc.id, err)
	}
	m := defaultMessage(info.Channel, d.URL)
	if tc.msg != nil {
		tc.msg(&m, d.URL)
	}
	return s, m
}

// TestSend_Providers runs every provider's case against its double: the
// request it documents, the message id on success, and the classes of
// failure (docs/providers.md, "Rules that hold for every provider").
func TestSend_Providers(t *testing.T) {
	now := time.Now().UTC()
	seen := map[string]bool{}
	for _, tc := range sendCases {
		seen[tc.id] = true
		t.Run(tc.id, func(t *testing.T) {
			d := newDouble(t, tc)
			s, m := tc.sender(t, d, now)
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}

			t.Run("OK", func(t *testing.T) {
				is := is.New(t)
				d.answer(status, tc.reply, tc.replyH)
				res, err := s.Send(t.Context(), m)
				is.NoErr(err)               // the provider's success is a send
				is.Equal(res.ID, tc.wantID) // the provider's message id is read
				is.Equal(res.Raw, tc.reply) // its answer is kept
				tc.checkRequest(t, d.last(), now)
			})
			for _, e := range []struct {
				name       string
				status     int
				header     map[string]string
				retryable  bool
				retryAfter time.Duration
			}{
				{"Err401Permanent", http.StatusUnauthorized, nil, false, 0},
				{"Err429Retried", http.StatusTooManyRequests, map[string]string{"Retry-After": "7"}, true, 7 * time.Second},
				{"Err500Retried", http.StatusInternalServerError, nil, true, 0},
			} {
				t.Run(e.name, func(t *testing.T) {
					is := is.New(t)
					d.answer(e.status, `{"error":"no"}`, e.header)
					_, err := s.Send(t.Context(), m)
					var pe *Error
					is.True(errors.As(err, &pe))          // a classified failure
					is.Equal(pe.Retryable, e.retryable)   // retried only when it may pass
					is.Equal(pe.RetryAfter, e.retryAfter) // the provider's Retry-After
				})
			}
			if info, _ := Lookup(tc.id); info.Dials && tc.aux == nil {
				t.Run("Check", func(t *testing.T) {
					is := is.New(t)
					c := tc.credentials(d.URL)
					if info.Channel == "chat" {
						c.Set("webhookUrl", d.URL+"/hook") // a chat integration's own URL, which is what is checked
					}
					d.answer(http.StatusOK, "{}", nil)
					is.NoErr(Check(t.Context(), tc.id, c, Deps{Client: NewHTTPClient(platformtest.Loopback, 5*time.Second)})) // the provider accepts the credentials
					d.answer(http.StatusInternalServerError, `{"error":"no"}`, nil)
					is.True(Check(t.Context(), tc.id, c, Deps{Client: NewHTTPClient(platformtest.Loopback, 5*time.Second)}) != nil) // a failing provider fails the check
				})
			}
			if tc.dead != "" {
				t.Run("OKDeadToken", func(t *testing.T) {
					is := is.New(t)
					d.answer(status, tc.reply, tc.replyH)
					two := m
					two.DeviceTokens = []string{"tok-1", "tok-dead"}
					res, err := s.Send(t.Context(), two)
					is.NoErr(err)                                  // the live token got it
					is.Equal(res.DeadTokens, []string{"tok-dead"}) // the dead one is named
				})
			}
			if tc.in200 != "" {
				t.Run("ErrInside2xx", func(t *testing.T) {
					is := is.New(t)
					d.answer(status, tc.in200, tc.replyH)
					_, err := s.Send(t.Context(), m)
					var pe *Error
					is.True(errors.As(err, &pe)) // an error inside a success status is a failure
					is.True(!pe.Retryable)       // and the provider meant it
				})
			}
		})
	}
	for _, ch := range []string{"email", "sms", "push", "chat"} {
		for _, id := range Supported(ch) {
			if !seen[id] && !untested[id] {
				t.Errorf("provider %s has no send case", id)
			}
		}
	}
}

// checkRequest compares what the double received with what the provider documents.
func (tc sendCase) checkRequest(t *testing.T, r *request, now time.Time) {
	t.Helper()
	is := is.NewRelaxed(t)
	if r == nil {
		t.Fatal("the double received nothing")
	}
	is.Equal(r.method, cmpOr(tc.method, http.MethodPost)) // the documented method
	is.Equal(r.path, tc.path)                             // the documented path
	if tc.h2 {
		is.Equal(r.proto, 2) // HTTP/2, as the provider requires
	}
	switch kind, arg, _ := strings.Cut(tc.auth, ":"); {
	case tc.auth == "":
	case kind == "sigv4":
		is.NoErr(verifySigV4(r, arg, now)) // signed with the integration's key, as AWS checks it
	case kind == "apns":
		is.NoErr(verifyAPNs(r)) // an ES256 provider token from the .p8 key
	case kind == "azure":
		is.NoErr(verifyAzure(r)) // Azure's HMAC-SHA256 over method, path, date, host and body hash
	default:
		is.Equal(r.header.Get(kind), strings.TrimSpace(arg)) // the documented authentication
	}
	for k, v := range tc.headers {
		is.Equal(r.header.Get(k), v) // a documented header
	}
	if tc.ctype != "" {
		ct, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
		is.Equal(ct, tc.ctype) // the documented content type
	}
	doc := decodeBody(r)
	for path, want := range tc.fields {
		if got := pick(doc, path); got != want {
			t.Errorf("body %s = %q, want %q (body %s)", path, got, want, truncate(string(r.body), 400))
		}
	}
}

func cmpInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// decodeBody reads a request's fields by its content type; a body-less
// request's are its query.
func decodeBody(r *request) any {
	ct, params, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
	flat := func(v url.Values) any {
		out := map[string]any{}
		for k, vs := range v {
			out[k] = vs[0]
		}
		return out
	}
	switch ct {
	case "application/json":
		var doc any
		json.Unmarshal(r.body, &doc)
		return doc
	case "application/x-www-form-urlencoded":
		v, _ := url.ParseQuery(string(r.body))
		return flat(v)
	case "multipart/form-data":
		form, err := multipart.NewReader(strings.NewReader(string(r.body)), params["boundary"]).ReadForm(1 << 20)
		if err != nil {
			return nil
		}
		return flat(form.Value)
	}
	return flat(r.query)
}

// verifySigV4 signs the received request again with the AWS SDK's signer,
// over the headers it says it signed, and compares the signatures.
func verifySigV4(r *request, service string, now time.Time) error {
	auth := r.header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok {
		return errors.New("no SigV4 Authorization header: " + auth)
	}
	signed, _, _ = strings.Cut(signed, ",")
	req, _ := http.NewRequest(r.method, "http://"+r.host+r.path, strings.NewReader(string(r.body)))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			req.Header.Set(h, r.header.Get(h))
		}
	}
	at, err := time.Parse("20060102T150405Z", r.header.Get("X-Amz-Date"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(r.body)
	creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}
	if err := v4.NewSigner().SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), service, "eu-west-1", at); err != nil {
		return err
	}
	if got := req.Header.Get("Authorization"); got != auth {
		return errors.New("signature differs: got " + auth + ", want " + got)
	}
	if at.Sub(now).Abs() > time.Second {
		return errors.New("signed at another time")
	}
	return nil
}

// verifyAPNs checks the provider token with the key's public half.
func verifyAPNs(r *request) error {
	_, e := testKeys()
	raw, ok := strings.CutPrefix(r.header.Get("authorization"), "bearer ")
	if !ok {
		return errors.New("no bearer token")
	}
	tok, err := jwt.Parse(raw, func(*jwt.Token) (any, error) { return &e.PublicKey, nil }, jwt.WithValidMethods([]string{"ES256"}))
	if err != nil {
		return err
	}
	if tok.Header["kid"] != "KEY1" {
		return errors.New("kid is not the key id")
	}
	if iss, _ := tok.Claims.GetIssuer(); iss != "TEAM1" {
		return errors.New("iss is not the team id")
	}
	return nil
}

// verifyAzure computes Azure Communication Services' signature of the
// received request from its documented parts.
func verifyAzure(r *request) error {
	sum := sha256.Sum256(r.body)
	hash := base64.StdEncoding.EncodeToString(sum[:])
	if r.header.Get("x-ms-content-sha256") != hash {
		return errors.New("x-ms-content-sha256 is not the body's hash")
	}
	mac := hmac.New(sha256.New, []byte("azure-key"))
	mac.Write([]byte(r.method + "\n" + r.path + "?" + r.query.Encode() + "\n" + r.header.Get("x-ms-date") + ";" + r.host + ";" + hash))
	want := "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := r.header.Get("Authorization"); got != want {
		return errors.New("signature differs: got " + got + ", want " + want)
	}
	return nil
}

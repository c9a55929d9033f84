package messaging_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// browser is a browser's push subscription: the key pair and secret it
// keeps, and the JSON PushSubscription.toJSON() gives a page.
type browser struct {
	key  *ecdh.PrivateKey
	auth []byte
	json string
}

func newBrowser(t *testing.T, endpoint string) browser {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}})
	return browser{key: key, auth: auth, json: string(b)}
}

// decrypt opens an aes128gcm Web Push message (RFC 8291, over the content
// coding of RFC 8188) with the browser's private key and auth secret, as a
// browser does: ECDH with the sender's one-time key, two HKDF steps, then
// AES-128-GCM. It is written here from the standard library's ecdh, hkdf
// and cipher, independently of the library that encrypts.
func (b browser) decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("short body")
	}
	salt, rs, idLen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idLen != 65 || len(body) < 21+idLen {
		return nil, fmt.Errorf("key id of %d bytes", idLen)
	}
	senderPub, ciphertext := body[21:21+idLen], body[21+idLen:]
	if uint32(len(ciphertext)) > rs {
		return nil, errors.New("more than one record")
	}
	sender, err := ecdh.P256().NewPublicKey(senderPub)
	if err != nil {
		return nil, err
	}
	shared, err := b.key.ECDH(sender)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), senderPub...)
	ikm, err := hkdf.Key(sha256.New, shared, b.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexFunc(plain, func(r rune) bool { return r != 0 })
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("no last-record delimiter")
	}
	return plain[:end], nil
}

// pushService is a push service double: it checks each push's VAPID
// signature against the application server's public key, decrypts it for
// the browser the path names, and answers each path with its status.
type pushService struct {
	*httptest.Server
	t         *testing.T
	publicKey string // the VAPID key the signature must verify with
	subject   string
	mu        sync.Mutex
	browsers  map[string]browser // by path
	status    map[string]int
	received  []pushed
}

type pushed struct {
	path    string
	headers http.Header
	message map[string]any
}

func newPushService(t *testing.T) *pushService {
	p := &pushService{t: t, browsers: map[string]browser{}, status: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *pushService) subscribe(path string, status int) browser {
	b := newBrowser(p.t, p.URL+path)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.browsers[path], p.status[path] = b, status
	return b
}

func (p *pushService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.browsers[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if err := p.verifyVAPID(r.Header.Get("Authorization")); err != nil {
		p.t.Errorf("VAPID: %v", err)
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if r.Header.Get("Content-Encoding") != "aes128gcm" {
		p.t.Errorf("Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	plain, err := b.decrypt(body)
	if err != nil {
		p.t.Errorf("decrypt: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var msg map[string]any
	if err := json.Unmarshal(plain, &msg); err != nil {
		p.t.Errorf("message %q: %v", plain, err)
	}
	p.received = append(p.received, pushed{path: r.URL.Path, headers: r.Header.Clone(), message: msg})
	if p.status[r.URL.Path] == http.StatusCreated {
		w.Header().Set("Location", p.URL+"/messages/1")
	}
	w.WriteHeader(p.status[r.URL.Path])
}

// verifyVAPID checks an Authorization of the vapid scheme (RFC 8292): the
// key is the integration's public key, and the token is an ES256 JWT it
// signed, for this service's origin, from the integration's subject, not
// expired and not valid for more than a day.
func (p *pushService) verifyVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return fmt.Errorf("scheme of %q", h)
	}
	params := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		params[k] = v
	}
	if params["k"] != p.publicKey {
		return fmt.Errorf("k=%s, want the integration's %s", params["k"], p.publicKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return err
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(params["t"], claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(p.URL), jwt.WithExpirationRequired())
	if err != nil {
		return err
	}
	if claims["sub"] != p.subject {
		return fmt.Errorf("sub %v, want %s", claims["sub"], p.subject)
	}
	if exp, _ := claims.GetExpirationTime(); exp.After(time.Now().Add(24 * time.Hour)) {
		return fmt.Errorf("exp %v is more than a day away", exp)
	}
	return nil
}

func (p *pushService) pushes() []pushed {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pushed(nil), p.received...)
}

// A web-push integration gets a VAPID key pair whose private half is never
// answered; a push is encrypted for each browser subscription and signed
// for its push service, with the overrides' TTL, urgency and topic; a
// subscription the service says is gone is removed from the subscriber.
func TestWebPush_EncryptedSignedAndGoneSubscriptionsRemoved(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	service := newPushService(t)

	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"web-push","channel":"push","active":true,
		"credentials":{"subject":"mailto:ops@example.com"}}`)
	is.Equal(res.Status, 201)
	var in struct {
		ID          string            `json:"_id"`
		Credentials map[string]string `json:"credentials"`
	}
	res.Decode(t, &in)
	is.True(len(in.Credentials["publicKey"]) == 87) // a P-256 point, base64url
	_, hasPrivate := in.Credentials["privateKey"]
	is.True(!hasPrivate) // never answered
	service.publicKey, service.subject = in.Credentials["publicKey"], "mailto:ops@example.com"

	// An update that leaves the keys out keeps them: subscriptions are
	// bound to the public key.
	res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"credentials":{"subject":"mailto:ops@example.com"}}`)
	is.Equal(res.Status, 200)
	var updated struct {
		Credentials map[string]string `json:"credentials"`
	}
	res.Decode(t, &updated)
	is.Equal(updated.Credentials["publicKey"], service.publicKey)
	_, hasPrivate = updated.Credentials["privateKey"]
	is.True(!hasPrivate)

	laptop := service.subscribe("/push/laptop", http.StatusCreated)
	gone := service.subscribe("/push/gone", http.StatusGone)
	tokens, _ := json.Marshal([]string{laptop.json, gone.json})
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	res = srv.Dev.Do(t, "PUT", "/v1/subscribers/ada/credentials", `{"providerId":"web-push","credentials":{"deviceTokens":`+string(tokens)+`}}`)
	is.Equal(res.Status, 200) // stored
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Push","type":"push","controlValues":{"subject":"Invoice {{ payload.n }}","body":"Ready to pay"}}]}`)

	tx := apptest.Trigger(t, srv, `{"name":"ping","to":"ada","payload":{"n":7},
		"overrides":{"webPush":{"ttl":3600,"urgency":"high","topic":"invoice-7","url":"https://app.example/invoices/7"}}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "push:completed")
	got := service.pushes()
	is.Equal(len(got), 2) // one a subscription
	var toLaptop pushed
	for _, p := range got {
		if p.path == "/push/laptop" {
			toLaptop = p
		}
	}
	is.Equal(toLaptop.message["title"], "Invoice 7")
	is.Equal(toLaptop.message["body"], "Ready to pay")
	is.Equal(toLaptop.message["url"], "https://app.example/invoices/7")
	is.Equal(toLaptop.message["data"].(map[string]any)["n"], float64(7))
	is.Equal(toLaptop.headers.Get("TTL"), "3600")
	is.Equal(toLaptop.headers.Get("Urgency"), "high")
	is.Equal(toLaptop.headers.Get("Topic"), "invoice-7")

	var sub struct {
		Channels []struct {
			ProviderID  string `json:"providerId"`
			Credentials struct {
				DeviceTokens []string `json:"deviceTokens"`
			} `json:"credentials"`
		} `json:"channels"`
	}
	platformtest.Eventually(t, 10*time.Second, func() bool {
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub)
		return len(sub.Channels) == 1 && len(sub.Channels[0].Credentials.DeviceTokens) == 1
	}, "the gone subscription to be removed")
	is.Equal(sub.Channels[0].Credentials.DeviceTokens[0], laptop.json) // the live one stays
}

// A web-push integration needs a subject the push services can contact,
// and a key pair given to it must be whole and match.
func TestWebPush_CredentialsAreChecked(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	for _, creds := range []string{
		`{}`,
		`{"subject":"ops@example.com"}`,
		`{"subject":"mailto:ops@example.com","publicKey":"abc"}`,
		`{"subject":"mailto:ops@example.com","publicKey":"BAAA","privateKey":"not-a-key"}`,
	} {
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"web-push","channel":"push","active":true,"credentials":`+creds+`}`)
		if res.Status != 422 && res.Status != 400 {
			t.Errorf("%s: %d %s", creds, res.Status, res.Body)
		}
	}
	is.Equal(srv.Dev.Do(t, "GET", "/v1/integrations", "").Status, 200)
}

// A page with the subscriber's inbox token reads the public key to
// subscribe with and stores its browser's subscription; a new subscription
// of the same endpoint replaces the old one.
func TestWebPush_InboxStoresSubscriptions(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	status, _, _ := inbox.Do("GET", "/v1/inbox/web-push", "")
	is.Equal(status, 404) // no web-push integration yet

	var in struct {
		Credentials map[string]string `json:"credentials"`
	}
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"web-push","channel":"push","active":true,
		"credentials":{"subject":"https://example.com/contact"}}`).Decode(t, &in)
	status, body, _ := inbox.Do("GET", "/v1/inbox/web-push", "")
	is.Equal(status, 200)
	var key struct {
		Data struct {
			PublicKey string `json:"publicKey"`
		} `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &key))
	is.Equal(key.Data.PublicKey, in.Credentials["publicKey"])

	first := newBrowser(t, "https://push.example.net/send/abc")
	second := newBrowser(t, "https://push.example.net/send/abc") // the same browser, subscribed again
	other := newBrowser(t, "https://push.example.net/send/xyz")
	for _, b := range []browser{first, other, second} {
		status, body, _ = inbox.Do("POST", "/v1/inbox/web-push/subscriptions", b.json)
		is.Equal(status, 201) // stored
		_ = body
	}
	var sub struct {
		Channels []struct {
			ProviderID  string `json:"providerId"`
			Credentials struct {
				DeviceTokens []string `json:"deviceTokens"`
			} `json:"credentials"`
		} `json:"channels"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub)
	is.Equal(len(sub.Channels), 1)
	is.Equal(sub.Channels[0].ProviderID, "web-push")
	tokens := sub.Channels[0].Credentials.DeviceTokens
	is.Equal(len(tokens), 2) // the endpoint's earlier subscription was replaced
	var last struct {
		Endpoint string `json:"endpoint"`
		Keys     struct {
			P256dh string `json:"p256dh"`
		} `json:"keys"`
	}
	is.NoErr(json.Unmarshal([]byte(tokens[1]), &last))
	is.Equal(last.Endpoint, "https://push.example.net/send/abc")
	is.Equal(last.Keys.P256dh, base64.RawURLEncoding.EncodeToString(second.key.PublicKey().Bytes())) // the newer keys

	for _, bad := range []string{`{"endpoint":"http://push.example.net/x","keys":{"p256dh":"a","auth":"b"}}`,
		`{"endpoint":"https://push.example.net/x","keys":{"p256dh":"a"}}`, `{"endpoint":""}`} {
		status, _, _ = inbox.Do("POST", "/v1/inbox/web-push/subscriptions", bad)
		is.True(status == 400 || status == 422) // refused
	}
}

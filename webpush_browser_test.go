package main

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// gcmDouble stands in for the registration half of Chromium's own push
// service: the check-in that gives the browser an identity, and the
// registration that gives a push subscription its endpoint. It records
// the key each web push registration was made for.
type gcmDouble struct {
	*httptest.Server
	mu      sync.Mutex
	senders []string // the application server keys of web push registrations
}

func newGCMDouble(t *testing.T) *gcmDouble {
	g := &gcmDouble{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/checkin":
			// An AndroidCheckinResponse: stats_ok (field 1, true), then
			// android_id (7) and security_token (8), both fixed64.
			b := []byte{0x08, 0x01, 0x39, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0, 0, 0, 0, 0, 0, 0, 0}
			binary.LittleEndian.PutUint64(b[3:], 4242424242)
			binary.LittleEndian.PutUint64(b[12:], 1717171717)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(b)
		case "/register":
			r.ParseForm()
			if strings.HasPrefix(r.PostForm.Get("X-subtype"), "wp:") {
				g.mu.Lock()
				g.senders = append(g.senders, r.PostForm.Get("sender"))
				g.mu.Unlock()
			}
			fmt.Fprintf(w, "token=herald-test-%d", len(r.PostForm.Get("sender")))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

// webPushPage serves the page of docs/web-push.md: its enablePush, with
// Herald's address and the subscriber's inbox token, and its service
// worker.
func webPushPage(t *testing.T, herald, token string) *httptest.Server {
	cfg, _ := json.Marshal(map[string]string{"herald": herald, "token": token})
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sw.js" {
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, `self.addEventListener("push", (event) => {
  const msg = event.data ? event.data.json() : {};
  event.waitUntil(self.registration.showNotification(msg.title || "", { body: msg.body, data: { url: msg.url || "/" } }));
});`)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Push</title></head><body><script>
const cfg = %s;
async function enablePush(herald, token) {
  const auth = { Authorization: "Bearer " + token, "Content-Type": "application/json" };
  const { data } = await (await fetch(herald + "/v1/inbox/web-push", { headers: auth })).json();
  await navigator.serviceWorker.register("/sw.js");
  const registration = await navigator.serviceWorker.ready;
  if ((await Notification.requestPermission()) !== "granted") return { error: "permission refused" };
  const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: data.publicKey });
  const res = await fetch(herald + "/v1/inbox/web-push/subscriptions", {
    method: "POST", headers: auth, body: JSON.stringify(subscription.toJSON()),
  });
  return { status: res.status, subscription: subscription.toJSON() };
}
window.turnOnPush = () => enablePush(cfg.herald, cfg.token);
</script></body></html>`, cfg)
	}))
	t.Cleanup(page.Close)
	return page
}

// webSubscription is PushSubscription.toJSON().
type webSubscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// A page in headless Chromium subscribes against Herald's public key, and
// the subscription the browser made is stored through the inbox route.
// What reaches the browser's push service cannot be decrypted here: the
// browser keeps the private key. So the test points the stored
// subscription at a push service double and checks what it can: the
// VAPID signature verifies with the key the browser subscribed with, and
// the body is an aes128gcm record keyed to a fresh P-256 point.
func TestBrowser_WebPushSubscription(t *testing.T) {
	node, chromium, dir := browserTools(t)
	is := is.New(t)
	srv := apptest.NewServer(t)
	var in struct {
		Credentials map[string]string `json:"credentials"`
	}
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"web-push","channel":"push","active":true,
		"credentials":{"subject":"mailto:ops@example.com"}}`).Decode(t, &in)
	publicKey := in.Credentials["publicKey"]
	_, session := apptest.OpenInbox(t, srv, "ada", "")
	gcm := newGCMDouble(t)
	page := webPushPage(t, srv.URL, session.Token)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	drive := exec.CommandContext(ctx, node, "webpush.mjs")
	drive.Dir = dir
	drive.Env = append(os.Environ(), "PAGE_URL="+page.URL, "CHROMIUM="+chromium, "GCM_URL="+gcm.URL)
	var stdout, stderr bytes.Buffer
	drive.Stdout, drive.Stderr = &stdout, &stderr
	if err := drive.Run(); err != nil {
		t.Fatalf("the browser failed: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var result struct {
		OK           bool            `json:"ok"`
		Status       int             `json:"status"`
		Subscription webSubscription `json:"subscription"`
	}
	is.NoErr(json.Unmarshal([]byte(lines[len(lines)-1]), &result)) // the driver's verdict
	is.True(result.OK)
	is.Equal(result.Status, 201) // the inbox route stored it

	gcm.mu.Lock()
	senders := gcm.senders
	gcm.mu.Unlock()
	is.Equal(senders, []string{publicKey}) // the browser subscribed against Herald's public key

	browserMade := result.Subscription
	t.Logf("the browser's subscription: endpoint %s, p256dh %s", browserMade.Endpoint, browserMade.Keys.P256dh)
	is.True(strings.HasPrefix(browserMade.Endpoint, "https://")) // the browser's push service endpoint
	p256dh, err := base64.RawURLEncoding.DecodeString(browserMade.Keys.P256dh)
	is.NoErr(err)
	_, err = ecdh.P256().NewPublicKey(p256dh)
	is.NoErr(err) // the browser's key is a P-256 point
	auth, err := base64.RawURLEncoding.DecodeString(browserMade.Keys.Auth)
	is.NoErr(err)
	is.Equal(len(auth), 16) // and its auth secret 16 bytes

	stored := webPushTokens(t, srv)
	is.Equal(len(stored), 1)
	var got webSubscription
	is.NoErr(json.Unmarshal([]byte(stored[0]), &got))
	is.Equal(got, browserMade) // stored as the browser made it

	// The browser's own push service is out of reach: its subscription,
	// keys and all, is pointed at a double, as a backend would store it.
	service := newVAPIDDouble(t, publicKey)
	got.Endpoint = service.URL + "/push/chromium"
	token, _ := json.Marshal(got)
	tokens, _ := json.Marshal([]string{string(token)})
	apptest.MustStatus(t, srv.Dev, "PUT", "/v1/subscribers/ada/credentials", `{"providerId":"web-push","credentials":{"deviceTokens":`+string(tokens)+`}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Push","type":"push","controlValues":{"subject":"Invoice {{ payload.n }}","body":"Ready to pay"}}]}`)
	tx := apptest.Trigger(t, srv, `{"name":"ping","to":"ada","payload":{"n":7}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "push:completed")
	is.Equal(service.count(), 1) // one push, signed and encrypted as checked
}

// webPushTokens are ada's web-push device tokens, as the API answers them.
func webPushTokens(t *testing.T, srv *apptest.Server) []string {
	var sub struct {
		Channels []struct {
			ProviderID  string `json:"providerId"`
			Credentials struct {
				DeviceTokens []string `json:"deviceTokens"`
			} `json:"credentials"`
		} `json:"channels"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub)
	var out []string
	for _, c := range sub.Channels {
		if c.ProviderID == "web-push" {
			out = append(out, c.Credentials.DeviceTokens...)
		}
	}
	return out
}

// vapidDouble is a push service that verifies each push's VAPID signature
// against the application server's key and reads its aes128gcm header; it
// cannot decrypt, not holding the browser's private key.
type vapidDouble struct {
	*httptest.Server
	mu     sync.Mutex
	pushes int
}

func newVAPIDDouble(t *testing.T, publicKey string) *vapidDouble {
	d := &vapidDouble{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifyVAPID(r.Header.Get("Authorization"), publicKey, "http://"+r.Host); err != nil {
			t.Errorf("VAPID: %v", err)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if err := checkAES128GCMHeader(r.Header.Get("Content-Encoding"), body); err != nil {
			t.Errorf("body: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		d.mu.Lock()
		d.pushes++
		d.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *vapidDouble) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pushes
}

// verifyVAPID checks an Authorization of the vapid scheme (RFC 8292): its
// key is publicKey, and its token an ES256 JWT that key verifies, for
// audience, not expired.
func verifyVAPID(h, publicKey, audience string) error {
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return fmt.Errorf("scheme of %q", h)
	}
	params := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		params[k] = v
	}
	if params["k"] != publicKey {
		return fmt.Errorf("k=%s, want %s", params["k"], publicKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return err
	}
	_, err = jwt.Parse(params["t"], func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(audience), jwt.WithExpirationRequired())
	return err
}

// checkAES128GCMHeader reads the header of an aes128gcm body (RFC 8188):
// a 16-byte salt, the record size, and a key id that is the sender's
// one-time P-256 public key (RFC 8291), then one record of at least a
// tag's length.
func checkAES128GCMHeader(encoding string, body []byte) error {
	if encoding != "aes128gcm" {
		return fmt.Errorf("Content-Encoding %q", encoding)
	}
	if len(body) < 21+65+17 || body[20] != 65 {
		return fmt.Errorf("a body of %d bytes is not one aes128gcm record keyed by a P-256 point", len(body))
	}
	if rs := binary.BigEndian.Uint32(body[16:20]); uint32(len(body)-21-65) > rs {
		return fmt.Errorf("record size %d, body %d", rs, len(body))
	}
	_, err := ecdh.P256().NewPublicKey(body[21 : 21+65])
	return err
}

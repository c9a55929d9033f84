package provider

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// PushOptions are what a trigger's overrides may set on one push through
// a push service of the browsers (web-push): how long the service keeps it
// for an offline browser, how urgent it is, the topic a newer push with
// the same one replaces, and the link a click opens.
type PushOptions struct {
	TTL     *int   // seconds; nil keeps the default, four weeks
	Urgency string // very-low, low, normal or high; "" is normal
	Topic   string // at most 32 URL-safe base64 characters
	URL     string // the link the service worker opens on a click
}

// webPushTTL is how long a push service keeps a push for a browser that is
// offline, unless the overrides say otherwise: the longest most services
// keep one.
const webPushTTL = 28 * 24 * 60 * 60

// webPushProvider is a push provider with no vendor: Herald is its own
// application server for the Web Push protocol, encrypting each message
// for the browser (aes128gcm) and signing for the push service with its
// VAPID key (docs/web-push.md). The library webpush-go does both.
var webPushProvider = map[string]spec{
	"web-push": {channel: "push", required: []string{"subject"}, shape: webPushShape,
		build: func(c Credentials, d Deps) (Sender, error) {
			if val(c.PrivateKey) == "" || val(c.PublicKey) == "" {
				return nil, Permanent("the web-push integration has no VAPID key pair")
			}
			return &webPushSender{c: c, d: d}, nil
		}},
}

// webPushShape checks the subject, a contact the push services may write
// to, and a VAPID key pair given rather than generated.
func webPushShape(c Credentials) map[string]string {
	out := map[string]string{}
	if s := val(c.Subject); s == "" {
		out["subject"] = "is required for provider web-push: a mailto: address or an https: URL the push services may contact"
	} else if !strings.HasPrefix(s, "mailto:") && !strings.HasPrefix(s, "https://") {
		out["subject"] = "must be a mailto: address or an https: URL"
	}
	pub, priv := val(c.PublicKey), val(c.PrivateKey)
	if (pub == "") != (priv == "") {
		out["publicKey"] = "a VAPID key pair is given whole, publicKey and privateKey, or not at all (Herald generates one)"
		return out
	}
	if priv != "" {
		if err := checkVAPIDPair(pub, priv); err != nil {
			out["privateKey"] = err.Error()
		}
	}
	return out
}

// checkVAPIDPair reports whether priv is a P-256 private key, base64url,
// whose public key is pub.
func checkVAPIDPair(pub, priv string) error {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(priv, "="))
	if err != nil {
		return errors.New("is not base64url")
	}
	key, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return errors.New("is not a P-256 private key")
	}
	if base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()) != strings.TrimRight(pub, "=") {
		return errors.New("is not the private key of publicKey")
	}
	return nil
}

// PrepareCredentials completes the credentials of a new or changed
// integration of providerID before they are checked and stored; prev are
// the stored ones when it is a change. A web-push integration keeps its
// VAPID key pair, or gets one: the browsers' subscriptions are bound to
// the public key, so it must not change under them.
func PrepareCredentials(providerID string, c *Credentials, prev *Credentials) error {
	if providerID != "web-push" || val(c.PublicKey) != "" || val(c.PrivateKey) != "" {
		return nil
	}
	if prev != nil && val(prev.PrivateKey) != "" {
		c.PublicKey, c.PrivateKey = prev.PublicKey, prev.PrivateKey
		return nil
	}
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		return err
	}
	c.PublicKey, c.PrivateKey = &pub, &priv
	return nil
}

// webPushSender sends one push per browser subscription.
type webPushSender struct {
	c Credentials
	d Deps
}

// Send encrypts m for each subscription in m.DeviceTokens, each the JSON
// a browser's PushSubscription.toJSON() gives, and posts it to the
// subscription's push service. A subscription the service says is gone
// (404, 410), or one that is not a subscription at all, is a dead token.
func (w *webPushSender) Send(ctx context.Context, m Message) (Result, error) {
	body, _ := json.Marshal(map[string]any{"title": m.Title, "body": m.Content, "url": m.Push.URL, "data": payloadObject(m)})
	ttl := webPushTTL
	if m.Push.TTL != nil && *m.Push.TTL >= 0 {
		ttl = *m.Push.TTL
	}
	subject := strings.TrimPrefix(val(w.c.Subject), "mailto:") // the library adds it back to what is not https:
	var out Result
	var first error
	sent := 0
	var ids []string
	for _, token := range m.DeviceTokens {
		var sub webpush.Subscription
		if json.Unmarshal([]byte(token), &sub) != nil || sub.Endpoint == "" || sub.Keys.P256dh == "" || sub.Keys.Auth == "" {
			out.DeadTokens = append(out.DeadTokens, token)
			continue
		}
		if !strings.HasPrefix(sub.Endpoint, "https://") && !strings.HasPrefix(sub.Endpoint, "http://") {
			out.DeadTokens = append(out.DeadTokens, token)
			continue
		}
		res, err := webpush.SendNotificationWithContext(ctx, body, &sub, &webpush.Options{
			HTTPClient: w.d.Client, Subscriber: subject, TTL: ttl, Urgency: webpush.Urgency(m.Push.Urgency), Topic: m.Push.Topic,
			VAPIDPublicKey: val(w.c.PublicKey), VAPIDPrivateKey: val(w.c.PrivateKey),
			VapidExpiration: w.d.now().Add(12 * time.Hour),
		})
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			first = cmp.Or(first, error(&Error{Msg: "push service unreachable: " + redact(err.Error()), Retryable: true, Unreachable: true}))
			continue
		}
		reply, _ := io.ReadAll(io.LimitReader(res.Body, MaxReply))
		res.Body.Close()
		switch {
		case res.StatusCode >= 200 && res.StatusCode < 300:
			sent++
			ids = append(ids, res.Header.Get("Location"))
		case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone:
			out.DeadTokens = append(out.DeadTokens, token)
		default:
			e := &Error{Msg: "push service answered " + strconv.Itoa(res.StatusCode), Raw: string(bytes.TrimSpace(reply)),
				Retryable: res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500}
			if d, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && d > 0 {
				e.RetryAfter = time.Duration(d) * time.Second
			}
			first = cmp.Or(first, error(e))
		}
	}
	out.ID = strings.Join(ids, ",")
	failed := len(m.DeviceTokens) - sent - len(out.DeadTokens)
	switch {
	case sent == 0:
		if first == nil {
			first = Permanent("every browser subscription is gone")
		}
		var pe *Error
		if errors.As(first, &pe) {
			cp := *pe
			cp.DeadTokens = out.DeadTokens
			return out, &cp
		}
		return out, first
	case failed > 0:
		return out, &Partial{Sent: sent, Of: len(m.DeviceTokens), Err: first, Result: out}
	}
	return out, nil
}

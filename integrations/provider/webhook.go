package provider

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"
)

// checkTimeout bounds each provider check, so a request with check: true
// answers within seconds even when the provider's host drops packets.
const checkTimeout = 5 * time.Second

// SignatureHeader carries the HMAC of a webhook body when the integration's
// credentials have hmac on: "sha256=" + hex(HMAC-SHA256(secretKey, body)).
const SignatureHeader = "X-Herald-Signature"

// Sign returns the SignatureHeader value for body under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookProviders are Herald's own webhook shapes (docs/api.md,
// "What strict clients check") and the in-app provider, whose stored message
// is the delivery.
var webhookProviders = map[string]spec{
	"service": {channel: "in_app", build: func(Credentials, Deps) (Sender, error) { return serviceSender{}, nil }},
	"email-webhook": {channel: "email", required: []string{"webhookUrl"}, send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"to": m.To, "from": cmp.Or(m.From, val(c.From)), "senderName": cmp.Or(m.SenderName, val(c.SenderName)),
			"subject": m.Subject, "html": m.HTML, "text": m.Text}
		if m.ReplyTo != "" {
			body["replyTo"] = m.ReplyTo
		}
		if m.Cc != nil {
			body["cc"] = m.Cc
		}
		if m.Bcc != nil {
			body["bcc"] = m.Bcc
		}
		return signed(c, val(c.WebhookURL), body)
	}, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"},
	"generic-sms": {channel: "sms", required: []string{"baseUrl", "from"}, build: func(c Credentials, d Deps) (Sender, error) {
		return &httpSender{creds: c, deps: d, s: spec{
			id: cmp.Or(val(c.IDPath), "id"), date: cmp.Or(val(c.DatePath), "date"),
			send: func(c Credentials, m Message) (*call, error) {
				cl, err := signed(c, val(c.BaseURL), map[string]any{"to": m.To, "from": cmp.Or(m.From, val(c.From)), "content": m.Content})
				if err != nil {
					return nil, err
				}
				if k := val(c.APIKey); k != "" {
					cl.header[cmp.Or(val(c.APIKeyRequestHeader), "X-API-Key")] = k
				}
				if k, h := val(c.SecretKey), val(c.SecretKeyRequestHeader); k != "" && h != "" {
					cl.header[h] = k
				}
				return cl, nil
			}}}, nil
	}, check: checkHEAD("baseUrl"), checkField: "baseUrl"},
	"push-webhook": {channel: "push", required: []string{"webhookUrl"}, batch: 1, send: func(c Credentials, m Message) (*call, error) {
		payload := m.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("{}")
		}
		return signed(c, val(c.WebhookURL), map[string]any{"target": m.DeviceTokens[0], "title": m.Title, "content": m.Content, "payload": payload})
	}, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"},
}

// serviceSender is the in_app provider: the stored message is the delivery.
type serviceSender struct{}

func (serviceSender) Send(context.Context, Message) (Result, error) { return Result{}, nil }

// signed is a JSON post of body to target, carrying SignatureHeader when
// the credentials turn hmac on.
func signed(c Credentials, target string, body any) (*call, error) {
	if target == "" {
		return nil, Permanent("no webhookUrl to post to")
	}
	cl := &call{url: target, header: map[string]string{}}
	if !on(c.HMAC) {
		cl.json = body
		return cl, nil
	}
	if val(c.SecretKey) == "" {
		return nil, Permanent("hmac is on but the integration has no secretKey")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, Permanent("encode body: %v", err)
	}
	cl.body, cl.contentType = b, "application/json"
	cl.header[SignatureHeader] = Sign(val(c.SecretKey), b)
	return cl, nil
}

// checkHEAD checks a webhook by sending a HEAD to the URL in field. Any
// answer below 500 proves the endpoint is there (a webhook often refuses
// HEAD with 404 or 405); a connection failure, a timeout, a server error or
// a redirect to another host (which the check's client does not follow)
// does not.
func checkHEAD(field string) func(context.Context, Credentials, Deps) error {
	return func(ctx context.Context, c Credentials, d Deps) error {
		target := c.Value(field)
		if target == "" {
			return nil
		}
		r, err := do(ctx, d.Client, &call{method: http.MethodHead, url: target})
		switch {
		case err != nil && (r == nil || r.status >= 500):
			return err
		case r != nil && r.status >= 300 && r.status < 400 && r.header.Get("Location") != "":
			return Permanent("the URL redirects elsewhere; Herald follows no redirect to another host")
		}
		return nil
	}
}

package messaging

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
)

// Message is one rendered message handed to a provider.
type Message struct {
	To             string          // email address or phone number
	Subject        string          // email subject
	HTML           string          // email body
	Text           string          // email plain-text alternative
	Content        string          // sms, chat and push body
	Title          string          // push title
	WebhookURL     string          // chat: where to post (subscriber's, else the integration's)
	ChatChannel    string          // mattermost channel from the subscriber's credentials
	DeviceTokens   []string        // push targets
	Payload        json.RawMessage // the trigger payload, for push-webhook
	emailOverrides                 // email: what the trigger's overrides change
}

// Result is what a provider answered.
type Result struct {
	ID   string // the provider's message id, when it gives one
	Date string // the provider's date, when it gives one
	Raw  string // the raw response, recorded in the execution detail
}

// Provider sends one message through one integration.
type Provider interface {
	Send(ctx context.Context, m Message) (Result, error)
}

// SignatureHeader carries the HMAC of a webhook body when the integration's
// credentials have hmac on: "sha256=" + hex(HMAC-SHA256(secretKey, body)).
const SignatureHeader = "X-Herald-Signature"

// sendError is a failed send, with whether trying again may succeed.
type sendError struct {
	msg       string
	raw       string
	retryable bool
}

func (e *sendError) Error() string { return e.msg }

func permanent(format string, args ...any) error {
	return &sendError{msg: fmt.Sprintf(format, args...)}
}

// providerFactories builds each supported provider from its integration.
func providerFactories(client *http.Client, guard *platform.Outbound) map[string]func(integration) (Provider, error) {
	hook := func(shape func(credentials, Message) any, target func(credentials, Message) string) func(integration) (Provider, error) {
		return func(in integration) (Provider, error) {
			return &webhookProvider{client: client, creds: in.Credentials, shape: shape, target: target}, nil
		}
	}
	chatTarget := func(_ credentials, m Message) string { return m.WebhookURL }
	return map[string]func(integration) (Provider, error){
		"service":    func(integration) (Provider, error) { return serviceProvider{}, nil },
		"nodemailer": func(in integration) (Provider, error) { return newSMTPProvider(in, guard) },
		"email-webhook": hook(func(c credentials, m Message) any {
			body := map[string]any{"to": m.To, "from": cmp.Or(m.From, c.From), "senderName": cmp.Or(m.SenderName, c.SenderName),
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
			return body
		}, func(c credentials, _ Message) string { return c.WebhookURL }),
		"generic-sms": func(in integration) (Provider, error) {
			return &genericSMSProvider{client: client, creds: in.Credentials}, nil
		},
		"chat-webhook": hook(func(_ credentials, m Message) any { return map[string]any{"content": m.Content} }, chatTarget),
		"slack":        hook(func(_ credentials, m Message) any { return map[string]any{"text": m.Content} }, chatTarget),
		"discord":      hook(func(_ credentials, m Message) any { return map[string]any{"content": m.Content} }, chatTarget),
		"msteams":      hook(func(_ credentials, m Message) any { return map[string]any{"text": m.Content} }, chatTarget),
		"mattermost": hook(func(_ credentials, m Message) any {
			body := map[string]any{"text": m.Content}
			if m.ChatChannel != "" {
				body["channel"] = m.ChatChannel
			}
			return body
		}, chatTarget),
		"push-webhook": func(in integration) (Provider, error) {
			return &pushWebhookProvider{client: client, creds: in.Credentials}, nil
		},
	}
}

// serviceProvider is the in_app provider: the stored message is the delivery.
type serviceProvider struct{}

func (serviceProvider) Send(context.Context, Message) (Result, error) { return Result{}, nil }

// webhookProvider posts one JSON body to one URL (email-webhook and the chat
// incoming webhooks).
type webhookProvider struct {
	client *http.Client
	creds  credentials
	shape  func(credentials, Message) any
	target func(credentials, Message) string
}

func (p *webhookProvider) Send(ctx context.Context, m Message) (Result, error) {
	body := p.shape(p.creds, m)
	target := p.target(p.creds, m)
	if target == "" {
		return Result{}, permanent("no webhookUrl to post to")
	}
	_, raw, err := postJSON(ctx, p.client, target, body, nil, p.creds)
	return Result{Raw: raw}, err
}

// genericSMSProvider posts {to, from, content} to the integration's baseUrl
// with the API key in the configured header, and reads the message id and
// date from the reply at idPath and datePath.
type genericSMSProvider struct {
	client *http.Client
	creds  credentials
}

func (p *genericSMSProvider) Send(ctx context.Context, m Message) (Result, error) {
	if p.creds.BaseURL == "" {
		return Result{}, permanent("generic-sms needs a baseUrl")
	}
	headers := map[string]string{}
	if p.creds.APIKey != "" {
		name := p.creds.APIKeyRequestHeader
		if name == "" {
			name = "X-API-Key"
		}
		headers[name] = p.creds.APIKey
	}
	if p.creds.SecretKey != "" && p.creds.SecretKeyHeader != "" {
		headers[p.creds.SecretKeyHeader] = p.creds.SecretKey
	}
	body := map[string]any{"to": m.To, "from": p.creds.From, "content": m.Content}
	_, raw, err := postJSON(ctx, p.client, p.creds.BaseURL, body, headers, p.creds)
	if err != nil {
		return Result{Raw: raw}, err
	}
	res := Result{Raw: raw}
	var reply any
	if json.Unmarshal([]byte(raw), &reply) == nil {
		res.ID = fmt.Sprint(valueAt(reply, p.creds.IDPath, "id"))
		res.Date = fmt.Sprint(valueAt(reply, p.creds.DatePath, "date"))
	}
	return res, nil
}

// valueAt reads a dotted path (def when path is empty) from a decoded JSON
// value, or "" when it is absent.
func valueAt(v any, path, def string) any {
	if path == "" {
		path = def
	}
	for _, key := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			v = t[key]
		default:
			return ""
		}
	}
	if v == nil {
		return ""
	}
	return v
}

// pushWebhookProvider posts {target, title, content, payload} to the
// integration's webhookUrl once per device token.
type pushWebhookProvider struct {
	client *http.Client
	creds  credentials
}

func (p *pushWebhookProvider) Send(ctx context.Context, m Message) (Result, error) {
	if p.creds.WebhookURL == "" {
		return Result{}, permanent("push-webhook needs a webhookUrl")
	}
	payload := m.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	// Every token is posted to, whatever the others answered: one device's
	// failure must not keep the push from the rest.
	var raws []string
	var failed error
	sent := 0
	for _, token := range m.DeviceTokens {
		body := map[string]any{"target": token, "title": m.Title, "content": m.Content, "payload": payload}
		_, raw, err := postJSON(ctx, p.client, p.creds.WebhookURL, body, nil, p.creds)
		raws = append(raws, raw)
		if err != nil {
			failed = cmp.Or(failed, err)
			continue
		}
		sent++
	}
	res := Result{Raw: strings.Join(raws, "\n")}
	switch {
	case failed == nil:
		return res, nil
	case sent == 0:
		return res, failed
	default:
		return res, &partialSend{sent: sent, of: len(m.DeviceTokens), err: failed}
	}
}

// partialSend is a send that reached some of its recipients and not
// others. It is not retried: sending again would duplicate what arrived.
type partialSend struct {
	sent, of int
	err      error // the first failure
}

func (e *partialSend) Error() string {
	return fmt.Sprintf("%d of %d device tokens got it (%v)", e.sent, e.of, e.err)
}

func (e *partialSend) Unwrap() error { return e.err }

// NewHTTPClient returns the client every webhook goes through: bounded by
// timeout, connecting only where guard allows (issue 37), and following no
// redirect, so an integration URL cannot bounce a signed body, or the
// guard's check, somewhere else.
func NewHTTPClient(guard *platform.Outbound, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: guard.Transport(timeout),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// maxReply bounds how much of a provider's reply is read and recorded.
const maxReply = 64 << 10

// postJSON posts body to target and classifies the outcome: a 2xx is
// success; a connection failure, timeout, 429 or 5xx may pass and is
// retryable; anything else (a 4xx, a redirect not followed) is permanent.
func postJSON(ctx context.Context, client *http.Client, target string, body any, headers map[string]string, creds credentials) (int, string, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, "", permanent("webhook URL %q is not an http(s) URL", target)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return 0, "", permanent("encode body: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return 0, "", permanent("build request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if creds.HMAC {
		if creds.SecretKey == "" {
			return 0, "", permanent("hmac is on but the integration has no secretKey")
		}
		req.Header.Set(SignatureHeader, Sign(creds.SecretKey, b))
	}
	res, err := client.Do(req)
	var refused *platform.OutboundRefusedError
	if errors.As(err, &refused) {
		return 0, "", permanent("%s", refused.Error())
	}
	if err != nil {
		return 0, "", &sendError{msg: "request to " + u.Host + " failed: " + errText(err), retryable: true}
	}
	defer res.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(res.Body, maxReply))
	raw := string(reply)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, raw, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return res.StatusCode, raw, &sendError{msg: fmt.Sprintf("provider answered %d redirecting to %s; redirects are not followed",
			res.StatusCode, res.Header.Get("Location")), raw: raw}
	default:
		return res.StatusCode, raw, &sendError{msg: fmt.Sprintf("provider answered %d: %s", res.StatusCode, truncate(strings.TrimSpace(raw), 500)),
			raw: raw, retryable: res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests}
	}
}

// Sign returns the SignatureHeader value for body under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// errText describes a transport error without the request URL, which may
// carry a secret in its path (chat webhook URLs do).
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/outbound"
)

// MaxReply bounds how much of a provider's answer is read and recorded.
const MaxReply = 64 << 10

// call is one HTTP request to a provider.
type call struct {
	method, url string
	header      map[string]string
	json        any        // sent as application/json when set
	form        url.Values // sent as application/x-www-form-urlencoded when set
	body        []byte     // sent as is, with contentType, when neither is set
	contentType string
	user, pass  string // HTTP Basic, when user or pass is set
	// sign, when set, signs the built request (AWS SigV4); body is what is sent.
	sign func(req *http.Request, body []byte) error
}

// reply is a provider's answer.
type reply struct {
	status int
	header http.Header
	body   []byte
	doc    any // body decoded as JSON, or nil
}

// do sends c and classifies the answer: a 2xx is returned; a connection
// failure, timeout, 408, 429 or 5xx is a retryable Error (with the
// provider's Retry-After); any other status is a permanent one.
func do(ctx context.Context, client *http.Client, c *call) (*reply, error) {
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Permanent("%q is not an http(s) URL", redact(c.url))
	}
	body, ctype := c.body, c.contentType
	switch {
	case c.json != nil:
		if body, err = json.Marshal(c.json); err != nil {
			return nil, Permanent("encode body: %v", err)
		}
		ctype = "application/json"
	case c.form != nil:
		body, ctype = []byte(c.form.Encode()), "application/x-www-form-urlencoded"
	}
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		return nil, Permanent("build request: %s", errText(err))
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Herald")
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	if c.sign != nil {
		if err := c.sign(req, body); err != nil {
			return nil, Permanent("sign request: %v", err)
		}
	}
	res, err := client.Do(req)
	var refused *outbound.RefusedError
	if errors.As(err, &refused) {
		// A private target stays private: trying again cannot help.
		return nil, Permanent("%s", refused.Error())
	}
	if err != nil {
		return nil, &Error{Msg: "request to " + u.Host + " failed: " + errText(err), Retryable: true, Unreachable: true}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, MaxReply))
	r := &reply{status: res.StatusCode, header: res.Header, body: b}
	if json.Unmarshal(b, &r.doc) != nil {
		r.doc = nil
	}
	switch s := res.StatusCode; {
	case s >= 200 && s < 300:
		return r, nil
	case s >= 300 && s < 400:
		// Only the target's host: a redirect to the same URL on https
		// would otherwise print the webhook's secret path.
		return r, &Error{Msg: fmt.Sprintf("provider answered %d redirecting to %s; redirects are not followed",
			s, redact(res.Header.Get("Location"))), Raw: string(b)}
	default:
		retry := s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500
		e := &Error{Msg: fmt.Sprintf("provider answered %d: %s", s, reason(r)),
			Raw: string(b), Retryable: retry}
		if retry {
			e.RetryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
		}
		return r, e
	}
}

// maxRetryAfter caps the wait a provider may ask for: a job is not parked
// for days on one header.
const maxRetryAfter = time.Hour

// reasonPaths are where providers put the reason of a refusal: SendGrid
// and Telnyx errors[0], Postmark Message, Resend and Twilio message,
// Google and Meta error.message, Infobip requestError, APNs reason, ….
var reasonPaths = []string{"errors.0.message", "errors.0.detail", "errors.0.title", "errors.0.description",
	"errors.0.ErrorMessage", "error.message", "requestError.serviceException.text", "message", "Message",
	"error_description", "detail", "reason", "description", "error", "errors.0"}

// reason is the provider's own reason for a refusal: the first string at
// one of reasonPaths, else the answer as it came, truncated.
func reason(r *reply) string {
	for _, p := range reasonPaths {
		if v, ok := pickAny(r.doc, p).(string); ok && strings.TrimSpace(v) != "" {
			return truncate(v, 500)
		}
	}
	return truncate(strings.TrimSpace(string(r.body)), 500)
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	return min(parseRetryAfter(v, now), maxRetryAfter)
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// pick reads a dotted path from a decoded JSON document: object keys and
// array indexes ("messages.0.message-id"). Numbers come back as written.
func pick(doc any, path string) string {
	v := pickAny(doc, path)
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

func pickAny(doc any, path string) any {
	if path == "" {
		return nil
	}
	v := doc
	for _, key := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			v = t[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// origin is the credentials' baseUrl without its trailing slash when set,
// else def: how every HTTP provider's API origin is replaced
// (docs/providers.md, "Rules that hold for every provider").
func origin(c Credentials, def string) string {
	if b := strings.TrimRight(val(c.BaseURL), "/"); b != "" {
		return b
	}
	return def
}

// bearer is an Authorization header value.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redact keeps a URL's scheme and host: chat webhook URLs carry secrets in
// their paths and queries.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the URL"
	}
	return u.Scheme + "://" + u.Host + "/…"
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

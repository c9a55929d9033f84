// Package provider sends one rendered message through one provider's API: the
// catalog of provider ids Herald delivers through, the credentials each
// needs, and one sender per provider (docs/providers.md). It sits below the
// integrations and messaging domains, which both read it, and imports only
// the standard library, the outbound guard and well-kept libraries.
package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/herald-notify/herald/outbound"
)

// Message is one rendered message handed to a provider.
type Message struct {
	ID           string          // Herald's message id: the idempotency key where a provider takes one
	To           string          // email address or phone number
	From         string          // email or sms sender, overriding the credentials' from
	SenderName   string          // email sender name, overriding the credentials' senderName
	ReplyTo      string          // email reply-to
	Cc, Bcc      []string        // email copies
	Subject      string          // email subject
	HTML         string          // email body
	Text         string          // email plain-text alternative
	Content      string          // sms, chat and push body
	Title        string          // push title
	WebhookURL   string          // chat: where to post (the subscriber's, else the integration's)
	ChatChannel  string          // chat: the subscriber's channel (mattermost channel, rocket-chat room)
	PhoneNumber  string          // chat: the subscriber's phone number (whatsapp-business)
	DeviceTokens []string        // push targets
	Push         PushOptions     // push: the web-push overrides
	Payload      json.RawMessage // the trigger payload
	Attachments  []Attachment    // email: the trigger's files for the email channel
}

// Result is what a provider answered to a send that succeeded.
type Result struct {
	ID         string   // the provider's message id, when it gives one
	Date       string   // the provider's date, when it gives one
	Raw        string   // the provider's answer, at most MaxReply bytes
	DeadTokens []string // device tokens the provider says no longer exist
}

// Sender sends one message through one integration's provider.
type Sender interface {
	Send(ctx context.Context, m Message) (Result, error)
}

// Deps are what a sender reaches the network with. Every outbound HTTP
// request of a sender goes through Client, and every SMTP connection
// through Dial, so one guard placed there covers every provider.
type Deps struct {
	Client *http.Client
	// Dial opens SMTP connections; nil dials through the outbound guard
	// with nothing allowed, so private and loopback addresses are refused.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now is the clock for signatures and tokens; nil is time.Now.
	Now func() time.Time
}

func (d Deps) dial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.Dial != nil {
		return d.Dial
	}
	return (*outbound.Guard)(nil).DialContext
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Error is a failed send: permanent unless Retryable, and then not before
// RetryAfter when the provider said when (Retry-After).
type Error struct {
	Msg        string
	Raw        string // the provider's answer, when there was one
	Retryable  bool
	RetryAfter time.Duration
	// DeadTokens are device tokens the provider refused as gone, for the
	// caller to forget even though the send failed.
	DeadTokens []string
	// Unreachable is a target that never answered as its protocol would: a
	// connection that failed or a reply in another protocol. A check says
	// so in the same words for every such cause.
	Unreachable bool
}

func (e *Error) Error() string { return e.Msg }

// Permanent is an Error that sending again will not fix.
func Permanent(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Partial is a send that reached some of its recipients and not others. It
// is not retried: sending again would duplicate what arrived.
type Partial struct {
	Sent, Of int
	Err      error // the first failure
	Result   Result
}

func (e *Partial) Error() string {
	return fmt.Sprintf("%d of %d device tokens got it (%v)", e.Sent, e.Of, e.Err)
}

func (e *Partial) Unwrap() error { return e.Err }

// New builds the sender of providerID over creds, or an error when Herald
// cannot deliver through providerID or creds cannot work (a malformed key).
func New(providerID string, creds Credentials, deps Deps) (Sender, error) {
	info, ok := catalog[providerID]
	if !ok || info.build == nil {
		return nil, Permanent("Herald cannot deliver through provider %s", providerID)
	}
	if deps.Client == nil {
		deps.Client = NewHTTPClient(nil, 15*time.Second)
	}
	return info.build(creds, deps)
}

// NewHTTPClient returns the client every provider call goes through:
// bounded by timeout, connecting only where guard allows (nil refuses
// private and loopback addresses), and following no redirect, so an
// integration URL cannot bounce a signed body somewhere else. HTTP/2 is
// attempted, as APNs requires.
func NewHTTPClient(guard *outbound.Guard, timeout time.Duration) *http.Client {
	t := guard.Transport(timeout)
	t.ForceAttemptHTTP2 = true
	t.MaxIdleConnsPerHost = 256 // a lane sends to one host from up to 256 goroutines
	return &http.Client{
		Timeout:   timeout,
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

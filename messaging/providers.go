package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/subscribers"
)

// Message is one rendered message handed to a provider.
type Message = provider.Message

// Attachment is a file an email carries.
type Attachment = provider.Attachment

// withAttachments gives an email t's files when its provider sends them,
// and otherwise returns the warning detail that says it went without them.
func withAttachments(t *target, files []Attachment) *Detail {
	if len(files) == 0 {
		return nil
	}
	if !provider.SendsAttachments(t.in.ProviderID) {
		return &Detail{Status: "Warning", Source: "Internal", ProviderID: t.in.ProviderID,
			Detail: fmt.Sprintf("Provider %s does not send attachments: the email was sent without its %d files", t.in.ProviderID, len(files))}
	}
	t.msg.Attachments = files
	return nil
}

// TokenRemover forgets device tokens a push provider called dead;
// subscribers.Store satisfies it.
type TokenRemover interface {
	RemoveDeviceTokens(ctx context.Context, environmentID, subscriberID, providerID string, tokens []string) error
}

// sender builds the provider sender of in for channel, or the failed
// outcome that says why it cannot send.
func (e *Deliverer) sender(in integration, channel string) (provider.Sender, *Outcome) {
	info, ok := provider.Lookup(in.ProviderID)
	if !ok || info.Channel != channel {
		return nil, fail(in.ProviderID, "Credentials", fmt.Sprintf("Herald cannot deliver %s through provider %s", channel, in.ProviderID))
	}
	p, err := provider.New(in.ProviderID, in.Credentials, e.out)
	if err != nil {
		return nil, fail(in.ProviderID, "Credentials", "Invalid integration credentials: "+err.Error())
	}
	return p, nil
}

// sent is what one provider's send contributes to the outcome: its detail,
// and how it counts.
type sent struct {
	detail     Detail
	failed     bool   // nothing reached the recipient
	partial    string // some device tokens got it, this is why not all
	why        string // why it failed
	retryable  bool
	retryAfter int64 // ms
	id         string
	dead       []string
}

// classify turns a provider's answer into what the outcome records: a
// *provider.Partial is a warning, a *provider.Error failed (retryable or
// not), any other error failed and may pass later.
func classify(providerID string, res provider.Result, err error) sent {
	var part *provider.Partial
	var pe *provider.Error
	switch {
	case errors.As(err, &part):
		raw := part.Result.Raw
		return sent{partial: err.Error(), id: part.Result.ID, dead: part.Result.DeadTokens, detail: Detail{Status: "Warning",
			Detail: "Message sent in part: " + err.Error(), Source: "Internal", ProviderID: providerID, Raw: capped(raw)}}
	case errors.As(err, &pe):
		raw := err.Error()
		if pe.Raw != "" {
			raw = pe.Raw
		}
		return sent{failed: true, why: err.Error(), retryable: pe.Retryable, retryAfter: pe.RetryAfter.Milliseconds(), dead: pe.DeadTokens,
			detail: Detail{Status: "Failed", Detail: "Unexpected provider error: " + err.Error(), Source: "Internal", ProviderID: providerID, Raw: capped(raw)}}
	case err != nil:
		raw := err.Error()
		return sent{failed: true, why: err.Error(), retryable: true,
			detail: Detail{Status: "Failed", Detail: "Unexpected provider error: " + err.Error(), Source: "Internal", ProviderID: providerID, Raw: capped(raw)}}
	}
	out := sent{id: res.ID, dead: res.DeadTokens, detail: Detail{Status: "Success", Detail: "Message sent", Source: "Internal", ProviderID: providerID}}
	raw := res.Raw
	if res.ID != "" {
		// The detail's raw carries the provider's message id beside its
		// answer, as the reference platform's {id, date} does.
		b, _ := json.Marshal(struct {
			ID       string `json:"id"`
			Date     string `json:"date,omitempty"`
			Response string `json:"response,omitempty"`
		}{res.ID, res.Date, res.Raw})
		raw = string(b)
	}
	if raw != "" {
		out.detail.Raw = capped(raw)
	}
	return out
}

// channelTarget is in's target for sub on a chat or push step, and whether
// there is one. Push goes to the subscriber's device tokens for the
// provider. Chat posts to the subscriber's webhook URL for the provider,
// else the integration's (docs/api.md, "What strict clients check"), so a
// chat-webhook integration's URL serves subscribers who have no chat
// credentials of their own; whatsapp-business sends to the phone of a
// subscriber who has an entry for it.
func channelTarget(channel string, in integration, sub subscribers.Subscriber) (target, bool) {
	t := target{in: in}
	var entry *subscribers.Channel
	for i := range sub.Channels {
		ch := &sub.Channels[i]
		if ch.ProviderID == in.ProviderID && (ch.IntegrationID == "" || in.ID == "" || ch.IntegrationID == in.ID) {
			entry = ch
			break
		}
	}
	if channel == "push" {
		if entry == nil || len(entry.Credentials.DeviceTokens) == 0 {
			return t, false
		}
		t.msg.DeviceTokens = entry.Credentials.DeviceTokens
		return t, true
	}
	if entry != nil {
		t.msg.WebhookURL, t.msg.ChatChannel = deref(entry.Credentials.WebhookURL), deref(entry.Credentials.Channel)
	}
	if t.msg.WebhookURL == "" {
		t.msg.WebhookURL = deref(in.Credentials.WebhookURL)
	}
	if !provider.Webhook(in.ProviderID) {
		t.msg.PhoneNumber = deref(sub.Phone)
		return t, entry != nil && t.msg.PhoneNumber != ""
	}
	return t, t.msg.WebhookURL != ""
}

// maskToken is enough of a device token to tell it from the subscriber's
// others: its first few characters (at most half of it), then "…". The
// whole token addresses the subscriber's device, and an execution detail is
// read by whoever can read the activity feed.
func maskToken(token string) string {
	keep := min(6, utf8.RuneCountInString(token)/2)
	for i := range token {
		if keep == 0 {
			return token[:i] + "…"
		}
		keep--
	}
	return "…"
}

// forgetTokens removes the device tokens a provider called dead from the
// subscriber's channel credentials, and returns the detail that names them.
func (e *Deliverer) forgetTokens(ctx context.Context, d *Delivery, providerID string, dead []string) Detail {
	masked := make([]string, len(dead))
	for i, token := range dead {
		masked[i] = maskToken(token)
	}
	what := fmt.Sprintf("Device tokens the provider no longer knows: %s", strings.Join(masked, ", "))
	out := Detail{Status: "Warning", Source: "Internal", ProviderID: providerID}
	switch {
	case e.messages.src.Tokens == nil:
		out.Detail = what
	case e.messages.src.Tokens.RemoveDeviceTokens(ctx, d.EnvironmentID, d.Subscriber.SubscriberID, providerID, dead) != nil:
		out.Detail = what + "; removing them from the subscriber failed"
	default:
		out.Detail = what + "; removed from the subscriber"
	}
	return out
}

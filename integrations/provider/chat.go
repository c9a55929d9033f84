package provider

import (
	"cmp"
	"strings"
)

// chatProviders post to the subscriber's chat webhook URL, or the
// integration's when the subscriber has none (docs/api.md,
// "What strict clients check"), except whatsapp-business, which calls the
// WhatsApp Cloud API.
var chatProviders = map[string]spec{
	"chat-webhook":  withRequired(chatHook(func(m Message) any { return map[string]any{"content": m.Content} }), "webhookUrl"),
	"slack":         slackHook(),
	"service-slack": slackHook(),
	"discord": {channel: "chat", id: "id", date: "timestamp", send: func(c Credentials, m Message) (*call, error) {
		// wait=true makes Discord answer the message, with its id, instead of 204.
		return signed(c, withQuery(m.WebhookURL, "wait", "true"), map[string]any{"content": m.Content})
	}, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"},
	"msteams": {channel: "chat", id: "header:request-id", send: func(c Credentials, m Message) (*call, error) {
		return signed(c, m.WebhookURL, map[string]any{"text": m.Content})
	}, failed: teamsFailed, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"},
	"mattermost": {channel: "chat", id: "header:x-request-id", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"text": m.Content}
		if m.ChatChannel != "" {
			body["channel"] = m.ChatChannel
		}
		return signed(c, m.WebhookURL, body)
	}, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"},
	"ryver": chatHook(func(m Message) any { return map[string]any{"content": m.Content} }),
	// zulip's Slack-compatible incoming webhook takes {text}.
	"zulip": chatHook(func(m Message) any { return map[string]any{"text": m.Content} }),
	"grafana-on-call": {channel: "chat", send: func(c Credentials, m Message) (*call, error) {
		return signed(c, m.WebhookURL, map[string]any{"alert_uid": cmp.Or(val(c.AlertUID), m.ID), "title": cmp.Or(val(c.Title), m.Title),
			"image_url": val(c.ImageURL), "state": cmp.Or(val(c.State), "alerting"), "link_to_upstream_details": val(c.ExternalLink),
			"message": m.Content})
	}},
	// getstream's key goes in the X-API-KEY header, where its webhook
	// reads it (the reference puts it inside the body: docs/providers.md, "Chat").
	"getstream": {channel: "chat", required: []string{"apiKey"}, id: "header:X-WEBHOOK-ID", send: func(c Credentials, m Message) (*call, error) {
		cl, err := signed(c, m.WebhookURL, map[string]any{"text": m.Content})
		if err == nil {
			cl.header["X-API-KEY"] = val(c.APIKey)
		}
		return cl, err
	}},
	// rocket-chat: the subscriber's webhookUrl is the server's base URL and
	// its channel the room id.
	"rocket-chat": {channel: "chat", required: []string{"token", "user"}, id: "message._id", send: func(c Credentials, m Message) (*call, error) {
		if m.WebhookURL == "" {
			return nil, Permanent("rocket-chat needs the server URL as the subscriber's webhookUrl")
		}
		return &call{url: strings.TrimRight(m.WebhookURL, "/") + "/api/v1/chat.sendMessage",
			header: map[string]string{"X-Auth-Token": val(c.Token), "X-User-Id": val(c.User)},
			json:   map[string]any{"message": map[string]any{"rid": m.ChatChannel, "msg": m.Content}}}, nil
	}, failed: flagFailed("success", "error")},
	"whatsapp-business": {channel: "chat", required: []string{"apiToken", "phoneNumberIdentification"}, id: "messages.0.id",
		send: func(c Credentials, m Message) (*call, error) {
			to := cmp.Or(m.PhoneNumber, m.To)
			if to == "" {
				return nil, Permanent("whatsapp-business needs the subscriber's phone number")
			}
			return &call{url: origin(c, "https://graph.facebook.com") + "/v18.0/" + val(c.PhoneNumberIdentifier) + "/messages",
				header: bearer(val(c.APIToken)),
				json: map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
					"type": "text", "text": map[string]any{"body": m.Content, "preview_url": false}}}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://graph.facebook.com") + "/v18.0/" + val(c.PhoneNumberIdentifier), header: bearer(val(c.APIToken))}
		})},
}

// Webhook reports whether a chat provider posts to a webhook URL (the
// subscriber's, else the integration's); whatsapp-business does not.
func Webhook(providerID string) bool {
	s, ok := catalog[providerID]
	return ok && s.channel == "chat" && providerID != "whatsapp-business"
}

// chatHook posts shape(m) to the webhook URL and keeps no id: these
// webhooks answer none.
func chatHook(shape func(Message) any) spec {
	return spec{channel: "chat", send: func(c Credentials, m Message) (*call, error) {
		return signed(c, m.WebhookURL, shape(m))
	}, check: checkHEAD("webhookUrl"), checkField: "webhookUrl"}
}

// withRequired is s requiring the given credentials too.
func withRequired(s spec, fields ...string) spec {
	s.required = append(s.required, fields...)
	return s
}

// slackHook posts {text} to an incoming webhook, which answers the text
// "ok"; the request id is the message id Slack gives.
func slackHook() spec {
	return spec{channel: "chat", id: "header:x-slack-req-id", send: func(c Credentials, m Message) (*call, error) {
		return signed(c, m.WebhookURL, map[string]any{"text": m.Content})
	}, failed: flagFailed("ok", "error"), check: checkHEAD("webhookUrl"), checkField: "webhookUrl"}
}

// flagFailed fails a 2xx JSON answer whose boolean field is false, with
// the reason at reason (Slack's ok:false, Rocket.Chat's success:false).
func flagFailed(field, reason string) func(*reply, Message) error {
	return func(r *reply, _ Message) error {
		doc, ok := r.doc.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok := doc[field].(bool); ok && !v {
			return &Error{Msg: "provider refused: " + cmp.Or(pick(doc, reason), "no reason given")}
		}
		return nil
	}
}

// teamsFailed: a legacy Office 365 connector answers 200 with "1" or with
// an error text.
func teamsFailed(r *reply, _ Message) error {
	body := strings.TrimSpace(string(r.body))
	if body == "" || body == "1" || r.doc != nil {
		return nil
	}
	if strings.Contains(strings.ToLower(body), "error") || strings.Contains(body, "failed") {
		return &Error{Msg: "provider refused: " + truncate(body, 500)}
	}
	return nil
}

func withQuery(target, k, v string) string {
	if target == "" {
		return ""
	}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + k + "=" + v
}

package integrations

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
)

// providerProblem is why a create request's providerId cannot serve its
// channel: a provider of another channel, or one Herald cannot deliver
// through (docs/api.md, "What strict clients check": refused at create,
// naming the supported ones).
func providerProblem(providerID, channel string) (field, problem string) {
	info, ok := provider.Lookup(providerID)
	switch {
	case ok && info.Channel != channel:
		return "channel", "provider " + providerID + " belongs to the " + info.Channel + " channel"
	case !ok:
		return "providerId", "Herald cannot deliver " + channel + " through provider " + providerID +
			"; the supported " + channel + " providers are " + strings.Join(provider.Supported(channel), ", ")
	}
	return "", ""
}

// displayNames are the readable names a new integration gets when the request
// names none (the reference platform uses its providers list the same way).
var displayNames = map[string]string{
	"service": "Service Inbox", "nodemailer": "Custom SMTP", "email-webhook": "Email Webhook",
	"generic-sms": "Generic SMS", "push-webhook": "Push Webhook", "chat-webhook": "Chat Webhook",
	"slack": "Slack", "discord": "Discord", "msteams": "MSTeams", "mattermost": "Mattermost",
	"sendgrid": "SendGrid", "mailgun": "Mailgun", "mailjet": "Mailjet", "mandrill": "Mandrill",
	"postmark": "Postmark", "ses": "SES", "resend": "Resend", "sendinblue": "Brevo", "sparkpost": "SparkPost",
	"mailersend": "MailerSend", "outlook365": "Microsoft Outlook365", "twilio": "Twilio", "sns": "SNS",
	"plivo": "Plivo", "nexmo": "Nexmo", "telnyx": "Telnyx", "messagebird": "MessageBird",
	"infobip-sms": "Infobip", "infobip-email": "Infobip", "fcm": "Firebase Cloud Messaging", "apns": "APNS",
	"expo": "Expo Push", "one-signal": "OneSignal", "pushpad": "Pushpad", "pusher-beams": "Pusher Beams",
	"telegram": "Telegram", "whatsapp-business": "WhatsApp Business", "zulip": "Zulip",
	"rocket-chat": "Rocket.Chat", "grafana-on-call": "Grafana On Call", "getstream": "GetStream", "ryver": "Ryver",
}

// DisplayName is the provider's readable name, else its id capitalized.
func DisplayName(providerID string) string {
	if n, ok := displayNames[providerID]; ok || providerID == "" {
		return n
	}
	return strings.ToUpper(providerID[:1]) + providerID[1:]
}

// credentialProblems returns the 422 field problems of creds for providerID:
// malformed URLs, ports and keys always, missing required fields when
// active. Chat providers that post to incoming webhooks (slack, discord,
// msteams, mattermost) require nothing: delivery uses the subscriber's
// webhookUrl for the provider and falls back to the integration's
// (docs/api.md, "What strict clients check").
func credentialProblems(providerID string, creds Credentials, active bool) map[string]platform.FieldError {
	problems := map[string]platform.FieldError{}
	for name, why := range provider.Problems(providerID, creds) {
		problems["credentials."+name] = platform.FieldError{Messages: []string{why}, Value: nil}
	}
	values := credentialValues(creds)
	for _, name := range []string{"webhookUrl", "baseUrl"} {
		if v, ok := values[name]; ok && v != "" && !isHTTPURL(v) {
			problems["credentials."+name] = platform.FieldError{Messages: []string{"must be an http or https URL"}, Value: v}
		}
	}
	if v, ok := values["port"]; ok && v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 65535 {
			problems["credentials.port"] = platform.FieldError{Messages: []string{"must be a port number between 1 and 65535"}, Value: v}
		}
	}
	if active {
		info, _ := provider.Lookup(providerID)
		for _, name := range info.Required {
			if strings.TrimSpace(creds.Value(name)) == "" {
				problems["credentials."+name] = platform.FieldError{
					Messages: []string{"is required for provider " + providerID + " when the integration is active"},
					Value:    nil,
				}
			}
		}
	}
	return problems
}

// credentialValues returns the string credentials keyed by their JSON names.
func credentialValues(creds Credentials) map[string]string {
	out := map[string]string{}
	for _, name := range []string{"webhookUrl", "baseUrl", "port", "host"} {
		out[name] = creds.Value(name)
	}
	return out
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

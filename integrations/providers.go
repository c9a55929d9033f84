package integrations

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// The providers of each channel (spec §2.13, plus the list endpoint's extras).
// A known provider must be created on its own channel; any other providerId
// is accepted as the free string the spec allows.
var channelProviders = map[string][]string{
	"in_app": {"service"},
	"email": {"emailjs", "mailgun", "mailjet", "mandrill", "nodemailer", "postmark", "sendgrid", "sendinblue",
		"ses", "netcore", "infobip-email", "resend", "plunk", "mailersend", "mailtrap", "clickatell", "outlook365",
		"service-email", "sparkpost", "email-webhook", "braze"},
	"sms": {"nexmo", "plivo", "sms77", "sms-central", "sns", "telnyx", "twilio", "gupshup", "firetext", "infobip-sms",
		"burst-sms", "bulk-sms", "isend-sms", "forty-six-elks", "kannel", "maqsam", "termii", "africas-talking",
		"service-sms", "sendchamp", "generic-sms", "clicksend", "bandwidth", "messagebird", "simpletexting",
		"azure-sms", "ring-central", "brevo-sms", "eazy-sms", "mobishastra", "afro-message", "unifonic", "smsmode",
		"imedia", "sinch"},
	"push": {"fcm", "apns", "expo", "one-signal", "pushpad", "push-webhook", "pusher-beams", "appio"},
	"chat": {"slack", "discord", "msteams", "mattermost", "ryver", "zulip", "grafana-on-call", "getstream",
		"rocket-chat", "whatsapp-business", "chat-webhook", "service-slack"},
}

var providerChannels = func() map[string]string {
	m := map[string]string{}
	for ch, ids := range channelProviders {
		for _, id := range ids {
			m[id] = ch
		}
	}
	return m
}()

// providerChannel returns the channel a known provider belongs to.
func providerChannel(providerID string) (string, bool) {
	ch, ok := providerChannels[providerID]
	return ch, ok
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

// displayName is the provider's readable name, else its id capitalized.
func displayName(providerID string) string {
	if n, ok := displayNames[providerID]; ok || providerID == "" {
		return n
	}
	return strings.ToUpper(providerID[:1]) + providerID[1:]
}

// requiredCredentials lists, per provider, the credentials it cannot work
// without; they are checked whenever an integration is (or becomes) active.
//
// Chat providers that post to incoming webhooks (slack, discord, msteams,
// mattermost) require nothing: delivery uses the subscriber's webhookUrl for
// the provider and falls back to the integration's (contract §9). The generic
// webhooks have no subscriber-side URL, so theirs is required. Providers not
// listed require nothing.
var requiredCredentials = map[string][]string{
	"nodemailer":        {"host", "port", "from"},
	"email-webhook":     {"webhookUrl"},
	"push-webhook":      {"webhookUrl"},
	"chat-webhook":      {"webhookUrl"},
	"generic-sms":       {"baseUrl", "from"},
	"sendgrid":          {"apiKey", "from"},
	"mailgun":           {"apiKey", "domain", "from"},
	"mailjet":           {"apiKey", "secretKey", "from"},
	"mandrill":          {"apiKey", "from"},
	"postmark":          {"apiKey", "from"},
	"ses":               {"apiKey", "secretKey", "region", "from"},
	"resend":            {"apiKey", "from"},
	"sendinblue":        {"apiKey", "from"},
	"sparkpost":         {"apiKey", "from"},
	"mailersend":        {"apiKey", "from"},
	"outlook365":        {"from", "password"},
	"twilio":            {"accountSid", "token", "from"},
	"sns":               {"apiKey", "secretKey", "region"},
	"plivo":             {"accountSid", "token", "from"},
	"nexmo":             {"apiKey", "secretKey", "from"},
	"telnyx":            {"apiKey", "from"},
	"messagebird":       {"accessKey"},
	"infobip-sms":       {"baseUrl", "apiKey", "from"},
	"fcm":               {"serviceAccount"},
	"apns":              {"secretKey", "applicationId"},
	"expo":              {"apiKey"},
	"one-signal":        {"applicationId", "apiKey"},
	"pushpad":           {"apiKey", "applicationId"},
	"pusher-beams":      {"instanceId", "secretKey"},
	"whatsapp-business": {"apiToken", "phoneNumberIdentification"},
}

// credentialProblems returns the 422 field problems of creds for providerID:
// malformed URLs and ports always, missing required fields when active.
func credentialProblems(providerID string, creds Credentials, active bool) map[string]platform.FieldError {
	problems := map[string]platform.FieldError{}
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
		for _, name := range requiredCredentials[providerID] {
			if strings.TrimSpace(values[name]) == "" {
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
	b, _ := json.Marshal(creds) // a struct of strings, bools and a map: cannot fail
	var all map[string]any
	json.Unmarshal(b, &all)
	out := map[string]string{}
	for k, v := range all {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

package provider

import "slices"

// Field is one credential of a provider, as a form asks for it.
type Field struct {
	Name     string // the credential's JSON name
	Required bool   // an active integration must have it
	Secret   bool   // once saved, shown by its last four characters only
	Kind     string // text, url, bool or textarea
}

// secretFields are the credentials that grant access: a key, a password, a
// token, or a webhook URL, whose path is the secret.
var secretFields = map[string]bool{
	"apiKey": true, "secretKey": true, "password": true, "token": true, "apiToken": true,
	"serviceAccount": true, "accessKey": true, "authenticationTokenKey": true, "webhookUrl": true,
}

// Secret reports whether the credential field grants access, so that once
// saved it is never shown in full.
func Secret(field string) bool { return secretFields[field] }

// boolFields are the credentials that are switches rather than text.
var boolFields = map[string]bool{
	"secure": true, "requireTls": true, "ignoreTls": true, "hmac": true, "authenticateByToken": true,
	"autoCreateSubscribers": true,
}

// optionalFields are what each provider reads beyond its required
// credentials and the fields every provider of its kind reads (Fields).
var optionalFields = map[string][]string{
	"service":     {"hmac", "autoCreateSubscribers"},
	"nodemailer":  {"user", "password", "secure", "requireTls", "ignoreTls"},
	"emailjs":     {"port", "user", "password", "secure"},
	"outlook365":  {"user"},
	"generic-sms": {"apiKey", "apiKeyRequestHeader", "secretKey", "secretKeyRequestHeader", "idPath", "datePath"},
	"ses":         {"senderName"},
	"sns":         {"from"},
}

// Fields lists the credentials of providerID a form asks for, required ones
// first: its required credentials, then what it reads beyond them: a
// sender's name for email, the API's origin (baseUrl) for a provider
// called over HTTP, the webhook URL and its signature for a webhook.
func Fields(providerID string) []Field {
	s, ok := catalog[providerID]
	if !ok {
		return nil
	}
	names := slices.Clone(s.required)
	add := func(more ...string) {
		for _, n := range more {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if s.channel == "email" {
		add("from", "senderName")
	}
	if s.channel == "chat" && providerID != "whatsapp-business" {
		add("webhookUrl")
	}
	add(optionalFields[providerID]...)
	if s.send != nil {
		add("baseUrl")
	}
	if slices.Contains(names, "webhookUrl") || providerID == "generic-sms" {
		add("hmac", "secretKey")
	}
	out := make([]Field, len(names))
	for i, n := range names {
		out[i] = Field{Name: n, Required: slices.Contains(s.required, n), Secret: secretFields[n], Kind: kindOf(providerID, n)}
	}
	return out
}

func kindOf(providerID, field string) string {
	switch {
	case boolFields[field]:
		return "bool"
	case field == "serviceAccount" || providerID == "apns" && field == "secretKey":
		return "textarea" // a service account's JSON, an APNs key
	case field == "baseUrl" || field == "webhookUrl":
		return "url"
	}
	return "text"
}

// Unset clears the string credential with the JSON name field; unknown
// names are ignored.
func (c *Credentials) Unset(field string) {
	if p, ok := c.pointers()[field]; ok {
		*p = nil
	}
}

// Bool returns the switch credential with the JSON name field, and whether
// it is set.
func (c Credentials) Bool(field string) (on, set bool) {
	if p := c.switches()[field]; p != nil && *p != nil {
		return **p, true
	}
	return false, false
}

// SetBool sets the switch credential with the JSON name field; unknown
// names are ignored.
func (c *Credentials) SetBool(field string, v bool) {
	if p, ok := c.switches()[field]; ok {
		*p = &v
	}
}

func (c *Credentials) switches() map[string]**bool {
	return map[string]**bool{"secure": &c.Secure, "requireTls": &c.RequireTLS, "ignoreTls": &c.IgnoreTLS,
		"hmac": &c.HMAC, "authenticateByToken": &c.AuthenticateByToken, "autoCreateSubscribers": &c.AutoCreateSubscribers}
}

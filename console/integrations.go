package console

import (
	"net/http"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
)

// integrationChannels are the channels, in the order the page lists them.
var integrationChannels = []string{"in_app", "email", "sms", "chat", "push"}

// integrationGroup is one channel's integrations.
type integrationGroup struct {
	Channel      string
	Integrations []integrations.Integration
	Primary      bool // the channel has a primary (email and sms)
}

// handleIntegrations serves GET /console/env/{env}/integrations: the
// environment's integrations by channel, with their active and primary
// switches.
func handleIntegrations(in Integrations) handler {
	return func(p *page) error {
		list, err := in.Integrations(p.r.Context(), p.env.ID)
		if err != nil {
			return err
		}
		var groups []integrationGroup
		for _, ch := range integrationChannels {
			g := integrationGroup{Channel: ch, Primary: ch == "email" || ch == "sms"}
			for _, it := range list {
				if it.Channel == ch {
					g.Integrations = append(g.Integrations, it)
				}
			}
			groups = append(groups, g)
		}
		return p.render("integrations", "integrations", "Integrations", groups)
	}
}

// providerChoice is a provider the new-integration page offers.
type providerChoice struct {
	ID, Name string
}

// handleIntegrationNew serves GET /console/env/{env}/integrations/new: the
// providers of each channel to choose from, then, with ?provider=, the
// form the catalog makes for it.
func handleIntegrationNew() handler {
	return func(p *page) error {
		id := p.r.URL.Query().Get("provider")
		if id == "" {
			choices := map[string][]providerChoice{}
			for _, ch := range integrationChannels {
				for _, pid := range provider.Supported(ch) {
					choices[ch] = append(choices[ch], providerChoice{ID: pid, Name: integrations.DisplayName(pid)})
				}
			}
			return p.render("integration_new", "integrations", "New integration",
				struct {
					Channels []string
					Choices  map[string][]providerChoice
				}{integrationChannels, choices})
		}
		info, ok := provider.Lookup(id)
		if !ok {
			return notFoundProvider(id)
		}
		f := form{Values: map[string][]string{"name": {integrations.DisplayName(id)}}, Errors: map[string]string{}}
		return renderIntegrationForm(p, integrationForm{Provider: id, Channel: info.Channel, Form: f}, http.StatusOK)
	}
}

// integrationForm is what the integration form shows: a new one's or an
// existing one's, the credentials the catalog lists for its provider, and
// the answer of a check.
type integrationForm struct {
	ID       string // "" for a new integration
	Provider string
	Channel  string
	Saved    integrations.Integration // an existing one as stored
	Form     form
	Fields   []credentialField
	Check    *checkResult
	Primary  bool // the channel has a primary
}

// credentialField is one credential as the form shows it.
type credentialField struct {
	provider.Field
	Label string
	Value string // a text credential's value; never a secret's
	Saved string // a saved secret, by its last four characters
	On    bool   // a switch's state
}

// checkResult is how a check went.
type checkResult struct {
	OK      bool
	Dialed  bool // the provider was called, not only the credentials' form checked
	Message string
}

func renderIntegrationForm(p *page, data integrationForm, status int) error {
	data.Primary = data.Channel == "email" || data.Channel == "sms"
	for _, fl := range provider.Fields(data.Provider) {
		cf := credentialField{Field: fl, Label: credentialLabel(fl.Name)}
		name := "credentials." + fl.Name
		saved := data.Saved.Credentials
		switch {
		case fl.Kind == "bool":
			cf.On, _ = saved.Bool(fl.Name)
			if data.Form.Values.Has("_csrf") {
				cf.On = data.Form.Checked(name)
			}
		case fl.Secret:
			cf.Saved = lastFour(saved.Value(fl.Name))
		case data.Form.Values.Has(name) || data.Form.Values.Has("_csrf"):
			cf.Value = data.Form.Value(name)
		default:
			cf.Value = saved.Value(fl.Name)
		}
		data.Fields = append(data.Fields, cf)
	}
	title := "New " + integrations.DisplayName(data.Provider) + " integration"
	if data.ID != "" {
		title = data.Saved.Name
	}
	return p.renderStatus(status, "integration", "integrations", title, data)
}

// credentialLabels are the credentials as people call them.
var credentialLabels = map[string]string{
	"apiKey": "API key", "secretKey": "Secret key", "apiToken": "API token", "accountSid": "Account SID",
	"from": "From", "senderName": "Sender name", "baseUrl": "Base URL", "webhookUrl": "Webhook URL",
	"serviceAccount": "Service account (JSON)", "applicationId": "Application ID", "projectName": "Project name",
	"requireTls": "Require TLS", "ignoreTls": "Ignore TLS", "hmac": "Sign with HMAC", "secure": "Secure (TLS)",
	"autoCreateSubscribers": "Inbox sessions may create subscribers", "phoneNumberIdentification": "Phone number ID",
	"clientId": "Client ID", "instanceId": "Instance ID", "channelId": "Channel ID", "accessKey": "Access key",
	"idPath": "Message id path", "datePath": "Date path", "apiKeyRequestHeader": "API key header",
	"secretKeyRequestHeader": "Secret key header", "appSid": "App SID", "senderId": "Sender ID",
}

// credentialLabel is a credential's label: its name as people call it,
// else its JSON name.
func credentialLabel(name string) string {
	if l, ok := credentialLabels[name]; ok {
		return l
	}
	if name == "" {
		return name
	}
	return string(name[0]-'a'+'A') + name[1:]
}

// credentialsFrom is the credentials the form gives, over saved: each
// field of the provider's form takes what was typed (an emptied one is
// unset), a switch whether it is ticked, and a secret left empty keeps
// what is saved, since the page never shows it to be typed again;
// credentials the form does not list stay.
func credentialsFrom(f form, providerID string, saved integrations.Credentials) integrations.Credentials {
	c := saved
	for _, fl := range provider.Fields(providerID) {
		name := "credentials." + fl.Name
		v := f.Value(name)
		if fl.Kind == "textarea" {
			v = f.Raw(name)
		}
		switch {
		case fl.Kind == "bool":
			c.SetBool(fl.Name, f.Checked(name))
		case fl.Secret && v == "":
		case v == "":
			c.Unset(fl.Name)
		default:
			c.Set(fl.Name, v)
		}
	}
	return c
}

func notFoundProvider(id string) error {
	return platform.NotFound("Herald delivers through no provider %q", id)
}

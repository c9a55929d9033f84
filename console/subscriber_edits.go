package console

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// profileFields are the profile's form fields, named as the API names them.
var profileFields = []string{"firstName", "lastName", "email", "phone", "avatar", "locale", "timezone", "data"}

// subscriberURL is the path of the page's subscriber.
func (p *page) subscriberURL() string { return p.envURL("subscribers", p.r.PathValue("subscriberId")) }

// handleProfileSave serves POST /console/env/{env}/subscribers/{subscriberId}/profile:
// the profile's fields, under the rules of PATCH /v2/subscribers/{subscriberId}.
func handleProfileSave(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		prof := subscribers.Profile{FirstName: f.Value("firstName"), LastName: f.Value("lastName"), Email: f.Value("email"),
			Phone: f.Value("phone"), Avatar: f.Value("avatar"), Locale: f.Value("locale"), Timezone: f.Value("timezone"),
			Data: f.Value("data"), Set: profileFields}
		_, err := d.Subscribers.UpdateProfile(p.r.Context(), p.tenant(), p.r.PathValue("subscriberId"), prof)
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderSubscriber(p, d, subscriberData{Form: f}, http.StatusUnprocessableEntity)
		}
		return p.redirect(p.subscriberURL(), "The profile is saved.")
	}
}

// handleCredentialsSave serves POST
// /console/env/{env}/subscribers/{subscriberId}/credentials: a webhook URL
// set, or a device token added, for one provider, as PATCH
// /v1/subscribers/{subscriberId}/credentials merges them.
func handleCredentialsSave(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, env, id := p.r.Context(), p.env.ID, p.r.PathValue("subscriberId")
		provider := f.Value("providerId")
		var creds subscribers.Credentials
		if u := f.Value("credentials.webhookUrl"); u != "" {
			creds.WebhookURL = &u
		}
		if token := f.Value("credentials.deviceToken"); token != "" {
			sub, err := d.Subscribers.Subscriber(ctx, env, id)
			if err != nil {
				return err
			}
			creds.DeviceTokens = append(tokensOf(sub, provider), token)
		}
		if creds.WebhookURL == nil && creds.DeviceTokens == nil {
			f.fail("credentials.webhookUrl", "give a webhook URL or a device token")
		} else if _, err := d.Subscribers.SetCredentials(ctx, env, id, provider, creds); err != nil {
			if !f.refused(err) {
				return err
			}
		}
		if f.Invalid() {
			if e, ok := f.Errors["credentials.deviceTokens"]; ok {
				f.Errors["credentials.deviceToken"] = e
			}
			return renderSubscriber(p, d, subscriberData{CredForm: f}, http.StatusUnprocessableEntity)
		}
		return p.redirect(p.subscriberURL()+"#channels", "The "+provider+" credentials are saved.")
	}
}

// tokensOf is the subscriber's device tokens for provider.
func tokensOf(sub subscribers.Subscriber, provider string) []string {
	var out []string
	for _, c := range sub.Channels {
		if c.ProviderID == provider {
			out = append(out, c.Credentials.DeviceTokens...)
		}
	}
	return out
}

// handleCredentialsRemove serves POST
// /console/env/{env}/subscribers/{subscriberId}/credentials/remove: one
// device token, named by its fingerprint (the page never holds a whole
// one), or the provider's whole channel.
func handleCredentialsRemove(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, env, id := p.r.Context(), p.env.ID, p.r.PathValue("subscriberId")
		provider := f.Value("providerId")
		if f.Value("token") == "" {
			if err := d.Subscribers.RemoveChannel(ctx, env, id, provider); err != nil {
				return err
			}
			return p.redirect(p.subscriberURL()+"#channels", "The "+provider+" channel is removed.")
		}
		sub, err := d.Subscribers.Subscriber(ctx, env, id)
		if err != nil {
			return err
		}
		for _, t := range tokensOf(sub, provider) {
			if fingerprint(t) == f.Value("token") {
				if err := d.Subscribers.RemoveDeviceTokens(ctx, env, id, provider, []string{t}); err != nil {
					return err
				}
				return p.redirect(p.subscriberURL()+"#channels", "The device token is removed.")
			}
		}
		return platform.Conflict("That device token is gone already; reload the page")
	}
}

// fingerprint names a device token in a form without holding it: the
// first bytes of its SHA-256.
func fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// handlePreferenceSet serves POST
// /console/env/{env}/subscribers/{subscriberId}/preferences: one channel
// of one workflow (or of all, globally) on or off, as the subscriber would
// set it.
func handlePreferenceSet(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		enabled := f.Values["enabled"]
		on := len(enabled) > 0 && enabled[len(enabled)-1] == "true" // the switch's value follows its hidden off
		err := d.Subscribers.SetPreference(p.r.Context(), p.env.ID, p.r.PathValue("subscriberId"), f.Value("workflow"),
			f.Value("channel"), on)
		if err != nil {
			return err
		}
		state := "off"
		if on {
			state = "on"
		}
		what := "all workflows"
		if w := f.Value("workflow"); w != "" {
			what = w
		}
		return p.redirect(p.subscriberURL()+"#preferences", channelName(f.Value("channel"))+" is "+state+" for "+what+".")
	}
}

// handleSubscriberTopics serves POST
// /console/env/{env}/subscribers/{subscriberId}/topics: the subscriber
// joins the topic with key, or, with remove, leaves it.
func handleSubscriberTopics(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, id, key := p.r.Context(), p.r.PathValue("subscriberId"), f.Value("key")
		var err error
		if f.Checked("remove") {
			_, err = d.Topics.Unsubscribe(ctx, p.env.ID, key, []string{id})
		} else {
			_, err = d.Topics.Subscribe(ctx, p.tenant(), key, []string{id})
		}
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderSubscriber(p, d, subscriberData{TopicProblem: strings.TrimSpace(f.Problem + " " + f.Errors["subscribers"])},
				http.StatusUnprocessableEntity)
		}
		if f.Checked("remove") {
			return p.redirect(p.subscriberURL()+"#topics", "Left the topic "+key+".")
		}
		return p.redirect(p.subscriberURL()+"#topics", "Joined the topic "+key+".")
	}
}

package console

import (
	"errors"
	"net/http"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
)

// handleIntegration serves GET /console/env/{env}/integrations/{id}: the
// integration's form, its secrets by their last four characters.
func handleIntegration(in Integrations) handler {
	return func(p *page) error {
		it, err := in.Integration(p.r.Context(), p.tenant(), p.r.PathValue("id"))
		if err != nil {
			return err
		}
		f := form{Values: map[string][]string{"name": {it.Name}, "identifier": {it.Identifier}}, Errors: map[string]string{}}
		if it.Active {
			f.Values.Set("active", "true")
		}
		return renderIntegrationForm(p, integrationForm{ID: it.ID, Provider: it.ProviderID, Channel: it.Channel, Saved: it, Form: f},
			http.StatusOK)
	}
}

// handleIntegrationCreate serves POST /console/env/{env}/integrations: a
// new integration from the catalog's form, under the rules of POST
// /v1/integrations.
func handleIntegrationCreate(in Integrations) handler {
	return func(p *page) error {
		f := newForm(p.r)
		id := f.Value("providerId")
		info, ok := provider.Lookup(id)
		if !ok {
			return notFoundProvider(id)
		}
		name, identifier, active := f.Value("name"), f.Value("identifier"), f.Checked("active")
		creds := credentialsFrom(f, id, integrations.Credentials{})
		req := integrations.CreateRequest{ProviderID: id, Channel: info.Channel, Name: &name, Active: &active, Credentials: &creds}
		if identifier != "" {
			req.Identifier = &identifier
		}
		it, _, err := in.Create(p.r.Context(), p.tenant(), req)
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderIntegrationForm(p, integrationForm{Provider: id, Channel: info.Channel, Form: f}, statusOf(err))
		}
		return p.redirect(p.envURL("integrations", it.ID), it.Name+" is created.")
	}
}

// handleIntegrationUpdate serves POST /console/env/{env}/integrations/{id}:
// the form's changes, under the rules of PUT
// /v1/integrations/{integrationId}; a secret left empty stays as saved.
func handleIntegrationUpdate(in Integrations) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, tenant := p.r.Context(), p.tenant()
		saved, err := in.Integration(ctx, tenant, p.r.PathValue("id"))
		if err != nil {
			return err
		}
		name, identifier, active := f.Value("name"), f.Value("identifier"), f.Checked("active")
		creds := credentialsFrom(f, saved.ProviderID, saved.Credentials)
		req := integrations.UpdateRequest{Name: &name, Active: &active, Credentials: &creds}
		if identifier != "" {
			req.Identifier = &identifier // an emptied one stays as it is
		}
		if _, _, err := in.Update(ctx, tenant, saved.ID, req); err != nil {
			if !f.refused(err) {
				return err
			}
			return renderIntegrationForm(p, integrationForm{ID: saved.ID, Provider: saved.ProviderID, Channel: saved.Channel,
				Saved: saved, Form: f}, statusOf(err))
		}
		return p.redirect(p.envURL("integrations", saved.ID), name+" is saved.")
	}
}

// handleIntegrationCheck serves POST /console/env/{env}/integrations/check:
// the form's credentials tried with the provider, as check: true tries
// them, and nothing saved; the answer is shown on the form.
func handleIntegrationCheck(in Integrations) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, tenant := p.r.Context(), p.tenant()
		data := integrationForm{Provider: f.Value("providerId"), Form: f}
		if id := f.Value("id"); id != "" {
			saved, err := in.Integration(ctx, tenant, id)
			if err != nil {
				return err
			}
			data.ID, data.Saved, data.Provider = saved.ID, saved, saved.ProviderID
		}
		info, ok := provider.Lookup(data.Provider)
		if !ok {
			return notFoundProvider(data.Provider)
		}
		data.Channel = info.Channel
		checked, err := in.Check(ctx, data.Provider, credentialsFrom(f, data.Provider, data.Saved.Credentials))
		var e *platform.Error
		switch {
		case err == nil:
			data.Check = &checkResult{OK: true, Dialed: checked == "dialed"}
		case errors.As(err, &e) && e.Status < 500:
			data.Check = &checkResult{Message: problemOf(e)}
			f.refused(err)
			data.Form = f
		default:
			return err
		}
		return renderIntegrationForm(p, data, http.StatusOK)
	}
}

// handleIntegrationActive serves POST
// /console/env/{env}/integrations/{id}/active: the integration on or off.
// An active one must have the credentials its provider requires.
func handleIntegrationActive(in Integrations) handler {
	return func(p *page) error {
		f := newForm(p.r)
		values := f.Values["active"]
		on := len(values) > 0 && values[len(values)-1] == "true" // the switch's value follows its hidden off
		it, _, err := in.Update(p.r.Context(), p.tenant(), p.r.PathValue("id"), integrations.UpdateRequest{Active: &on})
		if err != nil {
			return err
		}
		state := "off"
		if it.Active {
			state = "on"
		}
		return p.redirect(p.envURL("integrations"), it.Name+" is "+state+".")
	}
}

// handleIntegrationPrimary serves POST
// /console/env/{env}/integrations/{id}/primary: the channel's primary,
// which email and sms send through.
func handleIntegrationPrimary(in Integrations) handler {
	return func(p *page) error {
		it, err := in.SetPrimary(p.r.Context(), p.tenant(), p.r.PathValue("id"))
		if err != nil {
			return err
		}
		return p.redirect(p.envURL("integrations"), it.Name+" is the primary "+channelName(it.Channel)+" integration.")
	}
}

// handleIntegrationDelete serves POST
// /console/env/{env}/integrations/{id}/delete.
func handleIntegrationDelete(in Integrations) handler {
	return func(p *page) error {
		if err := in.Delete(p.r.Context(), p.tenant(), p.r.PathValue("id")); err != nil {
			return err
		}
		return p.redirect(p.envURL("integrations"), "The integration is deleted.")
	}
}

// statusOf is the status of a refusal, 422 when it names none.
func statusOf(err error) int {
	var e *platform.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return http.StatusUnprocessableEntity
}

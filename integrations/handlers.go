package integrations

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// handleIntegrationCreate serves POST /v1/integrations (docs/api.md,
// "The write side"): a new integration, inactive unless the body says
// otherwise, in the caller's environment or the organization's environment
// named by _environmentId.
func handleIntegrationCreate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer platform.Wrap(&err, "create integration")
		ctx := r.Context()
		req, err := platform.Decode[createRequest](r)
		if err != nil {
			return err
		}
		tenant := platform.TenantFrom(ctx)
		envID, err := targetEnvironment(ctx, store, tenant, req.EnvironmentID)
		if err != nil {
			return err
		}
		in := integration{
			ID:             sqldb.NewIDAt(store.now()),
			OrganizationID: tenant.OrganizationID,
			EnvironmentID:  envID,
			Name:           displayName(strings.TrimSpace(req.ProviderID)),
			ProviderID:     strings.TrimSpace(req.ProviderID),
			Channel:        req.Channel,
			Active:         req.Active != nil && *req.Active,
			Conditions:     req.Conditions,
			Configurations: applyConfigurations(Configurations{}, req.Configurations),
		}
		if req.Name != nil && strings.TrimSpace(*req.Name) != "" {
			in.Name = *req.Name
		}
		if req.Credentials != nil {
			in.Credentials = *req.Credentials
		}
		if err := store.validateCredentials(ctx, w, in, req.Check != nil && *req.Check); err != nil {
			return err
		}
		explicit := req.Identifier != nil && strings.TrimSpace(*req.Identifier) != ""
		// A generated identifier that collides (one chance in 36^6) gets a fresh suffix.
		for attempt := 0; ; attempt++ {
			in.Identifier = generateIdentifier(in.Name)
			if explicit {
				in.Identifier = *req.Identifier
			}
			out, err := store.insert(ctx, in)
			switch {
			case errors.Is(err, errIdentifierTaken) && (explicit || attempt == 2):
				return platform.Conflict("Integration with identifier %s already exists", in.Identifier)
			case errors.Is(err, errIdentifierTaken):
				continue
			case err != nil:
				return err
			}
			return platform.JSON(w, http.StatusCreated, out.response(true, false))
		}
	})
}

// handleIntegrationList serves GET /v1/integrations: the whole organization's
// live integrations, each with its _environmentId, without configurations
// (docs/api.md, "Integrations").
func handleIntegrationList(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer platform.Wrap(&err, "list integrations")
		list, err := store.listOrganization(r.Context(), platform.TenantFrom(r.Context()).OrganizationID)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, listResponse(list))
	})
}

// handleIntegrationActiveList serves GET /v1/integrations/active: the caller's
// environment's active integrations (docs/api.md, "The write side").
func handleIntegrationActiveList(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer platform.Wrap(&err, "list active integrations")
		list, err := store.listEnvironment(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, true)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, listResponse(list))
	})
}

// handleIntegrationUpdate serves PUT /v1/integrations/{integrationId}
// (docs/api.md, "Integrations"): only the given fields change; credentials,
// when given, replace the stored ones, as the reference platform does;
// `configurations: {}` changes nothing (docs/api.md,
// "What strict clients check"). The result, when active, must have the
// provider's required credentials, and check: true tries the provider before
// saving.
func handleIntegrationUpdate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		id := r.PathValue("integrationId")
		defer platform.Wrap(&err, "update integration %s", id)
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		cur, err := findIntegration(ctx, store, tenant.OrganizationID, id)
		if err != nil {
			return err
		}
		req, err := platform.Decode[updateRequest](r)
		if err != nil {
			return err
		}
		if req.empty() {
			return platform.BadRequest("No properties found for update")
		}
		next := cur
		if req.EnvironmentID != nil && *req.EnvironmentID != cur.EnvironmentID {
			if next.EnvironmentID, err = targetEnvironment(ctx, store, tenant, req.EnvironmentID); err != nil {
				return err
			}
		}
		if req.Name != nil {
			next.Name = *req.Name
		}
		if req.Identifier != nil {
			next.Identifier = *req.Identifier
		}
		if req.Active != nil {
			next.Active = *req.Active
		}
		if req.Credentials != nil {
			next.Credentials = *req.Credentials
		}
		if req.Conditions != nil {
			next.Conditions = req.Conditions
		}
		next.Configurations = applyConfigurations(cur.Configurations, req.Configurations)
		if err := store.validateCredentials(ctx, w, next, req.Check != nil && *req.Check); err != nil {
			return err
		}
		out, err := store.update(ctx, next, cur)
		switch {
		case errors.Is(err, errIdentifierTaken):
			return platform.Conflict("Integration with identifier %s already exists", next.Identifier)
		case errors.Is(err, platform.ErrNotFound):
			return platform.NotFound("Integration %s not found", id)
		case err != nil:
			return err
		}
		return platform.JSON(w, http.StatusOK, out.response(true, true))
	})
}

// handleIntegrationSetPrimary serves POST
// /v1/integrations/{integrationId}/set-primary (docs/api.md,
// "The write side"): the integration becomes its channel's only primary in
// the caller's environment and, as in the reference platform, is activated
// and loses its conditions. Only email and sms have a primary.
func handleIntegrationSetPrimary(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		id := r.PathValue("integrationId")
		defer platform.Wrap(&err, "set primary integration %s", id)
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		cur, err := findIntegration(ctx, store, tenant.OrganizationID, id)
		if err != nil {
			return err
		}
		if cur.EnvironmentID != tenant.EnvironmentID {
			return platform.NotFound("Integration %s not found", id) // per environment (docs/api.md, "Keys and environments")
		}
		if !hasPrimary(cur.Channel) {
			return platform.InvalidField("channel", cur.Channel, "Channel %s does not support primary", cur.Channel)
		}
		if cur.Primary {
			return platform.JSON(w, http.StatusOK, cur.response(false, false))
		}
		activated := cur
		activated.Active, activated.Conditions = true, nil
		if err := store.validateCredentials(ctx, w, activated, false); err != nil {
			return err
		}
		out, err := store.setPrimary(ctx, cur)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Integration %s not found", id)
		}
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, out.response(false, false))
	})
}

// handleIntegrationDelete serves DELETE /v1/integrations/{integrationId}
// (docs/api.md, "Integrations"): an irreversible soft delete by the key's
// user, answered with the caller's environment's remaining integrations, as
// the reference does.
func handleIntegrationDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		id := r.PathValue("integrationId")
		defer platform.Wrap(&err, "delete integration %s", id)
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		cur, err := findIntegration(ctx, store, tenant.OrganizationID, id)
		if err != nil {
			return err
		}
		err = store.softDelete(ctx, cur, tenant.UserID)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Integration %s not found", id)
		}
		if err != nil {
			return err
		}
		list, err := store.listEnvironment(ctx, tenant.EnvironmentID, false)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, listResponse(list))
	})
}

// findIntegration returns the organization's live integration id, or a 404
// that names it (a malformed id is a 404 too, docs/api.md,
// "Identifiers and timestamps").
func findIntegration(ctx context.Context, store *Store, organizationID, id string) (integration, error) {
	if !sqldb.IsID(id) {
		return integration{}, platform.NotFound("Integration %s not found", id)
	}
	in, err := store.find(ctx, organizationID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return integration{}, platform.NotFound("Integration %s not found", id)
	}
	return in, err
}

// targetEnvironment returns the environment a body's _environmentId names,
// which must be one of the caller's organization; the caller's own when nil.
func targetEnvironment(ctx context.Context, store *Store, tenant platform.Tenant, requested *string) (string, error) {
	if requested == nil || *requested == tenant.EnvironmentID {
		return tenant.EnvironmentID, nil
	}
	env, err := platform.FindEnvironment(ctx, store.db, tenant.OrganizationID, *requested)
	if errors.Is(err, platform.ErrNotFound) {
		return "", platform.InvalidField("_environmentId", *requested, "is not an environment of this organization")
	}
	return env.ID, err
}

// validateCredentials applies the provider's credential rules to in: the
// required fields when in is active or is to be checked, then the check,
// whose kind it names in w's CheckHeader. Nothing is saved when either
// fails.
func (s *Store) validateCredentials(ctx context.Context, w http.ResponseWriter, in integration, check bool) error {
	if problems := credentialProblems(in.ProviderID, in.Credentials, in.Active || check); len(problems) > 0 {
		return platform.Invalid(problems)
	}
	if !check {
		return nil
	}
	dialed, err := s.checkProvider(ctx, in.ProviderID, in.Credentials)
	if err != nil {
		return err
	}
	if dialed {
		w.Header().Set(CheckHeader, "dialed")
	} else {
		w.Header().Set(CheckHeader, "shape")
	}
	return nil
}

// applyConfigurations merges the given configurations into cur (absent
// fields keep their value, so {} changes nothing) and generates a signing key
// when inbound webhooks are on without one.
func applyConfigurations(cur Configurations, patch *Configurations) Configurations {
	if patch != nil {
		if patch.InboundWebhookEnabled != nil {
			cur.InboundWebhookEnabled = patch.InboundWebhookEnabled
		}
		if patch.InboundWebhookSigningKey != nil {
			cur.InboundWebhookSigningKey = patch.InboundWebhookSigningKey
		}
	}
	if cur.InboundWebhookEnabled != nil && *cur.InboundWebhookEnabled &&
		(cur.InboundWebhookSigningKey == nil || *cur.InboundWebhookSigningKey == "") {
		b := make([]byte, 32)
		rand.Read(b)
		key := hex.EncodeToString(b)
		cur.InboundWebhookSigningKey = &key
	}
	return cur
}

// generateIdentifier is the slug of name plus a short random suffix, as the
// reference platform builds identifiers (docs/api.md, "Integrations").
func generateIdentifier(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimSuffix(b.String(), "-")
	if slug == "" {
		slug = "integration"
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	suffix := make([]byte, 6)
	rand.Read(suffix)
	for i := range suffix {
		suffix[i] = alphabet[int(suffix[i])%len(alphabet)]
	}
	return slug + "-" + string(suffix)
}

// listResponse shapes a list for the wire: no configurations, no update-only
// credentials, and [] rather than null when empty.
func listResponse(list []integration) []integrationResponse {
	out := make([]integrationResponse, 0, len(list))
	for _, in := range list {
		out = append(out, in.response(false, false))
	}
	return out
}

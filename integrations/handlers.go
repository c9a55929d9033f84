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
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[CreateRequest](r)
		if err != nil {
			return err
		}
		out, checked, err := store.create(r.Context(), platform.TenantFrom(r.Context()), req)
		if err != nil {
			return err
		}
		setCheckHeader(w, checked)
		return platform.JSON(w, http.StatusCreated, out.response(true, false))
	})
}

// setCheckHeader tells the client how its credentials were checked, when
// they were (CheckHeader).
func setCheckHeader(w http.ResponseWriter, checked string) {
	if checked != "" {
		w.Header().Set(CheckHeader, checked)
	}
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
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, id := r.Context(), r.PathValue("integrationId")
		tenant := platform.TenantFrom(ctx)
		if _, err := findIntegration(ctx, store, tenant.OrganizationID, id); err != nil {
			return err
		}
		req, err := platform.Decode[UpdateRequest](r)
		if err != nil {
			return err
		}
		out, checked, err := store.change(ctx, tenant, id, req)
		if err != nil {
			return err
		}
		setCheckHeader(w, checked)
		return platform.JSON(w, http.StatusOK, out.response(true, true))
	})
}

// handleIntegrationSetPrimary serves POST
// /v1/integrations/{integrationId}/set-primary (docs/api.md,
// "The write side"): the integration becomes its channel's only primary in
// the caller's environment and, as in the reference platform, is activated
// and loses its conditions. Only email and sms have a primary.
func handleIntegrationSetPrimary(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		out, err := store.makePrimary(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("integrationId"))
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
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		if err := store.Delete(ctx, tenant, r.PathValue("integrationId")); err != nil {
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
// whose kind it returns (CheckHeader; "" without one). Nothing is saved
// when either fails.
func (s *Store) validateCredentials(ctx context.Context, in integration, check bool) (checked string, err error) {
	if problems := credentialProblems(in.ProviderID, in.Credentials, in.Active || check); len(problems) > 0 {
		return "", platform.Invalid(problems)
	}
	if !check {
		return "", nil
	}
	dialed, err := s.checkProvider(ctx, in.ProviderID, in.Credentials)
	if err != nil {
		return "", err
	}
	if dialed {
		return "dialed", nil
	}
	return "shape", nil
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

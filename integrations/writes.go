package integrations

import (
	"context"
	"errors"
	"strings"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Create adds an integration under the rules of POST /v1/integrations
// (docs/api.md, "The write side"): req is validated as the API validates
// its body, and with Check the provider is tried before anything is saved.
// checked says how it was checked (CheckHeader; "" without Check).
func (s *Store) Create(ctx context.Context, tenant platform.Tenant, req CreateRequest) (out Integration, checked string, err error) {
	if err := platform.ValidateRequest(ctx, req); err != nil {
		return out, "", err
	}
	in, checked, err := s.create(ctx, tenant, req)
	return in.public(), checked, err
}

// create is Create's write, of a request already validated.
func (s *Store) create(ctx context.Context, tenant platform.Tenant, req CreateRequest) (out integration, checked string, err error) {
	defer platform.Wrap(&err, "create integration")
	envID, err := targetEnvironment(ctx, s, tenant, req.EnvironmentID)
	if err != nil {
		return out, "", err
	}
	in := integration{
		ID:             sqldb.NewIDAt(s.now()),
		OrganizationID: tenant.OrganizationID,
		EnvironmentID:  envID,
		Name:           DisplayName(strings.TrimSpace(req.ProviderID)),
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
	if err := provider.PrepareCredentials(in.ProviderID, &in.Credentials, nil); err != nil {
		return out, "", err
	}
	if checked, err = s.validateCredentials(ctx, in, req.Check != nil && *req.Check); err != nil {
		return out, "", err
	}
	explicit := req.Identifier != nil && strings.TrimSpace(*req.Identifier) != ""
	// A generated identifier that collides (one chance in 36^6) gets a fresh suffix.
	for attempt := 0; ; attempt++ {
		in.Identifier = generateIdentifier(in.Name)
		if explicit {
			in.Identifier = *req.Identifier
		}
		out, err = s.insert(ctx, in)
		switch {
		case errors.Is(err, errIdentifierTaken) && (explicit || attempt == 2):
			return out, "", platform.Conflict("Integration with identifier %s already exists", in.Identifier)
		case errors.Is(err, errIdentifierTaken):
			continue
		}
		return out, checked, err
	}
}

// Update changes the organization's integration id under the rules of PUT
// /v1/integrations/{integrationId} (docs/api.md, "Integrations"): only the
// given fields change, given credentials replace the stored ones, and with
// Check the provider is tried first.
func (s *Store) Update(ctx context.Context, tenant platform.Tenant, id string, req UpdateRequest) (out Integration, checked string, err error) {
	if err := platform.ValidateRequest(ctx, req); err != nil {
		return out, "", err
	}
	in, checked, err := s.change(ctx, tenant, id, req)
	return in.public(), checked, err
}

// change is Update's write, of a request already validated.
func (s *Store) change(ctx context.Context, tenant platform.Tenant, id string, req UpdateRequest) (out integration, checked string, err error) {
	defer platform.Wrap(&err, "update integration %s", id)
	cur, err := findIntegration(ctx, s, tenant.OrganizationID, id)
	if err != nil {
		return out, "", err
	}
	if req.empty() {
		return out, "", platform.BadRequest("No properties found for update")
	}
	next := cur
	if req.EnvironmentID != nil && *req.EnvironmentID != cur.EnvironmentID {
		if next.EnvironmentID, err = targetEnvironment(ctx, s, tenant, req.EnvironmentID); err != nil {
			return out, "", err
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
	if next.ProviderID == cur.ProviderID {
		if err := provider.PrepareCredentials(next.ProviderID, &next.Credentials, &cur.Credentials); err != nil {
			return out, "", err
		}
	}
	if req.Conditions != nil {
		next.Conditions = req.Conditions
	}
	next.Configurations = applyConfigurations(cur.Configurations, req.Configurations)
	if checked, err = s.validateCredentials(ctx, next, req.Check != nil && *req.Check); err != nil {
		return out, "", err
	}
	out, err = s.update(ctx, next, cur)
	switch {
	case errors.Is(err, errIdentifierTaken):
		return out, "", platform.Conflict("Integration with identifier %s already exists", next.Identifier)
	case errors.Is(err, platform.ErrNotFound):
		return out, "", platform.NotFound("Integration %s not found", id)
	}
	return out, checked, err
}

// SetPrimary makes the environment's integration id its channel's primary,
// as POST /v1/integrations/{integrationId}/set-primary does: activated and
// without conditions. Only email and sms have a primary.
func (s *Store) SetPrimary(ctx context.Context, tenant platform.Tenant, id string) (Integration, error) {
	in, err := s.makePrimary(ctx, tenant, id)
	return in.public(), err
}

func (s *Store) makePrimary(ctx context.Context, tenant platform.Tenant, id string) (out integration, err error) {
	defer platform.Wrap(&err, "set primary integration %s", id)
	cur, err := findIntegration(ctx, s, tenant.OrganizationID, id)
	if err != nil {
		return out, err
	}
	if cur.EnvironmentID != tenant.EnvironmentID {
		return out, platform.NotFound("Integration %s not found", id) // per environment (docs/api.md, "Keys and environments")
	}
	if !hasPrimary(cur.Channel) {
		return out, platform.InvalidField("channel", cur.Channel, "Channel %s does not support primary", cur.Channel)
	}
	if cur.Primary {
		return cur, nil
	}
	activated := cur
	activated.Active, activated.Conditions = true, nil
	if _, err := s.validateCredentials(ctx, activated, false); err != nil {
		return out, err
	}
	out, err = s.setPrimary(ctx, cur)
	if errors.Is(err, platform.ErrNotFound) {
		return out, platform.NotFound("Integration %s not found", id)
	}
	return out, err
}

// Delete deletes the organization's integration id, irreversibly, as
// DELETE /v1/integrations/{integrationId} does.
func (s *Store) Delete(ctx context.Context, tenant platform.Tenant, id string) (err error) {
	defer platform.Wrap(&err, "delete integration %s", id)
	cur, err := findIntegration(ctx, s, tenant.OrganizationID, id)
	if err != nil {
		return err
	}
	err = s.softDelete(ctx, cur, tenant.UserID)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("Integration %s not found", id)
	}
	return err
}

// Check tries creds with the provider, as check: true does, without saving
// anything: first the provider's credential rules, then its cheapest
// authenticated call. checked is "dialed" or "shape" (CheckHeader); a
// failure is a 422 naming the credential and the provider's reason.
func (s *Store) Check(ctx context.Context, providerID string, creds Credentials) (checked string, err error) {
	if _, ok := provider.Lookup(providerID); !ok {
		return "", platform.InvalidField("providerId", providerID, "Herald cannot deliver through provider %s", providerID)
	}
	return s.validateCredentials(ctx, integration{ProviderID: providerID, Credentials: creds}, true)
}

// Integrations returns the environment's live integrations, oldest first.
func (s *Store) Integrations(ctx context.Context, environmentID string) ([]Integration, error) {
	list, err := s.listEnvironment(ctx, environmentID, false)
	if err != nil {
		return nil, err
	}
	out := make([]Integration, len(list))
	for i, in := range list {
		out[i] = in.public()
	}
	return out, nil
}

// Integration returns the environment's live integration id, or a 404.
func (s *Store) Integration(ctx context.Context, tenant platform.Tenant, id string) (Integration, error) {
	in, err := findIntegration(ctx, s, tenant.OrganizationID, id)
	if err != nil {
		return Integration{}, err
	}
	if in.EnvironmentID != tenant.EnvironmentID {
		return Integration{}, platform.NotFound("Integration %s not found", id)
	}
	return in.public(), nil
}

// public is in as the package's callers see it.
func (in integration) public() Integration {
	return Integration{ID: in.ID, EnvironmentID: in.EnvironmentID, Name: in.Name, Identifier: in.Identifier,
		ProviderID: in.ProviderID, Channel: in.Channel, Active: in.Active, Primary: in.Primary,
		Conditions: len(in.Conditions), Credentials: in.Credentials, CreatedAt: in.CreatedAt}
}

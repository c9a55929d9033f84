package integrations

import (
	"context"
	"strings"

	"github.com/herald-notify/herald/integrations/provider"
)

// Credentials are a provider's credentials (docs/api.md, "Integrations"):
// the provider package declares them, since its senders read them.
type Credentials = provider.Credentials

// withoutUpdateOnly returns c without the three fields that only the update
// response carries (docs/api.md, "Integrations": the list and delete answers
// leave them out).
func withoutUpdateOnly(c Credentials) Credentials {
	c.AppSID, c.SenderID, c.AppIOBaseURL = nil, nil, nil
	return c
}

// Configurations are an integration's inbound-webhook settings (docs/api.md,
// "Integrations").
type Configurations struct {
	InboundWebhookEnabled    *bool   `json:"inboundWebhookEnabled,omitempty"`
	InboundWebhookSigningKey *string `json:"inboundWebhookSigningKey,omitempty"`
}

// StepFilter is one condition of an integration (docs/api.md, "Step filters").
type StepFilter struct {
	IsNegated *bool             `json:"isNegated" validate:"required"`
	Type      string            `json:"type" validate:"required,oneof=BOOLEAN TEXT DATE NUMBER STATEMENT LIST MULTI_LIST GROUP"`
	Value     string            `json:"value" validate:"required,oneof=AND OR"`
	Children  []FieldFilterPart `json:"children" validate:"required,dive"`
}

// FieldFilterPart is one comparison inside a StepFilter (docs/api.md,
// "Step filters").
type FieldFilterPart struct {
	Field    *string `json:"field" validate:"required"`
	Value    *string `json:"value" validate:"required"`
	Operator string  `json:"operator" validate:"required,oneof=LARGER SMALLER LARGER_EQUAL SMALLER_EQUAL EQUAL NOT_EQUAL ALL_IN ANY_IN NOT_IN BETWEEN NOT_BETWEEN LIKE NOT_LIKE IN"`
	On       string  `json:"on" validate:"required,oneof=subscriber payload"`
}

// CreateRequest is the body of POST /v1/integrations (docs/api.md,
// "The write side"; the reference platform's create DTO).
type CreateRequest struct {
	ProviderID     string          `json:"providerId" validate:"required,max=100"`
	Channel        string          `json:"channel" validate:"required,oneof=in_app email sms chat push"`
	Name           *string         `json:"name" validate:"omitempty,max=200"`
	Identifier     *string         `json:"identifier" validate:"omitempty,max=200"`
	EnvironmentID  *string         `json:"_environmentId" validate:"omitempty,objectid"`
	Credentials    *Credentials    `json:"credentials"`
	Active         *bool           `json:"active"`
	Check          *bool           `json:"check"`
	Conditions     []StepFilter    `json:"conditions" validate:"omitempty,dive"`
	Configurations *Configurations `json:"configurations"`
}

// Valid checks what the tags cannot: a provider Herald delivers through,
// on its own channel.
func (r CreateRequest) Valid(context.Context) map[string]string {
	problems := map[string]string{}
	if strings.TrimSpace(r.ProviderID) == "" {
		problems["providerId"] = "must not be blank"
	} else if field, why := providerProblem(strings.TrimSpace(r.ProviderID), r.Channel); why != "" {
		problems[field] = why
	}
	return problems
}

// UpdateRequest is the body of PUT /v1/integrations/{integrationId}
// (docs/api.md, "Integrations"): every field optional, only the given ones
// change.
type UpdateRequest struct {
	Name           *string         `json:"name" validate:"omitempty,max=200"`
	Identifier     *string         `json:"identifier" validate:"omitempty,max=200"`
	EnvironmentID  *string         `json:"_environmentId" validate:"omitempty,objectid"`
	Active         *bool           `json:"active"`
	Credentials    *Credentials    `json:"credentials"`
	Check          *bool           `json:"check"`
	Conditions     []StepFilter    `json:"conditions" validate:"omitempty,dive"`
	Configurations *Configurations `json:"configurations"`
}

// Valid refuses blank names and identifiers: they can be changed, not erased.
func (r UpdateRequest) Valid(context.Context) map[string]string {
	problems := map[string]string{}
	if r.Name != nil && strings.TrimSpace(*r.Name) == "" {
		problems["name"] = "must not be blank"
	}
	if r.Identifier != nil && strings.TrimSpace(*r.Identifier) == "" {
		problems["identifier"] = "must not be blank"
	}
	return problems
}

// empty reports whether the body names no property to update; check alone
// changes nothing.
func (r UpdateRequest) empty() bool {
	return r.Name == nil && r.Identifier == nil && r.EnvironmentID == nil && r.Active == nil &&
		r.Credentials == nil && r.Conditions == nil && r.Configurations == nil
}

// integrationResponse is an Integration as docs/api.md, "Integrations" shows
// it. deletedAt and deletedBy are optional there, so they are absent until a
// soft delete; configurations appear in the create and update responses
// only.
type integrationResponse struct {
	ID             string          `json:"_id"`
	EnvironmentID  string          `json:"_environmentId"`
	OrganizationID string          `json:"_organizationId"`
	Name           string          `json:"name"`
	Identifier     string          `json:"identifier"`
	ProviderID     string          `json:"providerId"`
	Channel        string          `json:"channel"`
	Credentials    Credentials     `json:"credentials"`
	Configurations *Configurations `json:"configurations,omitempty"`
	Active         bool            `json:"active"`
	Deleted        bool            `json:"deleted"`
	DeletedAt      *string         `json:"deletedAt,omitempty"`
	DeletedBy      *string         `json:"deletedBy,omitempty"`
	Primary        bool            `json:"primary"`
	Conditions     []StepFilter    `json:"conditions"`
}

// integration is a stored row with its credentials decrypted.
type integration struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	Name           string
	Identifier     string
	ProviderID     string
	Channel        string
	Credentials    Credentials
	Configurations Configurations
	Conditions     []StepFilter
	Active         bool
	Primary        bool
	Deleted        bool
	DeletedAt      string
	DeletedBy      string
	CreatedAt      string
}

// response shapes the row for the wire. withConfigurations adds the
// configurations (create and update responses); withUpdateOnly keeps the
// credentials that only the update response carries (docs/api.md,
// "Integrations").
func (in integration) response(withConfigurations, withUpdateOnly bool) integrationResponse {
	out := integrationResponse{
		ID:             in.ID,
		EnvironmentID:  in.EnvironmentID,
		OrganizationID: in.OrganizationID,
		Name:           in.Name,
		Identifier:     in.Identifier,
		ProviderID:     in.ProviderID,
		Channel:        in.Channel,
		Credentials:    in.Credentials,
		Active:         in.Active,
		Deleted:        in.Deleted,
		Primary:        in.Primary,
		Conditions:     in.Conditions,
	}
	if out.Conditions == nil {
		out.Conditions = []StepFilter{}
	}
	if withConfigurations {
		cfg := in.Configurations
		out.Configurations = &cfg
	}
	if !withUpdateOnly {
		out.Credentials = withoutUpdateOnly(in.Credentials)
	}
	out.Credentials.PrivateKey = nil // a web-push VAPID key never leaves Herald
	if in.Deleted {
		out.DeletedAt, out.DeletedBy = &in.DeletedAt, &in.DeletedBy
	}
	return out
}

// Package workflows owns workflows, their steps and notification groups: it
// serves /v2/workflows (create, read, update, patch, delete, and sync between
// environments), validates each step kind's control values, computes step
// issues on every read and write, and gives the other domains workflow
// summaries, preferences and trigger lookups (docs/api.md, "Workflows";
// docs/workflows.md).
package workflows

import (
	"encoding/json"
	"regexp"

	"github.com/herald-notify/herald/platform"
)

// Origin of every workflow created through the API (docs/api.md,
// "The write side").
const originCloud = "service-cloud"

// channels are the delivery step kinds, which need an integration.
var channels = []string{"in_app", "email", "sms", "chat", "push"}

// identifierPattern is what workflowId and stepId must match (docs/api.md,
// "The write side").
var identifierPattern = regexp.MustCompile(`^[a-zA-Z0-9]+(?:[-_.][a-zA-Z0-9]+)*$`)

func init() {
	platform.RegisterValidation("identifier", identifierPattern.MatchString)
}

// workflowRequest is the body of POST /v2/workflows and PUT
// /v2/workflows/{workflowId}. Pointer fields tell "absent" (keep on update,
// default on create) from a given value.
type workflowRequest struct {
	Name                 string              `json:"name" validate:"required,max=256"`
	WorkflowID           string              `json:"workflowId" validate:"omitempty,max=128,identifier"`
	Description          *string             `json:"description" validate:"omitempty,max=1024"`
	Tags                 []string            `json:"tags" validate:"omitempty,max=16,dive,required,max=64"`
	Active               *bool               `json:"active"`
	ValidatePayload      *bool               `json:"validatePayload"`
	PayloadSchema        json.RawMessage     `json:"payloadSchema"`
	IsTranslationEnabled *bool               `json:"isTranslationEnabled"`
	Severity             string              `json:"severity" validate:"omitempty,oneof=high medium low none"`
	Steps                []stepRequest       `json:"steps" validate:"required,max=50,dive"`
	Preferences          *preferencesRequest `json:"preferences"`
	VersionNote          string              `json:"versionNote" validate:"max=500"` // Herald's own: the note of the version this save keeps
}

// patchRequest is the body of PATCH /v2/workflows/{workflowId}: the fields
// it names change, the others stay (the reference's PatchWorkflowDto).
type patchRequest struct {
	Name                 *string         `json:"name" validate:"omitempty,min=1,max=256"`
	Description          *string         `json:"description" validate:"omitempty,max=1024"`
	Tags                 []string        `json:"tags" validate:"omitempty,max=16,dive,required,max=64"`
	Active               *bool           `json:"active"`
	ValidatePayload      *bool           `json:"validatePayload"`
	PayloadSchema        json.RawMessage `json:"payloadSchema"`
	IsTranslationEnabled *bool           `json:"isTranslationEnabled"`
	VersionNote          string          `json:"versionNote" validate:"max=500"`
}

// stepRequest is one step of a workflow body.
type stepRequest struct {
	ID            string          `json:"_id"`
	StepID        string          `json:"stepId" validate:"omitempty,max=128,identifier"`
	Name          string          `json:"name" validate:"required,max=256"`
	Type          string          `json:"type" validate:"required,oneof=in_app email sms chat push delay digest throttle custom"`
	ControlValues json.RawMessage `json:"controlValues"` // absent keeps a matched step's values, null clears them; checked by resolveSteps so errors name the step's index
}

// preferencesRequest is a workflow's preferences as clients send them: the
// reference's {user, workflow}, or the response's own {user, default} shape.
type preferencesRequest struct {
	User     *preferenceSet `json:"user"`
	Workflow *preferenceSet `json:"workflow"`
	Default  *preferenceSet `json:"default"`
}

// preferenceSet is a partial WorkflowPreferences: what is absent keeps its default.
type preferenceSet struct {
	All *struct {
		Enabled  *bool `json:"enabled"`
		ReadOnly *bool `json:"readOnly"`
	} `json:"all"`
	Channels map[string]struct {
		Enabled *bool `json:"enabled"`
	} `json:"channels" validate:"omitempty,dive,keys,oneof=in_app email sms chat push,endkeys"`
}

// syncRequest is the body of PUT /v2/workflows/{workflowId}/sync
// (docs/api.md, "Workflow sync").
type syncRequest struct {
	TargetEnvironmentID string `json:"targetEnvironmentId" validate:"required,objectid"`
	VersionNote         string `json:"versionNote" validate:"max=500"`
}

// workflow is a stored workflow.
type workflow struct {
	ID                   string
	OrganizationID       string
	EnvironmentID        string
	WorkflowID           string
	NotificationGroupID  string
	CreatorID            string
	Name                 string
	Description          string
	Tags                 []string
	Active               bool
	ValidatePayload      bool
	PayloadSchema        json.RawMessage // nil when there is none
	IsTranslationEnabled bool
	Severity             string
	Preferences          Preferences
	Origin               string
	Steps                []Step
	UpdatedBy            string
	LastPublishedAt      string
	LastPublishedBy      string
	LastTriggeredAt      string
	Deleted              bool
	DeletedAt            string
	DeletedBy            string
	CreatedAt            string
	UpdatedAt            string
}

// Step is a workflow's step, as stored (its JSON form is the steps column)
// and as a trigger reads it.
type Step struct {
	ID            string         `json:"_id"`
	StepID        string         `json:"stepId"`
	Name          string         `json:"name"`
	Type          string         `json:"type"`
	ControlValues map[string]any `json:"controlValues"`
}

// Preferences are a workflow's resolved preferences, in the response shape
// of the "What strict clients check" section of docs/api.md; stored as JSON.
type Preferences struct {
	Default ChannelPreferences  `json:"default"`
	User    *ChannelPreferences `json:"user"`
}

// Critical reports whether either set is read-only, which makes the
// workflow critical: subscribers cannot turn its channels off.
func (p Preferences) Critical() bool {
	return p.Default.All.ReadOnly || (p.User != nil && p.User.All.ReadOnly)
}

// ChannelPreferences is a complete WorkflowPreferences object: a setting
// for every channel it names, and all, which stands for the channels it
// does not.
type ChannelPreferences struct {
	All      AllPreference             `json:"all"`
	Channels map[string]EnabledSetting `json:"channels"`
}

// AllPreference is the setting of the channels a ChannelPreferences does
// not name; readOnly makes the workflow critical.
type AllPreference struct {
	Enabled  bool `json:"enabled"`
	ReadOnly bool `json:"readOnly"`
}

// EnabledSetting turns one channel on or off.
type EnabledSetting struct {
	Enabled bool `json:"enabled"`
}

// workflowResponse is a workflow on the wire (docs/api.md, "Workflows").
type workflowResponse struct {
	ID                   string          `json:"_id"`
	WorkflowID           string          `json:"workflowId"`
	Slug                 string          `json:"slug"`
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Tags                 []string        `json:"tags"`
	Active               bool            `json:"active"`
	ValidatePayload      bool            `json:"validatePayload"`
	PayloadSchema        json.RawMessage `json:"payloadSchema"`
	IsTranslationEnabled bool            `json:"isTranslationEnabled"`
	CreatedAt            string          `json:"createdAt"`
	UpdatedAt            string          `json:"updatedAt"`
	UpdatedBy            *userRef        `json:"updatedBy,omitempty"`
	LastPublishedAt      *string         `json:"lastPublishedAt"`
	LastPublishedBy      *userRef        `json:"lastPublishedBy,omitempty"`
	Steps                []stepResponse  `json:"steps"`
	Origin               string          `json:"origin"`
	Preferences          Preferences     `json:"preferences"`
	Status               string          `json:"status"`
	LastTriggeredAt      *string         `json:"lastTriggeredAt"`
	PayloadExample       any             `json:"payloadExample"`
	Severity             string          `json:"severity"`
	StepTypeOverviews    []string        `json:"stepTypeOverviews"`
}

// userRef is the User object of updatedBy and lastPublishedBy.
type userRef struct {
	ID string `json:"_id"`
}

// stepResponse is one step on the wire (docs/api.md, "Workflow steps").
type stepResponse struct {
	Controls           controlsResponse `json:"controls"`
	ControlValues      map[string]any   `json:"controlValues"`
	Variables          schema           `json:"variables"`
	StepID             string           `json:"stepId"`
	ID                 string           `json:"_id"`
	Name               string           `json:"name"`
	Slug               string           `json:"slug"`
	WorkflowID         string           `json:"workflowId"`
	WorkflowDatabaseID string           `json:"workflowDatabaseId"`
	Type               string           `json:"type"`
	Origin             string           `json:"origin"`
	Issues             *stepIssues      `json:"issues,omitempty"`
}

type controlsResponse struct {
	DataSchema schema         `json:"dataSchema"`
	UISchema   *uiSchema      `json:"uiSchema,omitempty"`
	Values     map[string]any `json:"values"`
}

// schema is a JSON Schema document.
type schema = map[string]any

// uiSchema tells an editor how to render a step's controls (spec UiSchema).
type uiSchema struct {
	Group      string                `json:"group,omitempty"`
	Properties map[string]uiProperty `json:"properties"`
}

type uiProperty struct {
	Component   string                `json:"component"`
	Placeholder any                   `json:"placeholder,omitempty"`
	Properties  map[string]uiProperty `json:"properties,omitempty"`
}

// stepIssues are a step's problems (docs/api.md, "Workflow steps"): content
// issues keyed by control path, integration issues keyed by channel.
type stepIssues struct {
	Controls    map[string][]runtimeIssue `json:"controls,omitempty"`
	Integration map[string][]runtimeIssue `json:"integration,omitempty"`
}

// runtimeIssue is one content or integration issue.
type runtimeIssue struct {
	IssueType    string `json:"issueType"`
	VariableName string `json:"variableName,omitempty"`
	Message      string `json:"message"`
}

// Issue types (docs/api.md, "Workflow steps").
const (
	issueMissingValue       = "MISSING_VALUE"
	issueIllegalVariable    = "ILLEGAL_VARIABLE_IN_CONTROL_VALUE"
	issueInvalidFilterArg   = "INVALID_FILTER_ARG_IN_VARIABLE"
	issueMissingIntegration = "MISSING_INTEGRATION"
)

package workflows

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/herald-notify/herald/platform"
)

// Summary is the workflow embedded in a message (docs/api.md,
// "Workflow summaries"), as the messages list shows it. The id and deletion
// strings are never null (docs/api.md, "What strict clients check").
type Summary struct {
	ID                  string             `json:"_id"`
	Name                string             `json:"name"`
	Description         string             `json:"description"`
	Active              bool               `json:"active"`
	Draft               bool               `json:"draft"`
	Critical            bool               `json:"critical"`
	Deleted             bool               `json:"deleted"`
	OrganizationID      string             `json:"_organizationId"`
	CreatorID           string             `json:"_creatorId"`
	EnvironmentID       string             `json:"_environmentId"`
	NotificationGroupID string             `json:"_notificationGroupId"`
	DeletedAt           string             `json:"deletedAt"`
	DeletedBy           string             `json:"deletedBy"`
	PreferenceSettings  map[string]bool    `json:"preferenceSettings"`
	Tags                []string           `json:"tags"`
	Steps               []notificationStep `json:"steps"`
	Triggers            []trigger          `json:"triggers"`
	NotificationGroup   *notificationGroup `json:"notificationGroup,omitempty"`
}

type notificationStep struct {
	ID               string         `json:"_id"`
	UUID             string         `json:"uuid"`
	Name             string         `json:"name"`
	TemplateID       string         `json:"_templateId"`
	Active           bool           `json:"active"`
	ShouldStopOnFail bool           `json:"shouldStopOnFail"`
	Filters          []any          `json:"filters"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

type trigger struct {
	Type                string         `json:"type"`
	Identifier          string         `json:"identifier"`
	Variables           []variableName `json:"variables"`
	SubscriberVariables []variableName `json:"subscriberVariables"`
}

type variableName struct {
	Name string `json:"name"`
}

type notificationGroup struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	EnvironmentID  string `json:"_environmentId"`
	OrganizationID string `json:"_organizationId"`
}

// WorkflowSummaries returns workflow summaries (docs/api.md,
// "Workflow summaries") keyed by workflow _id, deleted ones included.
func (s *Store) WorkflowSummaries(ctx context.Context, environmentID string, ids []string) (out map[string]Summary, err error) {
	defer platform.Wrap(&err, "workflow summaries")
	out = map[string]Summary{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := s.workflowsByID(ctx, environmentID, ids)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return out, nil
	}
	groups, err := s.groupsByID(ctx, environmentID)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		out[w.ID] = toSummary(w, groups)
	}
	return out, nil
}

func toSummary(w *workflow, groups map[string]string) Summary {
	sum := Summary{
		ID: w.ID, Name: w.Name, Description: w.Description, Active: w.Active,
		Critical: w.Preferences.Default.All.ReadOnly, Deleted: w.Deleted,
		OrganizationID: w.OrganizationID, CreatorID: w.CreatorID, EnvironmentID: w.EnvironmentID,
		NotificationGroupID: w.NotificationGroupID, DeletedAt: w.DeletedAt, DeletedBy: w.DeletedBy,
		PreferenceSettings: map[string]bool{}, Tags: w.Tags, Steps: []notificationStep{},
		Triggers: []trigger{{Type: "event", Identifier: w.WorkflowID, Variables: triggerVariables(w.PayloadSchema), SubscriberVariables: []variableName{}}},
	}
	if sum.Tags == nil {
		sum.Tags = []string{}
	}
	for _, c := range channels {
		sum.PreferenceSettings[c] = w.Preferences.Default.Channels[c].Enabled
	}
	if name, ok := groups[w.NotificationGroupID]; ok {
		sum.NotificationGroup = &notificationGroup{ID: w.NotificationGroupID, Name: name, EnvironmentID: w.EnvironmentID, OrganizationID: w.OrganizationID}
	}
	// A failed step stops the chain (docs/api.md, "Delivery"), whatever its kind.
	for _, st := range w.Steps {
		sum.Steps = append(sum.Steps, notificationStep{
			ID: st.ID, UUID: st.StepID, Name: st.Name, TemplateID: st.ID, Active: true, ShouldStopOnFail: true,
			Filters: []any{}, Metadata: stepMetadata(st),
		})
	}
	return sum
}

// triggerVariables names the top-level properties of the payload schema.
func triggerVariables(raw json.RawMessage) []variableName {
	out := []variableName{}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return out
	}
	for name := range s.Properties {
		out = append(out, variableName{Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stepMetadata is the delay or digest metadata of a NotificationStep
// (docs/api.md, "Workflow summaries"), from the step's control values; nil
// for other kinds.
func stepMetadata(st Step) map[string]any {
	cv := st.ControlValues
	if st.Type != "delay" && st.Type != "digest" {
		return nil
	}
	md := map[string]any{}
	typ, _ := cv["type"].(string)
	if typ == "" {
		typ = "regular"
	}
	md["type"] = typ
	for _, k := range []string{"amount", "unit", "digestKey"} {
		if v, ok := cv[k]; ok && v != nil {
			md[k] = v
		}
	}
	if st.Type == "digest" {
		if lb, ok := cv["lookBackWindow"].(map[string]any); ok {
			md["type"] = "backoff"
			md["backoff"] = true
			md["backoffAmount"] = lb["amount"]
			md["backoffUnit"] = lb["unit"]
		}
		if typ == "timed" {
			md["timed"] = map[string]any{}
		}
	}
	return md
}

// Workflow is a workflow as a trigger runs it: the fields (docs/api.md,
// "Workflows") that decide what a trigger creates. TriggerWorkflow answers
// the same *Workflow until the workflow's next write, shared with its cache:
// read it, never write to it.
type Workflow struct {
	ID              string          `json:"_id"`
	WorkflowID      string          `json:"workflowId"`
	Name            string          `json:"name"`
	Active          bool            `json:"active"`
	ValidatePayload bool            `json:"validatePayload"`
	PayloadSchema   json.RawMessage `json:"payloadSchema"` // a JSON Schema; nil when there is none
	Preferences     Preferences     `json:"preferences"`
	Severity        string          `json:"severity"`
	Tags            []string        `json:"tags"`
	Origin          string          `json:"origin"`
	Steps           []Step          `json:"steps"`
}

// TriggerWorkflow returns the workflow whose workflowId is given, or
// platform.ErrNotFound; deleted workflows are not found. Answers are cached
// until the next workflow write through s.
func (s *Store) TriggerWorkflow(ctx context.Context, environmentID, workflowID string) (out *Workflow, err error) {
	defer platform.Wrap(&err, "trigger workflow %s", workflowID)
	return s.triggers.Get(environmentID+"\x00"+workflowID, func() (*Workflow, error) {
		w, err := scanWorkflow(s.db.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows
			WHERE environment_id = ? AND workflow_id = ? AND deleted = 0`, environmentID, workflowID))
		if err != nil {
			return nil, err
		}
		return &Workflow{ID: w.ID, WorkflowID: w.WorkflowID, Name: w.Name, Active: w.Active,
			ValidatePayload: w.ValidatePayload, PayloadSchema: w.PayloadSchema, Preferences: w.Preferences,
			Severity: w.Severity, Tags: w.Tags, Origin: w.Origin, Steps: w.Steps}, nil
	})
}

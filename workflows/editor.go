package workflows

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/herald-notify/herald/platform"
)

// This file serves the editor's reads and its copy: one step with its
// controls, variables and issues; the test data a test send starts from;
// and a workflow duplicated (docs/editor.md).

// handleStepGet serves GET /v2/workflows/{workflowId}/steps/{stepId}
// (stepId or the step's _id): the step as GET /v2/workflows/{workflowId}
// shows it.
func handleStepGet(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		envID := platform.TenantFrom(ctx).EnvironmentID
		wf, err := store.get(ctx, envID, r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		i, err := stepIndex(wf, r.PathValue("stepId"))
		if err != nil {
			return err
		}
		res, err := toResponse(ctx, wf, &integrationLookup{integrations: integrations, envID: envID})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, res.Steps[i])
	})
}

// handleTestData serves GET /v2/workflows/{workflowId}/test-data: JSON
// Schemas of whom a test send goes to (subscriberId, and the email and
// phone its channels need) and of its payload, each property with a
// default to start from.
func handleTestData(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		tenant := platform.TenantFrom(r.Context())
		wf, err := store.get(r.Context(), tenant.EnvironmentID, r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, testData(wf, tenant.UserID))
	})
}

// testData builds the answer of GET /v2/workflows/{workflowId}/test-data.
func testData(w *workflow, userID string) map[string]any {
	subscriberID := schema{"type": "string", "default": userID}
	props := schema{"subscriberId": subscriberID}
	required := []string{"subscriberId"}
	has := func(kind string) bool {
		return slices.ContainsFunc(w.Steps, func(s Step) bool { return s.Type == kind })
	}
	if has("email") {
		props["email"] = schema{"type": "string", "format": "email"}
		required = append(required, "email")
	}
	if has("sms") {
		props["phone"] = schema{"type": "string", "default": ""}
		required = append(required, "phone")
	}
	to := schema{"type": "object", "additionalProperties": false, "properties": props, "required": required}
	return map[string]any{"to": to, "payload": payloadTestSchema(w)}
}

// payloadTestSchema is the workflow's payload schema, or one made of the
// payload variables its templates use, each defaulting to a placeholder.
func payloadTestSchema(w *workflow) schema {
	if len(w.PayloadSchema) > 0 {
		var s schema
		if json.Unmarshal(w.PayloadSchema, &s) == nil && s != nil {
			return s
		}
	}
	return schemaOf(samplePayload(w, -1, nil))
}

// schemaOf is a JSON Schema that v matches, with v's values as defaults.
func schemaOf(v any) schema {
	switch t := v.(type) {
	case map[string]any:
		props := schema{}
		for k, e := range t {
			props[k] = schemaOf(e)
		}
		return schema{"type": "object", "properties": props, "additionalProperties": true}
	case []any:
		s := schema{"type": "array", "default": t}
		if len(t) > 0 {
			s["items"] = schemaOf(t[0])
		}
		return s
	case string:
		return schema{"type": "string", "default": t}
	case float64, int:
		return schema{"type": "number", "default": t}
	case bool:
		return schema{"type": "boolean", "default": t}
	}
	return schema{}
}

// duplicateRequest is the body of POST /v2/workflows/{workflowId}/duplicate:
// what the copy changes; the rest is the original's.
type duplicateRequest struct {
	Name                 string   `json:"name" validate:"omitempty,max=256"`
	WorkflowID           string   `json:"workflowId" validate:"omitempty,max=128,identifier"`
	Tags                 []string `json:"tags" validate:"omitempty,max=16,dive,required,max=64"`
	Description          *string  `json:"description" validate:"omitempty,max=1024"`
	IsTranslationEnabled *bool    `json:"isTranslationEnabled"`
}

// handleWorkflowDuplicate serves POST /v2/workflows/{workflowId}/duplicate:
// a new, inactive workflow with the original's steps (new _ids, the same
// stepIds), preferences, payload schema and severity.
func handleWorkflowDuplicate(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeOptional[duplicateRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.duplicate(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), req)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusCreated, wf, integrations)
	})
}

// duplicate copies the workflow named by key as req says.
func (s *Store) duplicate(ctx context.Context, tenant platform.Tenant, key string, req duplicateRequest) (*workflow, error) {
	src, err := s.get(ctx, tenant.EnvironmentID, key)
	if err != nil {
		return nil, err
	}
	copyReq, err := requestOf(src)
	if err != nil {
		return nil, err
	}
	copyReq.Name = src.Name + " (Copy)"
	if req.Name != "" {
		copyReq.Name = req.Name
	}
	copyReq.WorkflowID = req.WorkflowID
	if req.Tags != nil {
		copyReq.Tags = req.Tags
	}
	if req.Description != nil {
		copyReq.Description = req.Description
	}
	if req.IsTranslationEnabled != nil {
		copyReq.IsTranslationEnabled = req.IsTranslationEnabled
	}
	inactive := false
	copyReq.Active = &inactive
	for i := range copyReq.Steps {
		copyReq.Steps[i].ID = "" // the copy's steps are new steps
	}
	return s.createWith(ctx, tenant, copyReq, originCloud, "Duplicated from "+src.WorkflowID, func(w *workflow) { w.Preferences = src.Preferences })
}

// requestOf is the write body that makes a workflow like w: what sync
// and duplicate write, and what a version restores.
func requestOf(w *workflow) (workflowRequest, error) {
	desc := w.Description
	active, validate, translate := w.Active, w.ValidatePayload, w.IsTranslationEnabled
	req := workflowRequest{
		Name: w.Name, WorkflowID: w.WorkflowID, Description: &desc, Tags: slices.Clone(w.Tags), Active: &active,
		ValidatePayload: &validate, PayloadSchema: w.PayloadSchema,
		IsTranslationEnabled: &translate, Severity: w.Severity, Steps: []stepRequest{},
	}
	if req.PayloadSchema == nil {
		req.PayloadSchema = json.RawMessage("null")
	}
	for _, st := range w.Steps {
		values, err := json.Marshal(st.ControlValues)
		if err != nil {
			return req, err
		}
		req.Steps = append(req.Steps, stepRequest{ID: st.ID, StepID: st.StepID, Name: st.Name, Type: st.Type, ControlValues: values})
	}
	return req, nil
}

// decodeOptional is platform.Decode for a body every field of which is
// optional: no body at all reads as {}, as clients of these routes send
// none when they change nothing.
func decodeOptional[T any](r *http.Request) (T, error) {
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		var zero T
		return zero, nil
	}
	return platform.Decode[T](r)
}

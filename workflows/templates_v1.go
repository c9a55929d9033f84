package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// The reference's older clients read and write workflows as v1
// "notification templates": the same workflows in an older shape
// (docs/workflows.md, "Notification templates (v1)"). A v1 step carries
// its content in a template object; Herald keeps it as the step's control
// values, so each shape reads what the other wrote.

// templateV1Request is the body of POST and PUT
// /v1/notification-templates. On PUT every field is optional and only
// those sent change; POST needs name and notificationGroupId.
type templateV1Request struct {
	Name                string          `json:"name" validate:"omitempty,max=256"`
	Identifier          string          `json:"identifier" validate:"omitempty,max=128,identifier"`
	NotificationGroupID string          `json:"notificationGroupId" validate:"omitempty,objectid"`
	Description         *string         `json:"description" validate:"omitempty,max=1024"`
	Tags                []string        `json:"tags" validate:"omitempty,max=16,dive,required,max=64"`
	Steps               []stepV1Request `json:"steps" validate:"omitempty,max=50,dive"`
	Active              *bool           `json:"active"`
	Draft               *bool           `json:"draft"`
	Critical            *bool           `json:"critical"`
	PreferenceSettings  map[string]bool `json:"preferenceSettings" validate:"omitempty,dive,keys,oneof=in_app email sms chat push,endkeys"`
}

// stepV1Request is one v1 step: its kind and content are in template; a
// delay's or digest's timing is in metadata.
type stepV1Request struct {
	ID       string         `json:"_id"`
	Name     string         `json:"name" validate:"max=256"`
	Template templateV1Body `json:"template"`
	Metadata map[string]any `json:"metadata"`
}

// templateV1Body is a v1 step's template, as sent and as answered.
type templateV1Body struct {
	ID      string          `json:"_id,omitempty"`
	Type    string          `json:"type" validate:"required,oneof=in_app email sms chat push delay digest"`
	Name    string          `json:"name,omitempty" validate:"max=256"`
	Subject string          `json:"subject,omitempty" validate:"max=1024"`
	Title   string          `json:"title,omitempty" validate:"max=1024"`
	Content json.RawMessage `json:"content,omitempty"` // a string, or the email editor's blocks [{type, content}]
}

// active is the workflow's state the request asks for: active, else the
// opposite of draft; nil when it names neither.
func (req templateV1Request) active() *bool {
	if req.Active != nil || req.Draft == nil {
		return req.Active
	}
	on := !*req.Draft
	return &on
}

// preferences is the preference set critical and preferenceSettings ask for.
func (req templateV1Request) preferences() *preferenceSet {
	if req.Critical == nil && req.PreferenceSettings == nil {
		return nil
	}
	set := &preferenceSet{}
	if req.Critical != nil {
		set.All = &struct {
			Enabled  *bool `json:"enabled"`
			ReadOnly *bool `json:"readOnly"`
		}{ReadOnly: req.Critical}
	}
	if req.PreferenceSettings != nil {
		set.Channels = map[string]struct {
			Enabled *bool `json:"enabled"`
		}{}
		for ch, on := range req.PreferenceSettings {
			set.Channels[ch] = struct {
				Enabled *bool `json:"enabled"`
			}{Enabled: &on}
		}
	}
	return set
}

// stepRequests turns v1 steps into the steps a workflow stores; what cannot
// be read is a field error under steps.i.
func stepRequests(steps []stepV1Request, fields map[string]platform.FieldError) []stepRequest {
	out := make([]stepRequest, 0, len(steps))
	for i, st := range steps {
		t := st.Template
		name := st.Name
		if name == "" {
			name = t.Name
		}
		if name == "" {
			name = t.Type
		}
		controls := map[string]any{}
		if body, ok := contentText(t.Content); ok {
			if body != "" {
				controls["body"] = body
			}
		} else {
			fields["steps."+itoa(i)+".template.content"] = platform.FieldError{
				Messages: []string{"must be a string or a list of blocks with text content"}, Value: t.Content}
		}
		switch t.Type {
		case "email", "in_app":
			if t.Subject != "" {
				controls["subject"] = t.Subject
			}
		case "push":
			if t.Title != "" {
				controls["subject"] = t.Title
			}
		case "delay", "digest":
			controls = map[string]any{"type": "regular"}
			keys := []string{"amount", "unit", "type"}
			if t.Type == "digest" {
				keys = append(keys, "digestKey")
			}
			for _, k := range keys {
				if v, ok := st.Metadata[k]; ok && v != nil {
					controls[k] = v
				}
			}
		}
		raw, _ := json.Marshal(controls)
		out = append(out, stepRequest{ID: st.ID, Name: name, Type: t.Type, ControlValues: raw})
	}
	return out
}

// contentText reads a v1 template's content: a string, or the email
// editor's blocks, whose text contents are joined by new lines.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.Content
	}
	return strings.Join(parts, "\n"), true
}

// templateV1 is a workflow in the v1 shape: the summary messages embed,
// with draft, the steps' templates and the times.
type templateV1 struct {
	Summary
	Steps     []stepV1 `json:"steps"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

type stepV1 struct {
	notificationStep
	Template templateV1Body `json:"template"`
}

func toTemplateV1(w *workflow, groups map[string]string) templateV1 {
	sum := toSummary(w, groups)
	sum.Draft = !w.Active
	out := templateV1{Summary: sum, Steps: make([]stepV1, len(w.Steps)), CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	for i, st := range w.Steps {
		body, _ := st.ControlValues["body"].(string)
		subject, _ := st.ControlValues["subject"].(string)
		t := templateV1Body{ID: st.ID, Type: st.Type, Name: st.Name}
		if body != "" {
			t.Content, _ = json.Marshal(body)
		}
		switch st.Type {
		case "push":
			t.Title = subject
		case "email", "in_app":
			t.Subject = subject
		}
		out.Steps[i] = stepV1{notificationStep: sum.Steps[i], Template: t}
	}
	return out
}

// respondV1 writes w in the v1 shape.
func (s *Store) respondV1(w http.ResponseWriter, r *http.Request, status int, wf *workflow) error {
	groups, err := s.groupsByID(r.Context(), wf.EnvironmentID)
	if err != nil {
		return err
	}
	return platform.JSON(w, status, toTemplateV1(wf, groups))
}

// handleTemplateListV1 serves GET /v1/notification-templates: newest
// first, page (0-based) and limit (1..100, default 10), query matching the
// name or workflowId.
func handleTemplateListV1(store *Store) http.Handler {
	type page struct {
		TotalCount int          `json:"totalCount"`
		Data       []templateV1 `json:"data"`
		PageSize   int          `json:"pageSize"`
		Page       int          `json:"page"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		n, limit := q.Int("page", 0, 0, 100_000), q.Int("limit", 10, 1, 100)
		f := listFilter{offset: n * limit, limit: limit, query: q.String("query"), orderBy: "created_at", desc: true}
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		env := platform.TenantFrom(ctx).EnvironmentID
		list, total, err := store.list(ctx, env, f)
		if err != nil {
			return err
		}
		groups, err := store.groupsByID(ctx, env)
		if err != nil {
			return err
		}
		out := page{TotalCount: total, Data: make([]templateV1, len(list)), PageSize: len(list), Page: n}
		for i, wf := range list {
			out.Data[i] = toTemplateV1(wf, groups)
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// handleTemplateGetV1 serves GET /v1/notification-templates/{templateId}
// (a workflow's _id or its workflowId).
func handleTemplateGetV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		wf, err := store.get(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("templateId"))
		if err != nil {
			return err
		}
		return store.respondV1(w, r, http.StatusOK, wf)
	})
}

// handleTemplateCreateV1 serves POST /v1/notification-templates. A new
// workflow is inactive unless active is true or draft false, as v2's are.
func handleTemplateCreateV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[templateV1Request](r)
		if err != nil {
			return err
		}
		fields := map[string]platform.FieldError{}
		if req.Name == "" {
			fields["name"] = platform.FieldError{Messages: []string{"name should not be empty"}, Value: req.Name}
		}
		if req.NotificationGroupID == "" {
			fields["notificationGroupId"] = platform.FieldError{Messages: []string{"notificationGroupId should not be empty"}, Value: req.NotificationGroupID}
		}
		wreq := workflowRequest{Name: req.Name, WorkflowID: req.Identifier, Description: req.Description, Tags: req.Tags,
			Active: req.active(), Steps: stepRequests(req.Steps, fields)}
		if set := req.preferences(); set != nil {
			wreq.Preferences = &preferencesRequest{Workflow: set}
		}
		if len(fields) > 0 {
			return platform.Invalid(fields)
		}
		wf, err := store.createWith(r.Context(), platform.TenantFrom(r.Context()), wreq, originCloud, "",
			func(w *workflow) { w.NotificationGroupID = req.NotificationGroupID })
		if err != nil {
			return err
		}
		return store.respondV1(w, r, http.StatusCreated, wf)
	})
}

// handleTemplateUpdateV1 serves PUT /v1/notification-templates/{templateId}:
// the fields sent change, the others stay; steps sent replace the steps,
// keeping the _id of each step sent with one.
func handleTemplateUpdateV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[templateV1Request](r)
		if err != nil {
			return err
		}
		tenant := platform.TenantFrom(r.Context())
		wf, err := store.change(r.Context(), tenant, r.PathValue("templateId"), "", func(tx *sql.Tx, w *workflow) error {
			return store.applyV1(r.Context(), tx, w, req)
		})
		if err != nil {
			return err
		}
		return store.respondV1(w, r, http.StatusOK, wf)
	})
}

// applyV1 applies the fields of a v1 update to w.
func (s *Store) applyV1(ctx context.Context, tx *sql.Tx, w *workflow, req templateV1Request) (err error) {
	fields := map[string]platform.FieldError{}
	if req.Steps != nil {
		w.Steps = resolveSteps(w.Steps, stepRequests(req.Steps, fields), fields)
	}
	if len(fields) > 0 {
		return platform.Invalid(fields)
	}
	if req.Name != "" {
		w.Name = req.Name
	}
	if req.Description != nil {
		w.Description = *req.Description
	}
	if req.Tags != nil {
		w.Tags = distinctTags(req.Tags)
	}
	if on := req.active(); on != nil {
		w.Active = *on
	}
	if set := req.preferences(); set != nil {
		w.Preferences.Default = w.Preferences.Default.merge(set)
	}
	if req.NotificationGroupID != "" {
		w.NotificationGroupID = req.NotificationGroupID
		if err := s.placeInGroup(ctx, tx, w); err != nil {
			return err
		}
	}
	if req.Identifier != "" && req.Identifier != w.WorkflowID {
		w.WorkflowID, err = chooseIdentifier(ctx, tx, w.EnvironmentID, req.Identifier, w.Name, w.ID)
	}
	return err
}

// handleTemplateDeleteV1 serves DELETE /v1/notification-templates/{templateId},
// answered with true as the reference does.
func handleTemplateDeleteV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := store.remove(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("templateId")); err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, true)
	})
}

// handleTemplateStatusV1 serves PUT
// /v1/notification-templates/{templateId}/status: {active} turns the
// workflow on or off.
func handleTemplateStatusV1(store *Store) http.Handler {
	type statusRequest struct {
		Active *bool `json:"active" validate:"required"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[statusRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.patch(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("templateId"), patchRequest{Active: req.Active})
		if err != nil {
			return err
		}
		return store.respondV1(w, r, http.StatusOK, wf)
	})
}

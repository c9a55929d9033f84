package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// This file is the editor's side of the store for the console: a workflow
// as a form shows it, a draft saved through the same code as PUT
// /v2/workflows/{workflowId}, a draft step previewed as the preview route
// renders it, and the versions.

// StepTypes are the step types a workflow may have, in the order an
// editor offers them.
var StepTypes = []string{"in_app", "email", "sms", "push", "chat", "delay", "digest", "throttle", "custom"}

// Editable is a workflow as its editor shows it.
type Editable struct {
	ID, WorkflowID, Name, Description string
	Tags                              []string
	Active, Critical                  bool
	Channels                          map[string]bool // each channel on or off by default for subscribers
	Status                            string
	UpdatedAt                         string
	Steps                             []DraftStep
	Variables                         []string // what its templates may use, as an editor offers them
}

// Draft is what an editor saves: the workflow's fields and its steps in
// order. A step with an ID or a StepID of the stored workflow keeps its ID.
type Draft struct {
	Name, WorkflowID, Description string
	Tags                          []string
	Active, Critical              bool
	Channels                      map[string]bool // nil keeps the defaults per channel as they are
	Steps                         []DraftStep
	Note                          string // the version's note
}

// DraftStep is one step of a draft, with its controls as the form holds
// them.
type DraftStep struct {
	ID, StepID, Name, Type string
	Controls               map[string]any
	Fields                 []ControlField      // the controls' form, from the step type's schema (Editable only)
	Issues                 map[string][]string // problems by control path (Editable only)
}

// ControlField is one control of a step as a form edits it: Kind is text,
// textarea, number, boolean, select or json (an object, edited as JSON).
type ControlField struct {
	Name, Kind string
	Options    []string
	Required   bool
}

// Editable returns the workflow whose workflowId or _id is key as its
// editor shows it.
func (s *Store) Editable(ctx context.Context, envID, key string) (Editable, error) {
	w, err := s.get(ctx, envID, key)
	if err != nil {
		return Editable{}, err
	}
	return s.editable(ctx, w)
}

func (s *Store) editable(ctx context.Context, w *workflow) (Editable, error) {
	res, err := toResponse(ctx, w, &integrationLookup{integrations: s.integrations, envID: w.EnvironmentID})
	if err != nil {
		return Editable{}, err
	}
	e := Editable{ID: w.ID, WorkflowID: w.WorkflowID, Name: w.Name, Description: w.Description, Tags: res.Tags,
		Active: w.Active, Critical: w.Preferences.Critical(), Status: res.Status, UpdatedAt: w.UpdatedAt,
		Channels: map[string]bool{}, Variables: variables(w)}
	for _, c := range channels {
		e.Channels[c] = w.Preferences.Default.Channels[c].Enabled
	}
	for i, st := range w.Steps {
		d := DraftStep{ID: st.ID, StepID: st.StepID, Name: st.Name, Type: st.Type, Controls: st.ControlValues,
			Fields: ControlFields(st.Type), Issues: map[string][]string{}}
		if is := res.Steps[i].Issues; is != nil {
			for path, list := range is.Controls {
				for _, x := range list {
					d.Issues[path] = append(d.Issues[path], x.Message)
				}
			}
			for _, list := range is.Integration {
				for _, x := range list {
					d.Issues[""] = append(d.Issues[""], x.Message)
				}
			}
		}
		e.Steps = append(e.Steps, d)
	}
	return e, nil
}

// ControlFields is the form of a step type's controls, from its schema:
// the fields in name order, skip last.
func ControlFields(kind string) []ControlField {
	s := dataSchema(kind)
	props, _ := s["properties"].(schema)
	required, _ := s["required"].([]string)
	var out []ControlField
	for name, p := range props {
		ps, _ := p.(schema)
		f := ControlField{Name: name, Required: slices.Contains(required, name)}
		switch t := ps["type"]; {
		case ps["enum"] != nil:
			f.Kind, f.Options = "select", append([]string{""}, ps["enum"].([]string)...)
		case t == "boolean":
			f.Kind = "boolean"
		case t == "number":
			f.Kind = "number"
		case t == "object":
			f.Kind = "json"
		case name == "body":
			f.Kind = "textarea"
		default:
			f.Kind = "text"
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == "skip") != (out[j].Name == "skip") {
			return out[j].Name == "skip"
		}
		return out[i].Name < out[j].Name
	})
	if kind == "custom" {
		out = append([]ControlField{{Name: "values", Kind: "json"}}, out...)
	}
	return out
}

// requestOfDraft is the PUT body a draft stands for.
func requestOfDraft(d Draft) (workflowRequest, error) {
	desc := d.Description
	active := d.Active
	req := workflowRequest{Name: d.Name, WorkflowID: d.WorkflowID, Description: &desc, Tags: d.Tags, Active: &active,
		Steps: []stepRequest{}, VersionNote: d.Note}
	for _, st := range d.Steps {
		values, err := json.Marshal(st.Controls)
		if err != nil {
			return req, err
		}
		req.Steps = append(req.Steps, stepRequest{ID: st.ID, StepID: st.StepID, Name: st.Name, Type: st.Type, ControlValues: values})
	}
	return req, platform.ValidateRequest(context.Background(), req)
}

// SaveDraft saves d as the workflow whose workflowId or _id is key, as PUT
// /v2/workflows/{workflowId} saves its body (with critical as its
// preferences' readOnly), and returns it as saved.
func (s *Store) SaveDraft(ctx context.Context, tenant platform.Tenant, key string, d Draft) (Editable, error) {
	req, err := requestOfDraft(d)
	if err != nil {
		return Editable{}, err
	}
	w, err := s.change(ctx, tenant, key, req.VersionNote, func(tx *sql.Tx, w *workflow) (err error) {
		if err := apply(w, req, false); err != nil {
			return err
		}
		w.Preferences.Default.All.ReadOnly = d.Critical
		if d.Channels != nil {
			// A new map: the workflow's copy before the edit shares the old one.
			set := map[string]EnabledSetting{}
			for c, v := range w.Preferences.Default.Channels {
				set[c] = v
			}
			for _, c := range channels {
				set[c] = EnabledSetting{Enabled: d.Channels[c]}
			}
			w.Preferences.Default.Channels = set
		}
		if w.Preferences.User != nil {
			w.Preferences.User.All.ReadOnly = d.Critical
		}
		if req.WorkflowID != "" && req.WorkflowID != w.WorkflowID {
			w.WorkflowID, err = chooseIdentifier(ctx, tx, tenant.EnvironmentID, req.WorkflowID, req.Name, w.ID)
		}
		return err
	})
	if err != nil {
		return Editable{}, err
	}
	return s.editable(ctx, w)
}

// StepPreview is a step rendered for the editor: Preview is what the
// preview route answers as result.preview, Error where a template fails.
type StepPreview struct {
	Type    string
	Preview map[string]any
	Error   *PreviewError
	Payload map[string]any // the payload the render used
}

// PreviewError is a control whose template fails, and where.
type PreviewError struct {
	Control, Message string
	Line, Column     int
}

// PreviewWith is what a draft's preview renders with beside the samples:
// Payload laid over the sample payload, Subscriber (a real one's fields)
// in place of the sample subscriber. Either may be nil.
type PreviewWith struct {
	Payload, Subscriber map[string]any
}

// PreviewDraft renders step i of d, a draft of the workflow whose
// workflowId or _id is key, as POST
// /v2/workflows/{workflowId}/step/{stepId}/preview renders a step, with
// what with gives. The draft's steps stand in for the stored ones, so a
// step not yet saved previews too.
func (s *Store) PreviewDraft(ctx context.Context, envID, key string, d Draft, i int, with PreviewWith) (StepPreview, error) {
	w, err := s.get(ctx, envID, key)
	if err != nil {
		return StepPreview{}, err
	}
	if i < 0 || i >= len(d.Steps) {
		return StepPreview{}, platform.NotFound("Step cannot be found")
	}
	draft := *w
	draft.Steps = nil
	for _, st := range d.Steps {
		draft.Steps = append(draft.Steps, Step{ID: st.ID, StepID: st.StepID, Name: st.Name, Type: st.Type, ControlValues: st.Controls})
	}
	controls := d.Steps[i].Controls
	if controls == nil {
		controls = map[string]any{}
	}
	fields := map[string]platform.FieldError{}
	validateControls(d.Steps[i].Type, controls, "controls", fields)
	if len(fields) > 0 {
		return StepPreview{}, platform.Invalid(fields)
	}
	controls, layout, err := s.previewContent(ctx, w, d.Steps[i].Type, controls, with.Subscriber)
	if err != nil {
		return StepPreview{}, err
	}
	res := preview(&draft, i, controls, previewPayload{Payload: with.Payload, Subscriber: with.Subscriber}, layout)
	out := StepPreview{Type: res.Result.Type, Payload: res.PreviewPayloadExample.Payload}
	out.Preview, _ = res.Result.Preview.(map[string]any)
	if e := res.Result.Error; e != nil {
		out.Error = &PreviewError{Control: e.Control, Message: e.Message, Line: e.Line, Column: e.Column}
	}
	return out, nil
}

// Version is one saved version of a workflow, as a list shows it.
type Version struct {
	Number                     int
	Note, CreatedBy, CreatedAt string
}

// Versions returns the latest versions of the workflow whose workflowId
// or _id is key, newest first, at most limit.
func (s *Store) Versions(ctx context.Context, envID, key string, limit int) ([]Version, error) {
	list, _, err := s.versions(ctx, envID, key, limit, 0)
	var out []Version
	for _, v := range list {
		out = append(out, Version{Number: v.Number, Note: v.Note, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt})
	}
	return out, err
}

// Restore makes the workflow whose workflowId or _id is key what it was in
// version n, as POST /v2/workflows/{workflowId}/versions/{version}/restore
// does.
func (s *Store) Restore(ctx context.Context, tenant platform.Tenant, key string, n int) error {
	_, err := s.restore(ctx, tenant, key, n, "")
	return err
}

// SyncChanges is what syncing the workflow whose workflowId or _id is key
// to the environment targetID would change there, each change as one line
// ("name: "Old" → "New""), as POST /v2/workflows/{workflowId}/sync/diff
// reports it; exists is false while the target has no copy.
func (s *Store) SyncChanges(ctx context.Context, tenant platform.Tenant, key, targetID string) (lines []string, exists bool, err error) {
	src, tgt, err := s.syncPair(ctx, tenant, key, targetID)
	if err != nil {
		return nil, false, err
	}
	after := snapshotOf(src)
	var before *snapshot
	if tgt != nil {
		b := snapshotOf(tgt)
		before = &b
	}
	for _, c := range diff(before, &after) {
		lines = append(lines, changeLine(c))
	}
	return lines, tgt != nil, nil
}

func changeLine(c fieldChange) string {
	short := func(v any) string {
		b, _ := json.Marshal(v)
		s := string(b)
		if len(s) > 80 {
			s = s[:77] + "…"
		}
		return s
	}
	switch c.Kind {
	case "added":
		return c.Path + ": added " + short(c.To)
	case "removed":
		return c.Path + ": removed"
	}
	return strings.Join([]string{c.Path + ": " + short(c.From), short(c.To)}, " → ")
}

// Channels are the channels a workflow's preferences turn on or off.
func Channels() []string { return slices.Clone(channels) }

// Change is one difference between two versions as a page shows it: the
// value's path, added, removed or changed, and the values before and
// after as text (a string as it is, anything else as JSON; "" for none).
type Change struct {
	Path, Kind, From, To string
}

// VersionChanges is what changed from version from (0: from nothing) to
// version n of the workflow whose workflowId or _id is key, as GET
// /v2/workflows/{workflowId}/versions/{version}/diff?from= answers it.
func (s *Store) VersionChanges(ctx context.Context, envID, key string, from, n int) ([]Change, error) {
	to, err := s.version(ctx, envID, key, n)
	if err != nil {
		return nil, err
	}
	var before *snapshot
	if from > 0 {
		v, err := s.version(ctx, envID, key, from)
		if err != nil {
			return nil, err
		}
		before = &v.Snapshot
	}
	var out []Change
	for _, c := range diff(before, &to.Snapshot) {
		out = append(out, Change{Path: c.Path, Kind: c.Kind, From: shownValue(c.From, c.Kind == "added"), To: shownValue(c.To, c.Kind == "removed")})
	}
	return out, nil
}

// shownValue is v as a page shows it: a string as it is, anything else as
// indented JSON; "" when absent (none).
func shownValue(v any, none bool) string {
	if none {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

package workflows

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// defaultPreferences is every channel on, nothing read-only (docs/api.md,
// "What strict clients check").
func defaultPreferences() ChannelPreferences {
	p := ChannelPreferences{All: AllPreference{Enabled: true}, Channels: map[string]EnabledSetting{}}
	for _, c := range channels {
		p.Channels[c] = EnabledSetting{Enabled: true}
	}
	return p
}

// merge returns base with the values set in over applied. A set that turns
// all channels on or off does so for every channel it does not name itself:
// a stored set names every channel, and otherwise base's own channel flags
// would override the all that over sets, and "all off" would turn none off.
func (base ChannelPreferences) merge(over *preferenceSet) ChannelPreferences {
	out := ChannelPreferences{All: base.All, Channels: map[string]EnabledSetting{}}
	for k, v := range base.Channels {
		out.Channels[k] = v
	}
	if over == nil {
		return out
	}
	if over.All != nil {
		if over.All.Enabled != nil {
			out.All.Enabled = *over.All.Enabled
			for k := range out.Channels {
				out.Channels[k] = EnabledSetting{Enabled: *over.All.Enabled}
			}
		}
		if over.All.ReadOnly != nil {
			out.All.ReadOnly = *over.All.ReadOnly
		}
	}
	for c, v := range over.Channels {
		if v.Enabled != nil {
			out.Channels[c] = EnabledSetting{Enabled: *v.Enabled}
		}
	}
	return out
}

// apply sets w from a create or update body: on update (creating false) an
// absent optional field keeps its value, on create it takes its default.
// Bad control values and payload schemas are returned as one 422.
func apply(w *workflow, req workflowRequest, creating bool) error {
	fields := map[string]platform.FieldError{}
	w.Name = req.Name
	if req.Description != nil {
		w.Description = *req.Description
	}
	if req.Tags != nil || creating {
		w.Tags = distinctTags(req.Tags)
	}
	setBool := func(dst *bool, v *bool, def bool) {
		if v != nil {
			*dst = *v
		} else if creating {
			*dst = def
		}
	}
	// A new workflow is inactive unless it says otherwise: the "Workflows"
	// section of docs/api.md states it, although the reference platform upserts
	// workflows as active (active ?? true).
	setBool(&w.Active, req.Active, false)
	setBool(&w.ValidatePayload, req.ValidatePayload, false)
	setBool(&w.IsTranslationEnabled, req.IsTranslationEnabled, false)
	if err := setPayloadSchema(w, req.PayloadSchema, fields); err != nil {
		return err
	}
	if req.Severity != "" {
		w.Severity = req.Severity
	} else if creating {
		w.Severity = "none"
	}
	if req.Preferences != nil || creating {
		var p Preferences
		var set, user *preferenceSet
		if req.Preferences != nil {
			set, user = req.Preferences.Workflow, req.Preferences.User
			if set == nil {
				set = req.Preferences.Default
			}
		}
		p.Default = defaultPreferences().merge(set)
		if user != nil {
			u := p.Default.merge(user)
			p.User = &u
		}
		w.Preferences = p
	}
	w.Steps = resolveSteps(w.Steps, req.Steps, fields)
	if len(fields) > 0 {
		return platform.Invalid(fields)
	}
	return nil
}

// distinctTags is tags without repeats, in order; never nil.
func distinctTags(tags []string) []string {
	out := []string{}
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// setPayloadSchema sets w's payloadSchema from a body's raw value: absent
// keeps it, null clears it, and one that is no JSON Schema is a problem in
// fields.
func setPayloadSchema(w *workflow, raw json.RawMessage, fields map[string]platform.FieldError) error {
	switch raw := bytes.TrimSpace(raw); {
	case len(raw) == 0:
	case string(raw) == "null":
		w.PayloadSchema = nil
	case raw[0] != '{':
		fields["payloadSchema"] = platform.FieldError{Messages: []string{"must be an object (a JSON Schema) or null"}, Value: json.RawMessage(raw)}
	default:
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return err
		}
		// Refused now, as the trigger would refuse it on every call once
		// validatePayload is on (now or by a later update): the trigger
		// compiles it the same way (platform.CompileSchema).
		if _, err := platform.CompileSchema(compact.Bytes()); err != nil {
			fields["payloadSchema"] = platform.FieldError{Messages: []string{"must be a valid JSON Schema: " + err.Error()}, Value: json.RawMessage(raw)}
			return nil
		}
		w.PayloadSchema = compact.Bytes()
	}
	return nil
}

// applyPatch sets the fields a PATCH body names and keeps the others.
func applyPatch(w *workflow, req patchRequest) error {
	fields := map[string]platform.FieldError{}
	if req.Name != nil {
		w.Name = *req.Name
	}
	if req.Description != nil {
		w.Description = *req.Description
	}
	if req.Tags != nil {
		w.Tags = distinctTags(req.Tags)
	}
	if req.Active != nil {
		w.Active = *req.Active
	}
	if req.ValidatePayload != nil {
		w.ValidatePayload = *req.ValidatePayload
	}
	if req.IsTranslationEnabled != nil {
		w.IsTranslationEnabled = *req.IsTranslationEnabled
	}
	if err := setPayloadSchema(w, req.PayloadSchema, fields); err != nil {
		return err
	}
	if len(fields) > 0 {
		return platform.Invalid(fields)
	}
	return nil
}

// resolveSteps builds the new step list: a step matched by _id or stepId
// keeps its _id; a step without stepId gets a slug of its name, unique in the
// workflow.
func resolveSteps(existing []Step, reqs []stepRequest, fields map[string]platform.FieldError) []Step {
	used := map[string]bool{}
	for i, r := range reqs {
		if r.StepID == "" {
			continue
		}
		if used[r.StepID] {
			fields["steps."+itoa(i)+".stepId"] = platform.FieldError{Messages: []string{"must be unique within the workflow"}, Value: r.StepID}
		}
		used[r.StepID] = true
	}
	out := make([]Step, 0, len(reqs))
	claimed := map[string]bool{} // existing _ids already matched
	for i, r := range reqs {
		var match *Step
		for j := range existing {
			e := &existing[j]
			if !claimed[e.ID] && (r.ID != "" && e.ID == r.ID || r.ID == "" && r.StepID != "" && e.StepID == r.StepID) {
				match = e
				break
			}
		}
		st := Step{StepID: r.StepID, Name: r.Name, Type: r.Type}
		switch raw := bytes.TrimSpace(r.ControlValues); {
		case len(raw) == 0: // absent: a matched step keeps its values
			if match != nil {
				st.ControlValues = match.ControlValues
			}
		case string(raw) == "null":
		case raw[0] == '{' && json.Unmarshal(raw, &st.ControlValues) == nil:
		default:
			fields["steps."+itoa(i)+".controlValues"] = platform.FieldError{Messages: []string{"must be an object"}, Value: json.RawMessage(raw)}
		}
		if match != nil {
			claimed[match.ID] = true
			st.ID = match.ID
			if st.StepID == "" && !used[match.StepID] {
				st.StepID = match.StepID
				used[st.StepID] = true
			}
		} else {
			st.ID = sqldb.NewID()
		}
		if st.StepID == "" {
			base := slugify(r.Name, "step")
			st.StepID = base
			for used[st.StepID] {
				st.StepID = base + "-" + shortSuffix()
			}
			used[st.StepID] = true
		}
		if st.ControlValues == nil {
			st.ControlValues = map[string]any{}
		}
		validateControls(r.Type, st.ControlValues, "steps."+itoa(i)+".controlValues", fields)
		out = append(out, st)
	}
	return out
}

// create stores a new workflow from req in the tenant's environment.
func (s *Store) create(ctx context.Context, tenant platform.Tenant, req workflowRequest, origin string) (w *workflow, err error) {
	return s.createWith(ctx, tenant, req, origin, req.VersionNote, nil)
}

// createWith is create, with then (when not nil) changing the new workflow
// after req is applied and before it is stored; note is its first
// version's.
func (s *Store) createWith(ctx context.Context, tenant platform.Tenant, req workflowRequest, origin, note string, then func(*workflow)) (w *workflow, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "create workflow")
	ts := sqldb.FormatTime(s.now())
	w = &workflow{
		ID:             sqldb.NewIDAt(s.now()),
		OrganizationID: tenant.OrganizationID,
		EnvironmentID:  tenant.EnvironmentID,
		CreatorID:      tenant.UserID,
		Origin:         origin,
		UpdatedBy:      tenant.UserID,
		CreatedAt:      ts,
		UpdatedAt:      ts,
		// Workflows written through the API are live at once: there is no draft.
		LastPublishedAt: ts,
		LastPublishedBy: tenant.UserID,
	}
	if err := apply(w, req, true); err != nil {
		return nil, err
	}
	if then != nil {
		then(w)
	}
	raise := s.wants(ctx, tenant.EnvironmentID, EventCreated)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		if err := s.placeInGroup(ctx, tx, w); err != nil {
			return err
		}
		if w.WorkflowID, err = chooseIdentifier(ctx, tx, tenant.EnvironmentID, req.WorkflowID, req.Name, ""); err != nil {
			return err
		}
		if err := insert(ctx, tx, w); err != nil {
			return err
		}
		if err := recordVersion(ctx, tx, w, nil, tenant.UserID, note, ts); err != nil || !raise {
			return err
		}
		return s.raise(ctx, tx, EventCreated, w, nil)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// chooseIdentifier returns the workflowId to use: the explicit one, which
// must be free (409 otherwise, docs/api.md, "The write side"), or a slug of
// the name with a short suffix on collision.
func chooseIdentifier(ctx context.Context, tx *sql.Tx, envID, explicit, name, exceptID string) (string, error) {
	if explicit != "" {
		taken, err := identifierTaken(ctx, tx, envID, explicit, exceptID)
		if err != nil {
			return "", err
		}
		if taken {
			return "", platform.Conflict("Workflow with workflowId %q already exists", explicit)
		}
		return explicit, nil
	}
	base := slugify(name, "workflow")
	candidate := base
	for range 8 {
		taken, err := identifierTaken(ctx, tx, envID, candidate, exceptID)
		if err != nil || !taken {
			return candidate, err
		}
		candidate = base + "-" + shortSuffix()
	}
	return "", platform.Conflict("Could not generate a unique workflowId from the name %q; give one", name)
}

// update applies req to the workflow named by key.
func (s *Store) update(ctx context.Context, tenant platform.Tenant, key string, req workflowRequest) (w *workflow, err error) {
	return s.change(ctx, tenant, key, req.VersionNote, func(tx *sql.Tx, w *workflow) (err error) {
		if err := apply(w, req, false); err != nil {
			return err
		}
		if req.WorkflowID != "" && req.WorkflowID != w.WorkflowID {
			w.WorkflowID, err = chooseIdentifier(ctx, tx, tenant.EnvironmentID, req.WorkflowID, req.Name, w.ID)
		}
		return err
	})
}

// patch applies req, the fields a PATCH names, to the workflow named by key.
func (s *Store) patch(ctx context.Context, tenant platform.Tenant, key string, req patchRequest) (w *workflow, err error) {
	return s.change(ctx, tenant, key, req.VersionNote, func(_ *sql.Tx, w *workflow) error { return applyPatch(w, req) })
}

// change finds the workflow named by key, lets edit change it and writes it,
// stamped as updated and published now, as a new version with note.
func (s *Store) change(ctx context.Context, tenant platform.Tenant, key, note string, edit func(*sql.Tx, *workflow) error) (w *workflow, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "update workflow %s", key)
	raise := s.wants(ctx, tenant.EnvironmentID, EventUpdated)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		if w, err = find(ctx, tx, tenant.EnvironmentID, key); err != nil {
			return notFound(err, key)
		}
		prev := w.clone()
		if err := edit(tx, w); err != nil {
			return err
		}
		ts := sqldb.FormatTime(s.now())
		w.UpdatedAt, w.UpdatedBy, w.LastPublishedAt, w.LastPublishedBy = ts, tenant.UserID, ts, tenant.UserID
		if err := update(ctx, tx, w); err != nil {
			return err
		}
		if err := recordVersion(ctx, tx, w, prev, tenant.UserID, note, ts); err != nil || !raise {
			return err
		}
		return s.raise(ctx, tx, EventUpdated, w, prev)
	})
	return w, err
}

// remove soft-deletes the workflow named by key.
func (s *Store) remove(ctx context.Context, tenant platform.Tenant, key string) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "delete workflow %s", key)
	raise := s.wants(ctx, tenant.EnvironmentID, EventDeleted)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		w, err := find(ctx, tx, tenant.EnvironmentID, key)
		if err != nil {
			return notFound(err, key)
		}
		if err := softDelete(ctx, tx, w.ID, tenant.UserID, sqldb.FormatTime(s.now())); err != nil || !raise {
			return err
		}
		// The workflow as it was before the delete, as the reference
		// platform sends it.
		return s.raise(ctx, tx, EventDeleted, w, nil)
	})
}

// get returns the live workflow named by key.
func (s *Store) get(ctx context.Context, envID, key string) (*workflow, error) {
	w, err := find(ctx, s.db, envID, key)
	return w, notFound(err, key)
}

func notFound(err error, key string) error {
	if errors.Is(err, platform.ErrNotFound) {
		// The reference names the workflow in the body too (docs/api.md,
		// "Workflow sync").
		e := platform.NotFound("Workflow cannot be found")
		e.Extra = map[string]any{"workflowId": key}
		return e
	}
	return err
}

// sync upserts the workflow named by key into target, by workflowId
// (docs/api.md, "Workflow sync"): created the first time, updated in place
// after that, steps matched by stepId. Only workflows are written.
func (s *Store) sync(ctx context.Context, tenant platform.Tenant, key string, target platform.Environment, note string) (tgt *workflow, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "sync workflow %s", key)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID, target.ID); err != nil {
			return err
		}
		src, err := find(ctx, tx, tenant.EnvironmentID, key)
		if err != nil {
			return notFound(err, key)
		}
		desc := src.Description
		req := workflowRequest{
			Name: src.Name, Description: &desc, Tags: src.Tags, Active: &src.Active,
			ValidatePayload: &src.ValidatePayload, PayloadSchema: src.PayloadSchema,
			IsTranslationEnabled: &src.IsTranslationEnabled, Severity: src.Severity,
		}
		if req.PayloadSchema == nil {
			req.PayloadSchema = json.RawMessage("null")
		}
		for _, st := range src.Steps {
			values, err := json.Marshal(st.ControlValues)
			if err != nil {
				return err
			}
			req.Steps = append(req.Steps, stepRequest{StepID: st.StepID, Name: st.Name, Type: st.Type, ControlValues: values})
		}
		ts := sqldb.FormatTime(s.now())
		tgt, err = find(ctx, tx, target.ID, src.WorkflowID)
		switch {
		case errors.Is(err, platform.ErrNotFound):
			tgt = &workflow{
				ID: sqldb.NewIDAt(s.now()), OrganizationID: target.OrganizationID, EnvironmentID: target.ID,
				WorkflowID: src.WorkflowID, CreatorID: tenant.UserID, Origin: src.Origin, CreatedAt: ts,
			}
			if tgt.NotificationGroupID, err = s.defaultGroup(ctx, tx, target.OrganizationID, target.ID); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		creating := tgt.UpdatedAt == "" // a fresh target row has never been written
		var prev *workflow
		if !creating {
			prev = tgt.clone()
		}
		if err := apply(tgt, req, creating); err != nil {
			return err
		}
		tgt.Preferences = src.Preferences
		tgt.UpdatedAt, tgt.UpdatedBy, tgt.LastPublishedAt, tgt.LastPublishedBy = ts, tenant.UserID, ts, tenant.UserID
		if err := upsert(ctx, tx, tgt); err != nil {
			return err
		}
		if note == "" {
			note = "Synced from " + tenant.EnvironmentID
		}
		if err := recordVersion(ctx, tx, tgt, prev, tenant.UserID, note, ts); err != nil {
			return err
		}
		if err := s.syncContent(ctx, tx, tenant, src, target); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE workflows SET last_published_at = ?, last_published_by = ? WHERE id = ?`,
			ts, tenant.UserID, src.ID)
		return err
	})
	return tgt, err
}

// upsert inserts w, or updates it when its row exists.
func upsert(ctx context.Context, tx *sql.Tx, w *workflow) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workflows WHERE id = ?`, w.ID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return insert(ctx, tx, w)
	}
	return update(ctx, tx, w)
}

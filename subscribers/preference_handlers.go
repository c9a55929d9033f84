package subscribers

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// WorkflowSource finds the workflows subscriber preferences are about. It
// is satisfied by workflows.Store (checked in wire.go).
type WorkflowSource interface {
	// PreferenceWorkflow returns the live workflow whose workflowId, _id
	// or slug is key, or platform.ErrNotFound.
	PreferenceWorkflow(ctx context.Context, environmentID, key string) (workflows.PreferenceWorkflow, error)
	// PreferenceWorkflows returns every live workflow, oldest first.
	PreferenceWorkflows(ctx context.Context, environmentID string) ([]workflows.PreferenceWorkflow, error)
}

// WithWorkflows returns s reading workflows through w, which the
// preference routes need; without it they know no workflow.
func (s *Store) WithWorkflows(w WorkflowSource) *Store {
	s.workflows = w
	return s
}

// channelsBody is a v2 preference body's channels: the flags it sets.
type channelsBody map[string]bool

// preferenceView is a workflow's preferences for one subscriber, as the
// answers show them.
type preferenceView struct {
	wf       workflows.PreferenceWorkflow
	resolved Resolved
	sub      Subscribed
}

// channels returns the view's channels as the answers list them: those of
// the workflow's steps, or all of them.
func (v preferenceView) channels(all bool) map[string]bool {
	out := map[string]bool{}
	for c, d := range v.resolved.Channels {
		if all || slices.Contains(v.wf.Channels, c) {
			out[c] = d.Enabled
		}
	}
	return out
}

// overrides lists, for each channel shown, whether the subscriber or the
// workflow set it ({channel, source}, source "subscriber" or "template").
func (v preferenceView) overrides(all bool) []map[string]string {
	out := []map[string]string{}
	for _, c := range Channels {
		d := v.resolved.Channels[c]
		if !all && !slices.Contains(v.wf.Channels, c) {
			continue
		}
		source := "template"
		if d.Rule.bySubscriber() {
			source = "subscriber"
		}
		out = append(out, map[string]string{"channel": c, "source": source})
	}
	return out
}

// kind is the type of the last preference document the reference would
// merge for the view, which its v1 list answers as `type`.
func (v preferenceView) kind() Rule {
	switch {
	case v.resolved.Critical && v.wf.Preferences.User != nil:
		return RuleUser
	case v.resolved.Critical:
		return RuleWorkflow
	case v.sub.Workflow != nil:
		return RuleSubscriberWorkflow
	case v.sub.Global != nil:
		return RuleSubscriberGlobal
	case v.wf.Preferences.User != nil:
		return RuleUser
	}
	return RuleWorkflow
}

// template is the v1 answers' workflow summary.
func (v preferenceView) template() map[string]any {
	return map[string]any{
		"_id": v.wf.ID, "name": v.wf.Name, "tags": v.wf.Tags, "critical": v.resolved.Critical,
		"triggers": []map[string]any{{"type": "event", "identifier": v.wf.WorkflowID, "variables": []any{}}},
		"data":     map[string]any{}, "severity": v.wf.Severity,
		"createdAt": v.wf.CreatedAt, "updatedAt": v.wf.UpdatedAt,
	}
}

// preferenceState is everything the answers read: the subscriber, its
// global set and a view per workflow.
type preferenceState struct {
	subscriberRef string
	global        Set
	views         []preferenceView
}

// globalChannels is the subscriber's global channels, as the reference
// shows them: those of the environment's workflows' steps, on unless the
// subscriber turned them off.
func (st preferenceState) globalChannels() map[string]bool {
	out := map[string]bool{}
	for _, v := range st.views {
		for _, c := range v.wf.Channels {
			out[c] = true
		}
	}
	for c, on := range st.global {
		if _, shown := out[c]; shown {
			out[c] = on
		}
	}
	return out
}

// criticality says which workflows a list shows.
type criticality string

const (
	nonCritical    criticality = "nonCritical"
	onlyCritical   criticality = "critical"
	anyCriticality criticality = "all"
)

func (c criticality) shows(v preferenceView) bool {
	return c == anyCriticality || (c == onlyCritical) == v.resolved.Critical
}

// preferenceState reads a subscriber's preferences for every workflow of
// the environment. A missing subscriber is a 404.
func (s *Store) preferenceState(ctx context.Context, environmentID, subscriberID string) (st preferenceState, err error) {
	ref, err := s.subscriberRef(ctx, environmentID, subscriberID)
	if err != nil {
		return st, err
	}
	st.subscriberRef = ref
	global, byWorkflow, err := s.allSubscribed(ctx, environmentID, ref)
	if err != nil {
		return st, err
	}
	st.global = global
	var wfs []workflows.PreferenceWorkflow
	if s.workflows != nil {
		if wfs, err = s.workflows.PreferenceWorkflows(ctx, environmentID); err != nil {
			return st, err
		}
	}
	for _, wf := range wfs {
		sub := byWorkflow[wf.ID]
		sub.Global = global
		st.views = append(st.views, preferenceView{wf: wf, sub: sub, resolved: Resolve(wf.Preferences, sub)})
	}
	return st, nil
}

// subscriberRef returns the _id of the subscriber, or a 404.
func (s *Store) subscriberRef(ctx context.Context, environmentID, subscriberID string) (string, error) {
	var ref string
	err := s.db.QueryRow(ctx, `SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?`,
		environmentID, subscriberID).Scan(&ref)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", platform.NotFound("Subscriber %q not found", subscriberID)
		}
		return "", err
	}
	return ref, nil
}

// preferenceWorkflow finds the workflow a preference write names: a 404
// when there is none, a 400 when it is critical (the reference's answer).
func (s *Store) preferenceWorkflow(ctx context.Context, environmentID, key string) (workflows.PreferenceWorkflow, error) {
	if s.workflows == nil {
		return workflows.PreferenceWorkflow{}, platform.NotFound("Workflow %q not found", key)
	}
	wf, err := s.workflows.PreferenceWorkflow(ctx, environmentID, key)
	if errors.Is(err, platform.ErrNotFound) {
		return wf, platform.NotFound("Workflow %q not found", key)
	}
	if err != nil {
		return wf, err
	}
	if wf.Preferences.Critical() {
		return wf, platform.BadRequest("Critical workflow with id: %s can not be updated", key)
	}
	return wf, nil
}

// preferenceWrite is a preference write: its body, and the subscriber it
// is for.
type preferenceWrite[T any] struct {
	store             *Store
	ctx               context.Context
	body              T
	env, subscriberID string
	ref               string // the subscriber's _id
}

// decodePreferenceWrite decodes the body of a write to the preferences of
// the path's subscriber, which must exist (404).
func decodePreferenceWrite[T any](store *Store, r *http.Request) (pw preferenceWrite[T], err error) {
	if pw.body, err = platform.Decode[T](r); err != nil {
		return pw, err
	}
	pw.store, pw.ctx = store, r.Context()
	pw.env, pw.subscriberID = platform.TenantFrom(pw.ctx).EnvironmentID, r.PathValue("subscriberId")
	pw.ref, err = store.subscriberRef(pw.ctx, pw.env, pw.subscriberID)
	return pw, err
}

// apply writes changes and reads the subscriber's preferences back.
func (pw preferenceWrite[T]) apply(changes []preferenceChange) (preferenceState, error) {
	if err := pw.store.updatePreferences(pw.ctx, pw.env, pw.ref, changes); err != nil {
		return preferenceState{}, err
	}
	return pw.store.preferenceState(pw.ctx, pw.env, pw.subscriberID)
}

// updatePreferences writes changes for one subscriber in one transaction:
// each entry's workflowID is a workflow _id, or "" for its global set.
func (s *Store) updatePreferences(ctx context.Context, environmentID, subscriberRef string, changes []preferenceChange) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, c := range changes {
			if err := s.setPreferences(ctx, tx, environmentID, subscriberRef, c.workflowID, c.set); err != nil {
				return err
			}
		}
		return nil
	})
}

// preferenceChange is one set of channel flags to merge into a subscriber's
// preferences.
type preferenceChange struct {
	workflowID string // "" for the global set
	set        Set
}

// view returns st's view of the workflow whose _id is id.
func (st preferenceState) view(id string) preferenceView {
	for _, v := range st.views {
		if v.wf.ID == id {
			return v
		}
	}
	return preferenceView{}
}

// handlePreferencesList serves GET /v1/subscribers/{subscriberId}/preferences:
// the subscriber's preferences for each non-critical workflow.
func handlePreferencesList(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		inactive := q.Bool("includeInactiveChannels")
		if err := q.Err(); err != nil {
			return err
		}
		st, err := store.preferenceState(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, v1Templates(st, inactive != nil && *inactive))
	})
}

// v1Templates is the v1 list of template preferences.
func v1Templates(st preferenceState, all bool) []map[string]any {
	out := []map[string]any{}
	for _, v := range st.views {
		if v.resolved.Critical {
			continue
		}
		out = append(out, map[string]any{"template": v.template(), "type": v.kind(), "preference": map[string]any{
			"enabled": true, "channels": v.channels(all), "overrides": v.overrides(all)}})
	}
	return out
}

// handlePreferencesByLevel serves GET
// /v1/subscribers/{subscriberId}/preferences/{level}: level global answers
// the global preferences, template the list with every channel by default.
func handlePreferencesByLevel(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		level := r.PathValue("level")
		q := platform.NewQuery(r)
		inactive := q.Bool("includeInactiveChannels")
		if level != "global" && level != "template" {
			q.Fail("level", level, "must be one of: global, template")
		}
		if err := q.Err(); err != nil {
			return err
		}
		st, err := store.preferenceState(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		if level == "global" {
			return platform.JSON(w, http.StatusOK, []map[string]any{{"preference": map[string]any{
				"enabled": true, "channels": st.globalChannels()}}})
		}
		return platform.JSON(w, http.StatusOK, v1Templates(st, inactive == nil || *inactive))
	})
}

// handlePreferenceUpdateV1 serves PATCH
// /v1/subscribers/{subscriberId}/preferences/{workflowId}: it sets one
// channel of the subscriber's preferences for the workflow. The body's
// enabled is accepted and, as in the reference, not applied.
func handlePreferenceUpdateV1(store *Store) http.Handler {
	type body struct {
		Channel *struct {
			Type    string `json:"type" validate:"required,oneof=in_app email sms chat push"`
			Enabled *bool  `json:"enabled" validate:"required"`
		} `json:"channel"`
		Enabled *bool `json:"enabled"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		pw, err := decodePreferenceWrite[body](store, r)
		if err != nil {
			return err
		}
		ctx, env, req := pw.ctx, pw.env, pw.body
		wf, err := store.preferenceWorkflow(ctx, env, r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		var change []preferenceChange
		if req.Channel != nil {
			change = append(change, preferenceChange{workflowID: wf.ID, set: Set{req.Channel.Type: *req.Channel.Enabled}})
		}
		st, err := pw.apply(change)
		if err != nil {
			return err
		}
		v := st.view(wf.ID)
		tmpl := v.template()
		delete(tmpl, "severity")
		return platform.JSON(w, http.StatusOK, map[string]any{"template": tmpl,
			"preference": map[string]any{"enabled": true, "channels": v.channels(false)}})
	})
}

// handleGlobalPreferenceUpdateV1 serves PATCH
// /v1/subscribers/{subscriberId}/preferences: it sets channels of the
// subscriber's global preferences. enabled is accepted and not applied, as
// in the reference.
func handleGlobalPreferenceUpdateV1(store *Store) http.Handler {
	type body struct {
		Preferences []struct {
			Type    string `json:"type" validate:"required,oneof=in_app email sms chat push"`
			Enabled *bool  `json:"enabled" validate:"required"`
		} `json:"preferences" validate:"max=5,dive"`
		Enabled *bool `json:"enabled"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		pw, err := decodePreferenceWrite[body](store, r)
		if err != nil {
			return err
		}
		set := Set{}
		for _, p := range pw.body.Preferences {
			set[p.Type] = *p.Enabled
		}
		st, err := pw.apply([]preferenceChange{{set: set}})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, map[string]any{"preference": map[string]any{
			"enabled": true, "channels": st.globalChannels()}})
	})
}

// v2Preferences is the answer of GET /v2/subscribers/{subscriberId}/preferences.
func v2Preferences(st preferenceState, which criticality) map[string]any {
	wfs := []map[string]any{}
	for _, v := range st.views {
		if !which.shows(v) {
			continue
		}
		item := map[string]any{"enabled": true, "channels": v.channels(false), "overrides": v.overrides(false),
			"workflow": map[string]any{"slug": v.wf.Slug, "identifier": v.wf.WorkflowID, "name": v.wf.Name, "updatedAt": v.wf.UpdatedAt}}
		if v.sub.UpdatedAt != "" {
			item["updatedAt"] = v.sub.UpdatedAt
		}
		wfs = append(wfs, item)
	}
	return map[string]any{"global": map[string]any{"enabled": true, "channels": st.globalChannels()}, "workflows": wfs}
}

// handlePreferencesV2 serves GET /v2/subscribers/{subscriberId}/preferences.
func handlePreferencesV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		which := criticality(q.Enum("criticality", string(nonCritical), string(nonCritical), string(onlyCritical), string(anyCriticality)))
		if err := q.Err(); err != nil {
			return err
		}
		st, err := store.preferenceState(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, v2Preferences(st, which))
	})
}

// handleGlobalPreferencesV2 serves GET
// /v2/subscribers/{subscriberId}/preferences/global.
func handleGlobalPreferencesV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		st, err := store.preferenceState(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, map[string]any{"enabled": true, "channels": st.globalChannels()})
	})
}

// handlePreferenceUpdateV2 serves PATCH
// /v2/subscribers/{subscriberId}/preferences: the channels sent change the
// subscriber's preferences for workflowId, or its global ones without it,
// and the answer is the GET's.
func handlePreferenceUpdateV2(store *Store) http.Handler {
	type body struct {
		Channels   channelsBody `json:"channels" validate:"omitempty,dive,keys,oneof=in_app email sms chat push,endkeys"`
		WorkflowID string       `json:"workflowId" validate:"max=256"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		pw, err := decodePreferenceWrite[body](store, r)
		if err != nil {
			return err
		}
		ctx, env, req := pw.ctx, pw.env, pw.body
		change := preferenceChange{set: Set(req.Channels)}
		if req.WorkflowID != "" {
			wf, err := store.preferenceWorkflow(ctx, env, req.WorkflowID)
			if err != nil {
				return err
			}
			change.workflowID = wf.ID
		}
		st, err := pw.apply([]preferenceChange{change})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, v2Preferences(st, nonCritical))
	})
}

// handlePreferencesBulkV2 serves PATCH
// /v2/subscribers/{subscriberId}/preferences/bulk: up to 100 workflows'
// preferences in one write; one unknown workflow (404) or critical one
// (400) changes nothing.
func handlePreferencesBulkV2(store *Store) http.Handler {
	type body struct {
		Preferences []struct {
			WorkflowID string       `json:"workflowId" validate:"required,max=256"`
			Channels   channelsBody `json:"channels" validate:"required,dive,keys,oneof=in_app email sms chat push,endkeys"`
		} `json:"preferences" validate:"required,min=1,max=100,dive"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		pw, err := decodePreferenceWrite[body](store, r)
		if err != nil {
			return err
		}
		ctx, env, req := pw.ctx, pw.env, pw.body
		changes := make([]preferenceChange, 0, len(req.Preferences))
		for _, p := range req.Preferences {
			wf, err := store.preferenceWorkflow(ctx, env, p.WorkflowID)
			if err != nil {
				return err
			}
			changes = append(changes, preferenceChange{workflowID: wf.ID, set: Set(p.Channels)})
		}
		st, err := pw.apply(changes)
		if err != nil {
			return err
		}
		out := []map[string]any{}
		for _, c := range changes {
			v := st.view(c.workflowID)
			out = append(out, map[string]any{"level": "template", "enabled": true, "channels": v.channels(false),
				"overrides": v.overrides(false), "workflow": map[string]any{"id": v.wf.ID, "identifier": v.wf.WorkflowID,
					"name": v.wf.Name, "critical": v.resolved.Critical, "tags": v.wf.Tags, "severity": v.wf.Severity}})
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

package subscribers

import (
	"context"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// WorkflowSource finds the workflows subscriber preferences are about. It
// is satisfied by workflows.Store (checked in app/wire.go).
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

// handlePreferencesList serves GET /v1/subscribers/{subscriberId}/preferences:
// the subscriber's preferences for each active, non-critical workflow.
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
	for _, v := range st.listed() {
		if v.resolved.Critical {
			continue
		}
		out = append(out, map[string]any{"template": v.template(), "type": v.kind(), "preference": map[string]any{
			"enabled": true, "channels": v.channels(all), "overrides": v.overrides(all)}})
	}
	return out
}

// handlePreferencesByLevel serves GET
// /v1/subscribers/{subscriberId}/preferences/{parameter}, the parameter a
// level: global answers the global preferences, template the list with
// every channel by default.
func handlePreferencesByLevel(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		level := r.PathValue("parameter")
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
// /v1/subscribers/{subscriberId}/preferences/{parameter}, the parameter a
// workflow's _id, workflowId or slug: it sets one channel of the
// subscriber's preferences for the workflow. The body's enabled is accepted
// and, as in the reference, not applied.
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
		wf, err := store.preferenceWorkflow(ctx, env, r.PathValue("parameter"))
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
	for _, v := range st.listed() {
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
	return map[string]any{"global": st.globalPreference(), "workflows": wfs}
}

// globalPreference is the v2 answers' global preference: its channels, and
// the subscriber's schedule when it set one.
func (st preferenceState) globalPreference() map[string]any {
	out := map[string]any{"enabled": true, "channels": st.globalChannels()}
	if st.schedule != nil {
		out["schedule"] = st.schedule
	}
	return out
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
		return platform.JSON(w, http.StatusOK, st.globalPreference())
	})
}

// handlePreferenceUpdateV2 serves PATCH
// /v2/subscribers/{subscriberId}/preferences: the channels sent change the
// subscriber's preferences for workflowId, or its global ones without it,
// and the answer is the GET's. A schedule belongs to the global ones.
func handlePreferenceUpdateV2(store *Store) http.Handler {
	type body struct {
		Channels   channelsBody `json:"channels" validate:"omitempty,dive,keys,oneof=in_app email sms chat push,endkeys"`
		WorkflowID string       `json:"workflowId" validate:"max=256"`
		Schedule   *Schedule    `json:"schedule"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		pw, err := decodePreferenceWrite[body](store, r)
		if err != nil {
			return err
		}
		ctx, env, req := pw.ctx, pw.env, pw.body
		change := preferenceChange{set: Set(req.Channels), schedule: req.Schedule}
		if err := checkScheduleChange(req.Schedule, req.WorkflowID); err != nil {
			return err
		}
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

// checkScheduleChange refuses a schedule that is not well formed, or that
// is sent with a workflow: a subscriber has one schedule, for every
// workflow.
func checkScheduleChange(sc *Schedule, workflowKey string) error {
	if sc == nil {
		return nil
	}
	if workflowKey != "" {
		return platform.BadRequest("schedule applies to every workflow: send it without a workflow")
	}
	return sc.Check()
}

package subscribers

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

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
	schedule      *Schedule
	views         []preferenceView
}

// listed returns the views of active workflows: the lists show only those,
// as the reference does, while a write may still name an inactive one.
func (st preferenceState) listed() []preferenceView {
	out := make([]preferenceView, 0, len(st.views))
	for _, v := range st.views {
		if v.wf.Active {
			out = append(out, v)
		}
	}
	return out
}

// globalChannels is the subscriber's global channels, as the reference
// shows them: those of the environment's active workflows' steps, on
// unless the subscriber turned them off.
func (st preferenceState) globalChannels() map[string]bool {
	out := map[string]bool{}
	for _, v := range st.listed() {
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
	global, schedule, byWorkflow, err := s.allSubscribed(ctx, environmentID, ref)
	if err != nil {
		return st, err
	}
	st.global, st.schedule = global, schedule
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
	// A global write changes what every workflow's entry of the subscriber
	// says, and writes are rare: every entry goes, after the commit.
	defer cacheFor(s.db).preferences.Invalidate()
	events, err := s.preferenceEvents(ctx, environmentID, changes)
	if err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		// Each set is read, merged and written back: another process's
		// write of the subscriber's preferences waits its turn.
		if err := s.db.LockKey(ctx, tx, "subscriber-preferences/"+environmentID+"/"+subscriberRef); err != nil {
			return err
		}
		if err := cacheFor(s.db).preferencesWritten.Changed(ctx, tx); err != nil {
			return err
		}
		sets := make([]Set, len(changes))
		for i, c := range changes {
			set, err := s.setPreferences(ctx, tx, environmentID, subscriberRef, c.workflowID, c.set)
			if err != nil {
				return err
			}
			sets[i] = set
			if c.schedule != nil {
				if err := s.setSchedule(ctx, tx, environmentID, subscriberRef, c.schedule); err != nil {
					return err
				}
			}
		}
		return s.raisePreferences(ctx, tx, environmentID, subscriberRef, events, changes, sets)
	})
}

// preferenceEvents are the events a write of changes raises, one a
// change, with each template-level one's workflow read now, outside the
// write's transaction; nil when no endpoint wants them.
func (s *Store) preferenceEvents(ctx context.Context, environmentID string, changes []preferenceChange) ([]PreferenceEvent, error) {
	if s.events == nil || !s.events.Wants(ctx, environmentID, EventPreferenceUpdated) {
		return nil, nil
	}
	events := make([]PreferenceEvent, len(changes))
	for i, c := range changes {
		events[i] = PreferenceEvent{EnvironmentID: environmentID, Preference: EventPreference{Level: "global"}}
		if c.workflowID == "" || s.workflows == nil {
			continue
		}
		wf, err := s.workflows.PreferenceWorkflow(ctx, environmentID, c.workflowID)
		if err != nil {
			return nil, err
		}
		events[i].Preference.Level = "template"
		events[i].Preference.Workflow = &EventWorkflow{ID: wf.ID, Identifier: wf.WorkflowID, Name: wf.Name}
	}
	return events, nil
}

// raisePreferences raises events, each with its change's channels as
// written (sets), inside tx. A global one carries the subscriber's
// schedule as it stands after the write, and a change of the schedule
// alone raises one too.
func (s *Store) raisePreferences(ctx context.Context, tx *sql.Tx, environmentID, subscriberRef string, events []PreferenceEvent,
	changes []preferenceChange, sets []Set) error {
	if len(events) == 0 {
		return nil
	}
	var subscriberID string
	if err := tx.QueryRowContext(ctx, `SELECT subscriber_id FROM subscribers WHERE id = ?`, subscriberRef).Scan(&subscriberID); err != nil {
		return err
	}
	for i, e := range events {
		if sets[i] == nil && changes[i].schedule == nil {
			continue // nothing changed
		}
		if changes[i].workflowID == "" {
			global, schedule, err := s.globalPreferences(ctx, tx, environmentID, subscriberRef)
			if err != nil {
				return err
			}
			sets[i], e.Preference.Schedule = global, schedule
		}
		e.SubscriberID, e.Preference.Channels = subscriberID, sets[i]
		// A set that names no channel leaves every one on.
		e.Preference.Enabled = len(sets[i]) == 0 || slices.Contains(slices.Collect(maps.Values(sets[i])), true)
		if err := s.events.RaisePreferenceEvent(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// preferenceChange is one set of channel flags to merge into a subscriber's
// preferences.
type preferenceChange struct {
	workflowID string // "" for the global set
	set        Set
	schedule   *Schedule // days to lay over the subscriber's schedule; only with the global set
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

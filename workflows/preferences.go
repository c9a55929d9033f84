package workflows

import (
	"context"
	"slices"

	"github.com/herald-notify/herald/platform"
)

// Preferences is a workflow's channel preferences as its author set them
// (contract §9): the defaults, and the author's override of them (the
// reference's WORKFLOW_RESOURCE and USER_WORKFLOW documents). Subscriber
// preferences are resolved on top of them (subscribers.Resolve).
type Preferences struct {
	Default ChannelPreferences
	User    *ChannelPreferences // nil when the author set none
}

// ChannelPreferences is one set of workflow preferences: a flag for every
// channel it names, and all, which stands for the channels it does not.
type ChannelPreferences struct {
	AllEnabled bool
	ReadOnly   bool            // the workflow is critical: subscriber preferences do not apply
	Channels   map[string]bool // in_app, email, sms, chat, push
}

// Critical reports whether either set is read-only, which makes the
// workflow critical: subscribers cannot turn its channels off.
func (p Preferences) Critical() bool {
	return p.Default.ReadOnly || (p.User != nil && p.User.ReadOnly)
}

// PreferenceWorkflow is what subscriber preferences need to know of a
// workflow: who it is, the channels of its steps and its preferences.
type PreferenceWorkflow struct {
	ID          string // _id
	WorkflowID  string // the trigger identifier
	Slug        string
	Name        string
	Tags        []string
	Severity    string
	Channels    []string // the channel kinds of its steps, in step order, each once
	Preferences Preferences
	CreatedAt   string
	UpdatedAt   string
}

// PreferenceWorkflow returns the environment's live workflow whose
// workflowId, _id or slug is key, or platform.ErrNotFound.
func (s *Store) PreferenceWorkflow(ctx context.Context, environmentID, key string) (_ PreferenceWorkflow, err error) {
	defer platform.Wrap(&err, "preference workflow %s", key)
	w, err := find(ctx, s.db.R, environmentID, idOfSlug(key))
	if err != nil {
		return PreferenceWorkflow{}, err
	}
	return toPreferenceWorkflow(w), nil
}

// PreferenceWorkflows returns every live workflow of the environment,
// oldest first, as the reference lists preferences.
func (s *Store) PreferenceWorkflows(ctx context.Context, environmentID string) (out []PreferenceWorkflow, err error) {
	defer platform.Wrap(&err, "preference workflows")
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+workflowColumns+` FROM workflows
		WHERE environment_id = ? AND deleted = 0 ORDER BY created_at, id`, environmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, toPreferenceWorkflow(w))
	}
	return out, rows.Err()
}

// idOfSlug returns the _id a workflow slug ends with ("name_wf_<_id>", as
// responses spell it), or key itself when it is not one.
func idOfSlug(key string) string {
	const sep = "_wf_"
	for i := len(key) - len(sep); i >= 0; i-- {
		if key[i:i+len(sep)] == sep {
			if id := key[i+len(sep):]; platform.IsID(id) {
				return id
			}
			break
		}
	}
	return key
}

func toPreferenceWorkflow(w *workflow) PreferenceWorkflow {
	out := PreferenceWorkflow{ID: w.ID, WorkflowID: w.WorkflowID, Slug: slugify(w.Name, "workflow") + "_wf_" + w.ID,
		Name: w.Name, Tags: w.Tags, Severity: w.Severity, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Preferences: Preferences{Default: w.Preferences.Default.exported()}}
	if w.Preferences.User != nil {
		u := w.Preferences.User.exported()
		out.Preferences.User = &u
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	out.Channels = []string{}
	for _, st := range w.Steps {
		if slices.Contains(channels, st.Type) && !slices.Contains(out.Channels, st.Type) {
			out.Channels = append(out.Channels, st.Type)
		}
	}
	return out
}

func (c channelPreferences) exported() ChannelPreferences {
	out := ChannelPreferences{AllEnabled: c.All.Enabled, ReadOnly: c.All.ReadOnly, Channels: map[string]bool{}}
	for k, v := range c.Channels {
		out.Channels[k] = v.Enabled
	}
	return out
}

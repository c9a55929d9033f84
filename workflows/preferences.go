package workflows

import (
	"context"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

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
	Active      bool // an inactive workflow is not listed among a subscriber's preferences
	CreatedAt   string
	UpdatedAt   string
}

// PreferenceWorkflow returns the environment's live workflow whose
// workflowId, _id or slug is key, or platform.ErrNotFound.
func (s *Store) PreferenceWorkflow(ctx context.Context, environmentID, key string) (_ PreferenceWorkflow, err error) {
	defer platform.Wrap(&err, "preference workflow %s", key)
	w, err := find(ctx, s.db, environmentID, idOfSlug(key))
	if err != nil {
		return PreferenceWorkflow{}, err
	}
	return toPreferenceWorkflow(w), nil
}

// PreferenceWorkflows returns every live workflow of the environment,
// oldest first, as the reference lists preferences.
func (s *Store) PreferenceWorkflows(ctx context.Context, environmentID string) (out []PreferenceWorkflow, err error) {
	defer platform.Wrap(&err, "preference workflows")
	rows, err := s.db.QueryContext(ctx, `SELECT `+workflowColumns+` FROM workflows
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
			if id := key[i+len(sep):]; sqldb.IsID(id) {
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
		Preferences: w.Preferences, Active: w.Active}
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

package subscribers

import (
	"context"

	"github.com/herald-notify/herald/workflows"
)

// InboxPreference is one of a subscriber's preferences as an inbox shows
// it: its global one (Workflow nil) or one workflow's.
type InboxPreference struct {
	Channels  map[string]bool // the channels of the workflow's steps (global: of every workflow's)
	Overrides []PreferenceOverride
	UpdatedAt string // when the subscriber last set this workflow's; "" when never
	Critical  bool
	Workflow  *workflows.PreferenceWorkflow
	Schedule  *Schedule // the global preference's: the subscriber's schedule, nil when none
}

// PreferenceOverride says who set a channel: "subscriber" or "template".
type PreferenceOverride struct {
	Channel string
	Source  string
}

// InboxPreferences returns the subscriber's global preference and one per
// live workflow of the environment, oldest workflow first, or a 404 when
// the subscriber does not exist. An inactive workflow's is among them, for
// a write to answer; a list leaves it out (Workflow.Active), as the global
// preference's channels do.
func (s *Store) InboxPreferences(ctx context.Context, environmentID, subscriberID string) (InboxPreference, []InboxPreference, error) {
	st, err := s.preferenceState(ctx, environmentID, subscriberID)
	if err != nil {
		return InboxPreference{}, nil, err
	}
	global := InboxPreference{Channels: st.globalChannels(), Schedule: st.schedule}
	out := make([]InboxPreference, 0, len(st.views))
	for _, v := range st.views {
		p := InboxPreference{Channels: v.channels(false), UpdatedAt: v.sub.UpdatedAt, Critical: v.resolved.Critical}
		wf := v.wf
		p.Workflow = &wf
		for _, o := range v.overrides(false) {
			p.Overrides = append(p.Overrides, PreferenceOverride{Channel: o["channel"], Source: o["source"]})
		}
		out = append(out, p)
	}
	return global, out, nil
}

// InboxPreferenceChange is one write of an inbox's preferences: channel
// flags for the workflow whose workflowId, _id or slug is WorkflowKey, or
// for the global preference when it is "".
type InboxPreferenceChange struct {
	WorkflowKey string
	Channels    Set
	Schedule    *Schedule // days laid over the subscriber's schedule; only without WorkflowKey
}

// UpdateInboxPreferences writes changes for the subscriber in one
// transaction, as the preference routes do: a 404 for an unknown workflow
// or subscriber, a 400 for a critical workflow, and nothing written then.
// It returns the _id of each change's workflow ("" for global).
func (s *Store) UpdateInboxPreferences(ctx context.Context, environmentID, subscriberID string, changes []InboxPreferenceChange) ([]string, error) {
	ref, err := s.subscriberRef(ctx, environmentID, subscriberID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(changes))
	writes := make([]preferenceChange, len(changes))
	for i, c := range changes {
		if err := checkScheduleChange(c.Schedule, c.WorkflowKey); err != nil {
			return nil, err
		}
		if c.WorkflowKey != "" {
			wf, err := s.preferenceWorkflow(ctx, environmentID, c.WorkflowKey)
			if err != nil {
				return nil, err
			}
			ids[i] = wf.ID
		}
		writes[i] = preferenceChange{workflowID: ids[i], set: c.Channels, schedule: c.Schedule}
	}
	return ids, s.updatePreferences(ctx, environmentID, ref, writes)
}

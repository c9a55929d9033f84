package messaging

import (
	"context"
	"net/http"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// InboxPreferenceStore reads and writes a subscriber's preferences as the
// inbox shows them; subscribers.Store satisfies it.
type InboxPreferenceStore interface {
	InboxPreferences(ctx context.Context, environmentID, subscriberID string) (subscribers.InboxPreference, []subscribers.InboxPreference, error)
	UpdateInboxPreferences(ctx context.Context, environmentID, subscriberID string, changes []subscribers.InboxPreferenceChange) ([]string, error)
}

// inboxPreference is a preference as the inbox client reads it
// (docs/inbox.md, "What the routes do").
type inboxPreference struct {
	Level     string                `json:"level"` // global or template
	Enabled   bool                  `json:"enabled"`
	Channels  map[string]bool       `json:"channels"`
	Overrides []map[string]string   `json:"overrides,omitempty"`
	UpdatedAt string                `json:"updatedAt,omitempty"`
	Workflow  *inboxWorkflow        `json:"workflow,omitempty"`
	Schedule  *subscribers.Schedule `json:"schedule,omitempty"` // the global preference's
}

func toInboxPreference(p subscribers.InboxPreference, withOverrides bool) inboxPreference {
	out := inboxPreference{Level: "global", Enabled: true, Channels: p.Channels, Schedule: p.Schedule}
	if out.Channels == nil {
		out.Channels = map[string]bool{}
	}
	if wf := p.Workflow; wf != nil {
		sev := wf.Severity
		if sev == "" {
			sev = "none"
		}
		out.Level, out.UpdatedAt = "template", p.UpdatedAt
		out.Workflow = &inboxWorkflow{ID: wf.ID, Identifier: wf.WorkflowID, Name: wf.Name, Critical: p.Critical,
			Tags: wf.Tags, Severity: sev}
		if withOverrides {
			out.Overrides = []map[string]string{}
			for _, o := range p.Overrides {
				out.Overrides = append(out.Overrides, map[string]string{"channel": o.Channel, "source": o.Source})
			}
		}
	}
	return out
}

// channelFlags are the channel booleans an inbox preference write sends.
type channelFlags struct {
	Email *bool `json:"email"`
	SMS   *bool `json:"sms"`
	InApp *bool `json:"in_app"`
	Chat  *bool `json:"chat"`
	Push  *bool `json:"push"`
	// Schedule is the subscriber's schedule, which the inbox sends to the
	// global preference only.
	Schedule *subscribers.Schedule `json:"schedule"`
}

func (f channelFlags) set() subscribers.Set {
	out := subscribers.Set{}
	for c, v := range map[string]*bool{"email": f.Email, "sms": f.SMS, "in_app": f.InApp, "chat": f.Chat, "push": f.Push} {
		if v != nil {
			out[c] = *v
		}
	}
	return out
}

// handleInboxPreferences serves GET /v1/inbox/preferences: the global
// preference, then each active workflow's, filtered by criticality
// (nonCritical by default), tags and severity.
func handleInboxPreferences(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, who := r.Context(), platform.SubscriberFrom(r.Context())
		q := platform.NewQuery(r)
		values := r.URL.Query()
		crit := q.Enum("criticality", "nonCritical", "nonCritical", "critical", "all")
		tags := append(values["tags[]"], values["tags"]...)
		severity := append(values["severity"], values["severity[]"]...)
		for _, sev := range severity {
			if !slices.Contains([]string{"high", "medium", "low", "none"}, sev) {
				q.Fail("severity", sev, "must be one of: high, medium, low, none")
			}
		}
		if err := q.Err(); err != nil {
			return err
		}
		global, wfs, err := s.inbox.Preferences.InboxPreferences(ctx, who.EnvironmentID, who.SubscriberID)
		if err != nil {
			return err
		}
		out := []inboxPreference{toInboxPreference(global, false)}
		for _, p := range wfs {
			if !p.Workflow.Active || (crit == "nonCritical" && p.Critical) || (crit == "critical" && !p.Critical) {
				continue
			}
			if len(tags) > 0 && !slices.ContainsFunc(p.Workflow.Tags, func(t string) bool { return slices.Contains(tags, t) }) {
				continue
			}
			pref := toInboxPreference(p, true)
			if len(severity) > 0 && !slices.Contains(severity, pref.Workflow.Severity) {
				continue
			}
			out = append(out, pref)
		}
		return platform.JSON(w, http.StatusOK, data[[]inboxPreference]{out})
	})
}

// handleInboxGlobalPreference serves GET /v1/inbox/preferences/global.
func handleInboxGlobalPreference(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		who := platform.SubscriberFrom(r.Context())
		global, _, err := s.inbox.Preferences.InboxPreferences(r.Context(), who.EnvironmentID, who.SubscriberID)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, data[inboxPreference]{toInboxPreference(global, false)})
	})
}

// updatePreferences writes changes and answers the preferences of the
// workflows they name (global for ""), in order.
func (s *Store) updatePreferences(r *http.Request, changes []subscribers.InboxPreferenceChange) ([]inboxPreference, error) {
	ctx, who := r.Context(), platform.SubscriberFrom(r.Context())
	ids, err := s.inbox.Preferences.UpdateInboxPreferences(ctx, who.EnvironmentID, who.SubscriberID, changes)
	if err != nil {
		return nil, err
	}
	global, wfs, err := s.inbox.Preferences.InboxPreferences(ctx, who.EnvironmentID, who.SubscriberID)
	if err != nil {
		return nil, err
	}
	out := make([]inboxPreference, 0, len(ids))
	for _, id := range ids {
		if id == "" {
			out = append(out, toInboxPreference(global, false))
			continue
		}
		for _, p := range wfs {
			if p.Workflow.ID == id {
				out = append(out, toInboxPreference(p, false))
			}
		}
	}
	return out, nil
}

// handleInboxPreferenceUpdate serves PATCH /v1/inbox/preferences (the
// global preference) and PATCH /v1/inbox/preferences/{workflowId} (one
// workflow's, by workflowId, _id or slug; 404 unknown, 400 critical).
func handleInboxPreferenceUpdate(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[channelFlags](r)
		if err != nil {
			return err
		}
		out, err := s.updatePreferences(r, []subscribers.InboxPreferenceChange{{WorkflowKey: r.PathValue("workflowId"), Channels: req.set(),
			Schedule: req.Schedule}})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, data[inboxPreference]{out[0]})
	})
}

// handleInboxPreferencesBulk serves PATCH /v1/inbox/preferences/bulk: up
// to 100 workflows' preferences at once, all or none.
func handleInboxPreferencesBulk(s *Store) http.Handler {
	type item struct {
		WorkflowID string `json:"workflowId" validate:"required,max=256"`
		channelFlags
	}
	type request struct {
		Preferences []item `json:"preferences" validate:"max=100,dive"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		if len(req.Preferences) == 0 {
			return platform.BadRequest("preferences must name at least one workflow")
		}
		changes := make([]subscribers.InboxPreferenceChange, len(req.Preferences))
		for i, p := range req.Preferences {
			if p.Schedule != nil {
				return platform.BadRequest("schedule applies to every workflow: send it to the global preference")
			}
			changes[i] = subscribers.InboxPreferenceChange{WorkflowKey: p.WorkflowID, Channels: p.set()}
		}
		out, err := s.updatePreferences(r, changes)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, data[[]inboxPreference]{out})
	})
}

package activity

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// Preferences resolves a subscriber's channel preferences for a workflow
// (subscribers.Store.Preferences; checked in app/wire.go). A channel step the
// answer turns off is skipped at delivery.
type Preferences interface {
	Preferences(ctx context.Context, environmentID, subscriberRef, workflowID string, wf workflows.Preferences) (subscribers.Resolved, error)
}

// workflow returns the workflow's preferences object as the resolver reads
// it. An all.enabled the workflow leaves out counts as on, as the
// reference counts it.
func (p preferencesDoc) workflow() workflows.Preferences {
	set := func(s *preferenceSet) workflows.ChannelPreferences {
		out := workflows.ChannelPreferences{All: workflows.AllPreference{Enabled: true}, Channels: map[string]workflows.EnabledSetting{}}
		if s == nil {
			return out
		}
		if s.All != nil {
			out.All.ReadOnly = s.All.ReadOnly
			if s.All.Enabled != nil {
				out.All.Enabled = *s.All.Enabled
			}
		}
		for c, v := range s.Channels {
			if v.Enabled != nil {
				out.Channels[c] = workflows.EnabledSetting{Enabled: *v.Enabled}
			}
		}
		return out
	}
	out := workflows.Preferences{Default: set(p.Default)}
	if p.User != nil {
		u := set(p.User)
		out.User = &u
	}
	return out
}

func parseWorkflowPreferences(raw []byte) (workflows.Preferences, error) {
	var p preferencesDoc
	json.Unmarshal(raw, &p) // a notification without preferences has every channel on
	return p.workflow(), nil
}

// preferenceSkip returns the write that skips a channel step its
// subscriber's or its workflow's preferences turn off, with a detail naming
// the preference that did, and releases the steps after it; nil when the
// step runs, with the subscriber's schedule (nil when none). A critical
// workflow delivers every channel step at any hour, as the reference does
// for a read-only workflow.
func (w *runner) preferenceSkip(ctx context.Context, j *job, n notificationCtx) (write, *subscribers.Schedule, error) {
	if n.Critical {
		return nil, nil, nil
	}
	wf, _ := w.workflowPrefs.Get(n.TemplateID, n.Preferences, parseWorkflowPreferences)
	var resolved subscribers.Resolved
	if w.preferences != nil {
		var err error
		if resolved, err = w.preferences.Preferences(ctx, j.EnvironmentID, j.SubscriberID, n.TemplateID, wf); err != nil {
			return nil, nil, fmt.Errorf("read preferences: %w", err)
		}
	} else {
		resolved = subscribers.Resolve(wf, subscribers.Subscribed{})
	}
	d := resolved.Channels[j.Type]
	if d.Enabled {
		return nil, resolved.Schedule, nil
	}
	raw, _ := json.Marshal(map[string]any{"channel": j.Type, "enabled": false, "type": d.Rule})
	return w.store.settled(j, settlement{status: statusSkipped, then: thenRelease,
		details: []detail{{Status: detailSuccess, Detail: d.Rule.Detail(), Source: sourceInternal, Raw: raw}}}), nil, nil
}

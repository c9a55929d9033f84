package subscribers

import (
	"context"
	"database/sql"
)

// EventPreferenceUpdated is raised for each preference a write changes
// (docs/webhooks.md, "Events").
const EventPreferenceUpdated = "preference.updated"

// EventSink records the webhook events subscribers raises, inside the
// transaction of the change that causes each; the outbound webhooks
// satisfy it.
type EventSink interface {
	// Wants reports whether some endpoint of the environment takes events
	// of that type; it is asked outside any write transaction.
	Wants(ctx context.Context, environmentID, eventType string) bool
	// RaisePreferenceEvent records e inside tx.
	RaisePreferenceEvent(ctx context.Context, tx *sql.Tx, e PreferenceEvent) error
}

// PreferenceEvent is one changed preference of a subscriber, as
// preference.updated carries it.
type PreferenceEvent struct {
	EnvironmentID string
	SubscriberID  string // the subscriberId
	Preference    EventPreference
}

// EventPreference is the preference object of preference.updated: its
// level, whether it is on, its channels as they stand after the write,
// and, at the global level, the subscriber's schedule when it has one.
type EventPreference struct {
	Level    string         `json:"level"` // global or template
	Enabled  bool           `json:"enabled"`
	Channels Set            `json:"channels"`
	Workflow *EventWorkflow `json:"workflow,omitempty"`
	Schedule *Schedule      `json:"schedule,omitempty"`
}

// EventWorkflow names the workflow of a template-level preference.
type EventWorkflow struct {
	ID         string `json:"id"`
	Identifier string `json:"identifier"`
	Name       string `json:"name"`
}

// UseEvents makes the store raise preference events into sink; it returns s.
func (s *Store) UseEvents(sink EventSink) *Store {
	s.events = sink
	return s
}

package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/herald-notify/herald/platform"
	"slices"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// EventType is one entry of the event catalogue (GET
// /v2/webhooks/event-types).
type EventType struct {
	Type        string `json:"type"`
	Object      string `json:"object"`
	Description string `json:"description"`
}

// EventTypes is the catalogue: every event Herald raises, named as the
// reference platform names them, and the four its receipts add
// (docs/webhooks.md, "Events").
var EventTypes = []EventType{
	{messaging.EventSent, "message", "A provider accepted the message (in-app: it was stored)."},
	{messaging.EventDelivered, "message", "The message reached the recipient: an in-app message when stored, others on the provider's receipt."},
	{messaging.EventFailed, "message", "The provider refused the message, or reported that it could not deliver it."},
	{messaging.EventBounced, "message", "The provider reported that the recipient's server bounced the message."},
	{messaging.EventOpened, "message", "The provider reported that the recipient opened the message."},
	{messaging.EventClicked, "message", "The provider reported that the recipient clicked a link in the message."},
	{messaging.EventComplained, "message", "The provider reported that the recipient marked the message as spam."},
	{messaging.EventSeen, "message", "The subscriber's inbox marked the message seen."},
	{messaging.EventRead, "message", "The subscriber read the message."},
	{messaging.EventUnread, "message", "The subscriber marked the message unread."},
	{messaging.EventArchived, "message", "The subscriber archived the message."},
	{messaging.EventUnarchived, "message", "The subscriber took the message out of the archive."},
	{messaging.EventSnoozed, "message", "The subscriber snoozed the message."},
	{messaging.EventUnsnoozed, "message", "The message's snooze ended, or the subscriber ended it."},
	{EventWorkflowCreated, "workflow", "A workflow was created."},
	{EventWorkflowUpdated, "workflow", "A workflow was changed."},
	{EventWorkflowDeleted, "workflow", "A workflow was deleted."},
	{EventPreferenceUpdated, "preference", "A subscriber's preference changed."},
}

// The workflow and preference events.
const (
	EventWorkflowCreated   = workflows.EventCreated
	EventWorkflowUpdated   = workflows.EventUpdated
	EventWorkflowDeleted   = workflows.EventDeleted
	EventPreferenceUpdated = subscribers.EventPreferenceUpdated
)

// knownType reports whether t is in the catalogue, and its object.
func knownType(t string) (string, bool) {
	for _, e := range EventTypes {
		if e.Type == t {
			return e.Object, true
		}
	}
	return "", false
}

// envelope is the body every delivery posts (docs/webhooks.md, "The
// envelope"), as the reference platform shapes it.
type envelope struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	Object        string `json:"object"`
	Data          any    `json:"data"`
	Timestamp     string `json:"timestamp"`
	EnvironmentID string `json:"environmentId"`
}

// messageData is a message event's data.
type messageData struct {
	Object messaging.WebhookMessage `json:"object"`
	Error  *messaging.MessageError  `json:"error,omitempty"`
}

// endpointFilter is what a raise needs of an active endpoint.
type endpointFilter struct {
	id    string
	types []string // nil: all
}

func (f endpointFilter) takes(t string) bool { return f.types == nil || slices.Contains(f.types, t) }

// querier reads: the read pool, or the transaction a raise runs in (a
// read from the pool inside a write transaction would wait on it).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// active returns the environment's active endpoints, cached until an
// endpoint changes; a miss reads them through q.
func (s *Store) active(ctx context.Context, q querier, env string) ([]endpointFilter, error) {
	return s.wanted.Get(env, func() ([]endpointFilter, error) {
		rows, err := q.QueryContext(ctx, `SELECT id, event_types FROM webhook_endpoints WHERE environment_id = ? AND active = 1`, env)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []endpointFilter
		for rows.Next() {
			var f endpointFilter
			var types sql.NullString
			if err := rows.Scan(&f.id, &types); err != nil {
				return nil, err
			}
			if types.Valid {
				if err := json.Unmarshal([]byte(types.String), &f.types); err != nil {
					return nil, err
				}
				if f.types == nil {
					f.types = []string{}
				}
			}
			out = append(out, f)
		}
		return out, rows.Err()
	})
}

// Wants reports whether an active endpoint of the environment takes events
// of type t (messaging's EventSink). It reads the pool, so it is asked
// outside any write transaction. A failed read answers true: the raise
// then reads again, and fails the change rather than lose its event.
func (s *Store) Wants(ctx context.Context, env, t string) bool {
	list, err := s.active(ctx, s.db, env)
	if err != nil {
		return true
	}
	for _, f := range list {
		if f.takes(t) {
			return true
		}
	}
	return false
}

// RaiseMessageEvents records message events inside tx (messaging's
// EventSink).
func (s *Store) RaiseMessageEvents(ctx context.Context, tx *sql.Tx, events []messaging.MessageEvent) error {
	for _, e := range events {
		if err := s.raise(ctx, tx, e.Message.EnvironmentID, e.Type, messageData{Object: e.Message, Error: e.Error}); err != nil {
			return err
		}
	}
	return nil
}

// raise records one event of type t with data inside tx: the envelope
// once, and a delivery, due now, for each active endpoint that takes it.
// The dispatcher is woken when tx commits.
func (s *Store) raise(ctx context.Context, tx *sql.Tx, env, t string, data any) error {
	list, err := s.active(ctx, tx, env)
	if err != nil {
		return fmt.Errorf("raise %s: %w", t, err)
	}
	var to []string
	for _, f := range list {
		if f.takes(t) {
			to = append(to, f.id)
		}
	}
	if len(to) == 0 {
		return nil
	}
	_, err = s.insertEvent(ctx, tx, env, t, data, to)
	return err
}

// insertEvent writes an event and a due delivery of it to each endpoint of
// to, and returns the event's id.
func (s *Store) insertEvent(ctx context.Context, tx *sql.Tx, env, t string, data any, to []string) (string, error) {
	object, _ := knownType(t)
	now := s.now()
	ts := sqldb.FormatTime(now)
	id := "evt_" + sqldb.NewIDAt(now)
	identifier, err := platform.EnvironmentIdentifier(ctx, tx, env)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(envelope{ID: id, Type: t, Object: object, Data: data, Timestamp: ts,
		EnvironmentID: identifier})
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", t, err)
	}
	if _, err := s.db.WriteExec(ctx, tx, insertEventSQL, id, env, t, string(body), ts); err != nil {
		return "", fmt.Errorf("store %s: %w", t, err)
	}
	for _, endpoint := range to {
		if _, err := s.db.WriteExec(ctx, tx, insertDeliverySQL, sqldb.NewIDAt(now), env, endpoint, id, t, ts, ts, ts); err != nil {
			return "", fmt.Errorf("queue %s: %w", t, err)
		}
	}
	// Counted once committed: a transaction that rolls back raised
	// nothing, and its retry raises the event again.
	s.db.AfterCommit(tx, func() {
		s.metrics.raised(t)
		s.wake()
	})
	return id, nil
}

const (
	insertEventSQL    = `INSERT INTO webhook_events (id, environment_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)`
	insertDeliverySQL = `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, status, run_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`
)

// Prepare readies the statements every raise runs, outside any
// transaction: preparing inside one waits on the writer it holds.
func (s *Store) Prepare(ctx context.Context) error {
	return s.db.PrepareWrites(ctx, insertEventSQL, insertDeliverySQL)
}

// workflowData is a workflow event's data.
type workflowData struct {
	Object         any `json:"object"`
	PreviousObject any `json:"previousObject,omitempty"`
}

// RaiseWorkflowEvent records a workflow event inside tx (workflows'
// EventSink).
func (s *Store) RaiseWorkflowEvent(ctx context.Context, tx *sql.Tx, e workflows.WorkflowEvent) error {
	return s.raise(ctx, tx, e.EnvironmentID, e.Type, workflowData{Object: e.Object, PreviousObject: e.PreviousObject})
}

// preferenceData is preference.updated's data.
type preferenceData struct {
	Object       subscribers.EventPreference `json:"object"`
	SubscriberID string                      `json:"subscriberId"`
}

// RaisePreferenceEvent records a preference event inside tx (subscribers'
// EventSink).
func (s *Store) RaisePreferenceEvent(ctx context.Context, tx *sql.Tx, e subscribers.PreferenceEvent) error {
	return s.raise(ctx, tx, e.EnvironmentID, EventPreferenceUpdated, preferenceData{Object: e.Preference, SubscriberID: e.SubscriberID})
}

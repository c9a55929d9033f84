package workflows

import (
	"context"
	"database/sql"
	"slices"
)

// The workflow events (docs/webhooks.md, "Events").
const (
	EventCreated = "workflow.created"
	EventUpdated = "workflow.updated"
	EventDeleted = "workflow.deleted"
)

// EventSink records the webhook events workflows raises, inside the
// transaction of the change that causes each; the outbound webhooks
// satisfy it.
type EventSink interface {
	// Wants reports whether some endpoint of the environment takes events
	// of that type; it is asked outside any write transaction.
	Wants(ctx context.Context, environmentID, eventType string) bool
	// RaiseWorkflowEvent records e inside tx.
	RaiseWorkflowEvent(ctx context.Context, tx *sql.Tx, e WorkflowEvent) error
}

// WorkflowEvent is one workflow event: the workflow as GET
// /v2/workflows/{workflowId} answers it, and for an update as it was.
type WorkflowEvent struct {
	EnvironmentID  string
	Type           string
	Object         any // the v2 workflow response
	PreviousObject any // the same, before an update; nil otherwise
}

// UseEvents makes the store raise workflow events into sink; it returns s.
func (s *Store) UseEvents(sink EventSink) *Store {
	s.events = sink
	return s
}

// wants reports whether an event of type t of env is to be raised.
func (s *Store) wants(ctx context.Context, env, t string) bool {
	return s.events != nil && s.events.Wants(ctx, env, t)
}

// raise records an event of type t for w (and prev, before an update)
// inside tx.
func (s *Store) raise(ctx context.Context, tx *sql.Tx, t string, w, prev *workflow) error {
	obj, err := toResponse(ctx, w, nil)
	if err != nil {
		return err
	}
	e := WorkflowEvent{EnvironmentID: w.EnvironmentID, Type: t, Object: obj}
	if prev != nil {
		if e.PreviousObject, err = toResponse(ctx, prev, nil); err != nil {
			return err
		}
	}
	return s.events.RaiseWorkflowEvent(ctx, tx, e)
}

// clone copies w deep enough that an edit of the copy's fields and lists
// leaves w as it was: an update's event carries both.
func (w *workflow) clone() *workflow {
	c := *w
	c.Tags = slices.Clone(w.Tags)
	c.Steps = slices.Clone(w.Steps)
	c.PayloadSchema = slices.Clone(w.PayloadSchema)
	return &c
}

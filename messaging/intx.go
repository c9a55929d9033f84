package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// deliverInApp is Deliver for an in_app step: it renders the message and
// returns the write that stores it (see Deliver).
func (e *Deliverer) deliverInApp(ctx context.Context, d *Delivery) (Outcome, func(context.Context, *sql.Tx) error, error) {
	// A message stored for the job by an earlier attempt is its delivery.
	if d.Attempt != 1 {
		prev, err := scanMessage(e.messages.db.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE job_id = ?`, d.JobID))
		switch {
		case err == nil && finished(prev):
			out, err := prev.replay()
			return out, nil, err
		case err != nil && !errors.Is(err, platform.ErrNotFound):
			return Outcome{}, nil, err
		case err == nil:
			// Stored and never finished (an older attempt stopped half-way):
			// sendNow finishes it.
			return e.sendNow(ctx, d)
		}
	}
	targets, failure, err := e.targets(ctx, d)
	if err != nil {
		return Outcome{}, nil, err
	}
	if failure != nil {
		return *e.obs.notSent(ctx, d, failure), nil, nil
	}
	sc, err := e.content(ctx, d)
	if err != nil {
		return Outcome{}, nil, err
	}
	r, err := renderStep(d, sc)
	if err != nil {
		return *e.obs.notSent(ctx, d, notRendered(targets[0].in.ProviderID, err)), nil, nil
	}
	now := e.messages.now()
	m := newMessage(d, r, targets, now, e.messages.src.Subscribers == nil)
	out := sentOutcome(m.ID, targets[0].in.ProviderID)
	out.Details = append(out.Details, sc.missingDetail(targets[0].in.ProviderID)...)
	// The in_app provider's send is the stored row: the message is stored
	// finished, with its outcome (implied, so none is kept) and delivery time.
	stored, err := storedOutcome(out)
	if err != nil {
		return Outcome{}, nil, err
	}
	m.Outcome = []byte(stored)
	m.DeliveredAt, _ = json.Marshal([]string{sqldb.FormatTime(now)})
	// The row is built here, not in the write: the caller's transaction
	// holds the one writer, and every other write waits while it runs.
	insert, values := insertMessageSQL, m.values(e.messages.orgs.Stored(m.OrganizationID))
	// Announced to this process's sockets once the caller's transaction
	// commits (a client told earlier would read the inbox without it),
	// and to the other processes' by the insert itself.
	ev := LiveEvent{EnvironmentID: m.EnvironmentID, SubscriberID: m.SubscriberID, MessageID: m.ID, Kind: LiveReceived}
	var announce func()
	switch bus := e.messages.live.(type) {
	case nil:
	case *SharedBus:
		insert, values = e.messages.queries.insertNotify, append(values, liveChannel, bus.wire(ev))
		announce = func() { bus.local.Publish(ev) }
	default:
		announce = func() { bus.Publish(ev) }
	}
	// Prepared here, outside the caller's transaction: preparing inside
	// would wait on the writer connection that transaction holds. Parsing
	// the 40-column INSERT cost more than running it.
	raise := e.messages.inAppEvents(ctx, m.EnvironmentID)
	db := e.messages.db
	if err := db.PrepareWrites(ctx, insert, e.messages.queries.payload); err != nil {
		return Outcome{}, nil, fmt.Errorf("prepare message insert: %w", err)
	}
	write := func(ctx context.Context, tx *sql.Tx) error {
		res, err := db.WriteExec(ctx, tx, insert, values...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if announce != nil {
			db.AfterCommit(tx, announce)
		}
		// The other processes forget the subscriber's pages on the live
		// event the insert notifies (listenPages).
		e.messages.forgetPagesHere(tx, pageOwner(m.EnvironmentID, m.SubscriberID))
		if err := e.messages.storeOverrides(ctx, tx, m); err != nil {
			return err
		}
		if err := e.messages.storePayload(ctx, tx, m); err != nil {
			return err
		}
		return e.messages.raiseInApp(ctx, tx, m, raise)
	}
	return out, write, nil
}

// inAppEvents are the events a stored in-app message raises that some
// endpoint of env wants: message.sent then message.delivered, as the
// reference platform raises them, the in-app provider's send being its
// delivery. It is asked before the write transaction.
func (s *Store) inAppEvents(ctx context.Context, env string) []string {
	var out []string
	for _, t := range []string{EventSent, EventDelivered} {
		if s.events != nil && s.events.Wants(ctx, env, t) {
			out = append(out, t)
		}
	}
	return out
}

// raiseInApp raises the events of types for a stored in-app message, built
// from m rather than read back.
func (s *Store) raiseInApp(ctx context.Context, tx *sql.Tx, m *message, types []string) error {
	if len(types) == 0 {
		return nil
	}
	events := make([]MessageEvent, len(types))
	for i, t := range types {
		events[i] = MessageEvent{Type: t, Message: m.webhook()}
	}
	return s.events.RaiseMessageEvents(ctx, tx, events)
}

// webhook is m as an event carries it, as m is stored.
func (m *message) webhook() WebhookMessage {
	w := WebhookMessage{ID: m.ID, TemplateID: m.TemplateID, EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID,
		NotificationID: m.NotificationID, SubscriberRef: m.SubscriberID, SubscriberID: m.ExternalSubscriber,
		TemplateIdentifier: m.TemplateIdentifier, WorkflowID: m.TemplateIdentifier, StepID: m.StepID,
		TransactionID: m.TransactionID, Channel: m.Channel, ProviderID: m.ProviderID, Status: m.Status,
		Seen: m.Seen, Read: m.Read, ErrorID: m.ErrorID, ErrorText: m.ErrorText, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if m.Channel == "in_app" {
		w.ProviderResponseID = &w.ID
	}
	if json.Unmarshal(m.DeliveredAt, &w.DeliveredAt) != nil || w.DeliveredAt == nil {
		w.DeliveredAt = []string{}
	}
	return w
}

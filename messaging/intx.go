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
			out, err := e.sendNow(ctx, d)
			return out, nil, err
		}
	}
	targets, failure, err := e.targets(ctx, d)
	if err != nil {
		return Outcome{}, nil, err
	}
	if failure != nil {
		return *e.obs.notSent(ctx, d, failure), nil, nil
	}
	r, err := renderStep(d)
	if err != nil {
		return *e.obs.notSent(ctx, d, fail(targets[0].in.ProviderID, "Payload", "Message content could not be generated: "+err.Error())), nil, nil
	}
	now := e.messages.now()
	m := newMessage(d, r, targets, now, e.messages.src.Subscribers == nil)
	out := sentOutcome(m.ID, targets[0].in.ProviderID)
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
	insert, values := insertMessageSQL, m.values()
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
		return e.messages.storePayload(ctx, tx, m)
	}
	return out, write, nil
}

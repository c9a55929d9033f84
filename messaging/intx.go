package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/platform"
)

// DeliverInTxJSON is DeliverJSON for a caller that records the delivery's
// result in a write transaction of its own (the activity worker's group
// commit). For an in_app step, whose delivery is the stored message, it
// renders the message and returns, beside the outcome, the write that
// stores it: the caller runs it in the transaction that records the job,
// so the message exists exactly when the job's result does, and thousands
// of deliveries share one commit. The write inserts at most one message per
// jobId. Every other channel sends now, through DeliverJSON, and returns no
// write.
func (s *Store) DeliverInTxJSON(ctx context.Context, doc json.RawMessage) (_ json.RawMessage, _ func(context.Context, *sql.Tx) error, err error) {
	var d delivery
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, nil, platform.BadRequest("delivery document: %v", err)
	}
	if d.Channel != "in_app" {
		out, err := s.DeliverJSON(ctx, doc)
		return out, nil, err
	}
	defer platform.Wrap(&err, "deliver job %s", d.JobID)
	if err := d.check(); err != nil {
		return nil, nil, err
	}
	// A message stored for the job by an earlier attempt is its delivery.
	if d.Attempt != 1 {
		byJob, err := s.byJobStmt(ctx)
		if err != nil {
			return nil, nil, err
		}
		prev, err := scanMessage(byJob.QueryRowContext(ctx, d.JobID))
		switch {
		case err == nil && finished(prev):
			out, err := prev.replay()
			return out, nil, err
		case err != nil && !errors.Is(err, platform.ErrNotFound):
			return nil, nil, err
		case err == nil:
			// Stored and never finished (an older attempt stopped half-way):
			// DeliverJSON knows how to finish it.
			out, err := s.DeliverJSON(ctx, doc)
			return out, nil, err
		}
	}
	targets, failure, err := s.targets(ctx, &d)
	if err != nil {
		return nil, nil, err
	}
	if failure != nil {
		b, err := json.Marshal(failure)
		return b, nil, err
	}
	r, err := s.renderStep(&d)
	if err != nil {
		b, err := json.Marshal(fail(targets[0].in.ProviderID, "Payload", "Message content could not be generated: "+err.Error()))
		return b, nil, err
	}
	now := s.now()
	m := newMessage(&d, r, targets, now)
	out := sentOutcome(m.ID, targets[0].in.ProviderID)
	res, err := json.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	// The in_app provider's send is the stored row: the message is stored
	// finished, with its outcome (implied, so none is kept) and delivery time.
	stored, err := storedOutcome(out)
	if err != nil {
		return nil, nil, err
	}
	m.Outcome = []byte(stored)
	m.DeliveredAt, _ = json.Marshal([]string{platform.FormatTime(now)})
	insert, err := s.insertStmt(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The row is built here, not in the write: the caller's transaction
	// holds the one writer, and every other write waits while it runs.
	values := m.values()
	write := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, insert).ExecContext(ctx, values...)
		if err == nil && s.live != nil {
			// Announced once the caller's transaction commits: a client
			// told earlier would read the inbox without it.
			ev := LiveEvent{EnvironmentID: m.EnvironmentID, SubscriberID: m.SubscriberID, MessageID: m.ID, Kind: LiveReceived}
			s.db.AfterCommit(tx, func() { s.live.Publish(ev) })
		}
		return err
	}
	return res, write, nil
}

// insertStmt is insertMessageSQL prepared once on the writer: parsing the
// 40-column INSERT cost more than running it. It is prepared here, outside
// the caller's transaction, since preparing inside would wait on the
// writer connection that transaction holds.
func (s *Store) insertStmt(ctx context.Context) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.insert != nil {
		return s.insert, nil
	}
	st, err := s.db.W.PrepareContext(ctx, insertMessageSQL)
	if err != nil {
		return nil, fmt.Errorf("prepare message insert: %w", err)
	}
	s.insert = st
	return st, nil
}

// byJobStmt is the read pool's prepared lookup of a job's message.
func (s *Store) byJobStmt(ctx context.Context) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.byJob != nil {
		return s.byJob, nil
	}
	st, err := s.db.R.PrepareContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE job_id = ?`)
	if err != nil {
		return nil, fmt.Errorf("prepare message lookup: %w", err)
	}
	s.byJob = st
	return st, nil
}

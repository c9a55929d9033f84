package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/herald-notify/herald/platform"
)

// broadcast is one broadcast being fanned out: its plan, the body that
// rebuilds that plan, and how far it has got.
type broadcast struct {
	p       *plan
	request json.RawMessage // the body, with its transactionId, as activity_broadcasts keeps it
	after   string          // the last subscriberId whose notification is committed
	started bool            // the first batch is committed: the transactionId claimed, the broadcast recorded

	// A trigger to topics reaches their members (topics.go) instead of
	// every subscriber; kind is "" for a broadcast.
	kind    string
	members func(ctx context.Context, after string, size int) (fanPage, error)
}

// fanOut writes b's notification for every subscriber of the environment
// (or, for a trigger to topics, of its topics: b.page) after b.after, a
// batch of subscribers per transaction. Each batch's
// transaction also records how far the broadcast has got (broadcastProgress),
// so that a broadcast cut short (a crash, a stop, a failed write) goes on at
// the next start from the first subscriber it has not written
// (ResumeBroadcasts), and none is written twice. A cancel stops it at its
// next batch (errBroadcastStopped).
func (t *triggerer) fanOut(ctx context.Context, b *broadcast) error {
	p, size := b.p, t.store.broadcastBatch
	// Recipients planned before the fan-out (a trigger to topics' direct
	// ones) are written with the first batch.
	pending := p.recipients
	for {
		page, err := b.page(ctx, t, size)
		if err != nil {
			return fmt.Errorf("list subscribers: %w", err)
		}
		p.recipients = append(p.recipients[:0], pending...)
		pending = nil
		now := t.store.now()
		for i, doc := range page.docs {
			rc, err := newRecipient(doc)
			if err != nil {
				return err
			}
			if page.topics != nil {
				rc.topics = page.topics[i]
			}
			p.planChain(&rc, now)
			p.recipients = append(p.recipients, rc)
		}
		p.progress = t.store.broadcastProgress(b, page.next, page.last)
		if err := t.store.insertTrigger(ctx, p, !b.started); err != nil {
			return err
		}
		b.started, b.after = true, page.next
		p.answer = nil // recorded with the first batch
		if page.last {
			return nil
		}
	}
}

// errBroadcastStopped means a broadcast's row did not say what the batch
// expected: a cancel deleted it (cancelTransaction), or, against the rule
// of one Herald process per database, another process moved it on. The
// batch is not written, and the broadcast goes no further.
var errBroadcastStopped = errors.New("broadcast canceled before this batch")

// broadcastProgress returns what b's next batch writes in its transaction
// besides its notifications: the first batch records the broadcast (beside
// its transactionId claim), each later one moves its cursor to next, and the
// last deletes it, so the row is never ahead of or behind what is committed.
// A broadcast of one batch records nothing. A later batch's write holds
// only while the row still has the cursor the batch started from.
func (s *Store) broadcastProgress(b *broadcast, next string, last bool) write {
	p := b.p
	env, txID, after := p.tenant.EnvironmentID, p.transactionID, b.after
	exactlyOne := func(res sql.Result, err error) error {
		if err != nil {
			return fmt.Errorf("record broadcast progress: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errBroadcastStopped
		}
		return nil
	}
	switch {
	case !b.started && last:
		return nil
	case !b.started:
		org, request, actor, kind := p.tenant.OrganizationID, string(b.request), string(p.actor), firstNonEmpty(b.kind, "broadcast")
		return func(ctx context.Context, tx *sql.Tx) error {
			ts := platform.FormatTime(s.now())
			return exactlyOne(tx.ExecContext(ctx, `
				INSERT INTO activity_broadcasts (environment_id, transaction_id, organization_id, request, actor,
					last_subscriber_id, kind, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, env, txID, org, request, actor, next, kind, ts, ts))
		}
	case last:
		return func(ctx context.Context, tx *sql.Tx) error {
			return exactlyOne(tx.ExecContext(ctx, `
				DELETE FROM activity_broadcasts WHERE environment_id = ? AND transaction_id = ? AND last_subscriber_id = ?`,
				env, txID, after))
		}
	default:
		return func(ctx context.Context, tx *sql.Tx) error {
			return exactlyOne(tx.ExecContext(ctx, `
				UPDATE activity_broadcasts SET last_subscriber_id = ?, updated_at = ?
				WHERE environment_id = ? AND transaction_id = ? AND last_subscriber_id = ?`,
				next, platform.FormatTime(s.now()), env, txID, after))
		}
	}
}

// unfinishedBroadcast is a row of activity_broadcasts.
type unfinishedBroadcast struct {
	tenant        platform.Tenant
	transactionID string
	request       json.RawMessage
	actor         json.RawMessage
	after         string
	kind          string // "broadcast" or kindTopics
}

// unfinishedBroadcasts returns every broadcast whose fan-out has not
// finished, oldest first.
func (s *Store) unfinishedBroadcasts(ctx context.Context) (_ []unfinishedBroadcast, err error) {
	defer platform.Wrap(&err, "list unfinished broadcasts")
	rows, err := s.db.R.QueryContext(ctx, `
		SELECT environment_id, organization_id, transaction_id, request, actor, last_subscriber_id, kind
		FROM activity_broadcasts ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []unfinishedBroadcast
	for rows.Next() {
		var u unfinishedBroadcast
		var request, actor string
		if err := rows.Scan(&u.tenant.EnvironmentID, &u.tenant.OrganizationID, &u.transactionID, &request, &actor, &u.after, &u.kind); err != nil {
			return nil, err
		}
		u.request, u.actor = json.RawMessage(request), json.RawMessage(actor)
		out = append(out, u)
	}
	return out, rows.Err()
}

// finishBroadcast deletes a broadcast's row without writing the rest of it.
func (s *Store) finishBroadcast(ctx context.Context, envID, transactionID string) error {
	_, err := s.db.W.ExecContext(ctx, `DELETE FROM activity_broadcasts WHERE environment_id = ? AND transaction_id = ?`,
		envID, transactionID)
	if err != nil {
		return fmt.Errorf("finish broadcast %s: %w", transactionID, err)
	}
	return nil
}

// ResumeBroadcasts continues every broadcast that an earlier process left
// unfinished (it crashed or was stopped mid-fan-out), each from the first
// subscriber after the last one it committed, so every subscriber gets it
// once. A broadcast whose workflow is gone, inactive or now refuses its
// payload is finished without the rest, with a warning.
//
// It reads the unfinished broadcasts before it returns, so call it before
// the server takes requests: Herald runs one process per database, so each
// broadcast recorded then belongs to a process that is gone, while one begun
// later belongs to the request running it. The broadcasts are continued one
// after another in a goroutine until they are done or ctx is; one that ctx
// stops goes on at the next start. The returned function waits for that
// goroutine, or until its own ctx is done. Errors are logged, not returned.
func ResumeBroadcasts(ctx context.Context, store *Store, workflows Workflows, subscribers Subscribers, logger *slog.Logger) (wait func(context.Context)) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pending, err := store.unfinishedBroadcasts(ctx)
	if err != nil {
		logger.Error("broadcasts not resumed", "error", err)
		return func(context.Context) {}
	}
	t := newTriggerer(store, workflows, subscribers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range pending {
			if ctx.Err() != nil {
				return
			}
			t.resume(ctx, u, logger.With("environment_id", u.tenant.EnvironmentID, "transaction_id", u.transactionID))
		}
	}()
	return func(wctx context.Context) {
		select {
		case <-done:
		case <-wctx.Done():
		}
	}
}

// resume continues one unfinished broadcast, logging what became of it.
func (t *triggerer) resume(ctx context.Context, u unfinishedBroadcast, logger *slog.Logger) {
	var req broadcastRequest
	if err := json.Unmarshal(u.request, &req); err != nil {
		logger.Error("broadcast not resumed: unreadable request; finished without the rest", "error", err)
		t.finish(ctx, u, logger)
		return
	}
	p, done, err := t.prepare(ctx, u.tenant, req.trigger())
	var refused *platform.Error
	switch {
	case errors.As(err, &refused):
		logger.Warn("broadcast not resumed: its workflow refuses it now; finished without the rest",
			"workflow", req.Name, "reason", refused.Message)
		t.finish(ctx, u, logger)
		return
	case err != nil:
		logger.Error("broadcast not resumed; it is tried again at the next start", "error", err)
		return
	case done != nil:
		logger.Warn("broadcast not resumed: its workflow is not active; finished without the rest",
			"workflow", req.Name, "status", done.Status)
		t.finish(ctx, u, logger)
		return
	}
	p.actor = u.actor
	logger.Info("resuming broadcast", "workflow", req.Name, "after_subscriber_id", u.after)
	b := &broadcast{p: p, request: u.request, after: u.after, started: true}
	if u.kind == kindTopics {
		if err := t.resumeTopics(ctx, b, logger); err != nil {
			logger.Error("trigger to topics not resumed; it is tried again at the next start", "error", err)
			return
		}
	}
	if err := t.fanOut(ctx, b); err != nil {
		if errors.Is(err, errBroadcastStopped) {
			logger.Info("broadcast canceled; the rest is not written", "after_subscriber_id", b.after)
			return
		}
		if ctx.Err() != nil {
			logger.Info("broadcast paused by shutdown; it goes on at the next start", "after_subscriber_id", b.after)
			return
		}
		logger.Error("broadcast stopped; it goes on at the next start", "after_subscriber_id", b.after, "error", err)
		return
	}
	logger.Info("broadcast resumed and finished")
}

// finish deletes an unfinished broadcast that cannot go on.
func (t *triggerer) finish(ctx context.Context, u unfinishedBroadcast, logger *slog.Logger) {
	if err := t.store.finishBroadcast(ctx, u.tenant.EnvironmentID, u.transactionID); err != nil {
		logger.Error("broadcast not finished", "error", err)
	}
}

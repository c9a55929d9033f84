package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
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
		for i := range page.subs {
			rc := newRecipient(&page.subs[i])
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
// expected: a cancel deleted it (cancelTransaction), or another process
// took it over (its owner thought dead, or its lease run out). The batch
// is not written, and the broadcast goes no further here.
var errBroadcastStopped = errors.New("broadcast canceled before this batch")

// broadcastProgress returns what b's next batch writes in its transaction
// besides its notifications: the first batch records the broadcast (beside
// its transactionId claim), each later one moves its cursor to next, and the
// last deletes it, so the row is never ahead of or behind what is committed.
// A broadcast of one batch records nothing. A later batch's write holds
// only while the row still has the cursor the batch started from and names
// this instance as its owner. Each batch renews the owner's lease: another
// instance sharing the database takes a fan-out over only once its owner
// is dead or its lease ran out (ResumeBroadcasts).
func (s *Store) broadcastProgress(b *broadcast, next string, last bool) write {
	p := b.p
	env, txID, after, owner := p.tenant.EnvironmentID, p.transactionID, b.after, s.db.Instance()
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
			now := s.now()
			ts := sqldb.FormatTime(now)
			return exactlyOne(tx.ExecContext(ctx, `
				INSERT INTO activity_broadcasts (environment_id, transaction_id, organization_id, request, actor,
					last_subscriber_id, kind, created_at, updated_at, owner, lease_until)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, env, txID, org, request, actor, next, kind, ts, ts,
				owner, sqldb.FormatTime(now.Add(broadcastLease))))
		}
	case last:
		return func(ctx context.Context, tx *sql.Tx) error {
			return exactlyOne(tx.ExecContext(ctx, `
				DELETE FROM activity_broadcasts
				WHERE environment_id = ? AND transaction_id = ? AND last_subscriber_id = ? AND owner = ?`,
				env, txID, after, owner))
		}
	default:
		return func(ctx context.Context, tx *sql.Tx) error {
			now := s.now()
			return exactlyOne(tx.ExecContext(ctx, `
				UPDATE activity_broadcasts SET last_subscriber_id = ?, updated_at = ?, lease_until = ?
				WHERE environment_id = ? AND transaction_id = ? AND last_subscriber_id = ? AND owner = ?`,
				next, sqldb.FormatTime(now), sqldb.FormatTime(now.Add(broadcastLease)), env, txID, after, owner))
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
	owner, lease  string // the instance writing it and until when, as read
}

// broadcastLease is how long a fan-out stays its owner's after its last
// batch: past it, another instance may take it over though its owner
// lives (a batch that failed, or hangs).
const broadcastLease = time.Minute

// unfinishedBroadcasts returns the broadcasts whose fan-out has not
// finished and is free to take over, oldest first. On SQLite one process
// uses the database, so at its start every one is: the process writing it
// is gone. On a shared database one is free when its owner's
// heartbeat is stale or its lease ran out, and, at this process's start
// (periodic false), when it is this instance's own.
func (s *Store) unfinishedBroadcasts(ctx context.Context, periodic bool) (_ []unfinishedBroadcast, err error) {
	defer platform.Wrap(&err, "list unfinished broadcasts")
	var where string
	var args []any
	if s.db.Shared() {
		now := s.now()
		free := `NOT ` + sqldb.OwnerAliveSQL("owner") + ` OR lease_until <= ?`
		args = []any{sqldb.LiveSince(now), sqldb.FormatTime(now), s.db.Instance()}
		where = ` WHERE (` + free + `) AND owner <> ?`
		if !periodic {
			where = ` WHERE ` + free + ` OR owner = ?`
		}
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT environment_id, organization_id, transaction_id, request, actor, last_subscriber_id, kind, owner, lease_until
		FROM activity_broadcasts`+where+` ORDER BY created_at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []unfinishedBroadcast
	for rows.Next() {
		var u unfinishedBroadcast
		var request, actor string
		if err := rows.Scan(&u.tenant.EnvironmentID, &u.tenant.OrganizationID, &u.transactionID, &request, &actor, &u.after, &u.kind,
			&u.owner, &u.lease); err != nil {
			return nil, err
		}
		u.request, u.actor = json.RawMessage(request), json.RawMessage(actor)
		out = append(out, u)
	}
	return out, rows.Err()
}

// takeBroadcast makes this instance the owner of u, unless the row changed
// since it was read (another instance took it, or its owner wrote a
// batch), and reports whether it did.
func (s *Store) takeBroadcast(ctx context.Context, u unfinishedBroadcast) (bool, error) {
	res, err := s.db.ExecContext(ctx, `
		UPDATE activity_broadcasts SET owner = ?, lease_until = ?
		WHERE environment_id = ? AND transaction_id = ? AND owner = ? AND lease_until = ? AND last_subscriber_id = ?`,
		s.db.Instance(), sqldb.FormatTime(s.now().Add(broadcastLease)), u.tenant.EnvironmentID, u.transactionID,
		u.owner, u.lease, u.after)
	if err != nil {
		return false, fmt.Errorf("take over broadcast %s: %w", u.transactionID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// finishBroadcast deletes a broadcast's row without writing the rest of it.
func (s *Store) finishBroadcast(ctx context.Context, envID, transactionID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM activity_broadcasts WHERE environment_id = ? AND transaction_id = ?`,
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
// the server takes requests: on SQLite one Herald process uses the
// database, so each broadcast recorded then belongs to a process that is
// gone, while one begun later belongs to the request running it. On a
// shared database it takes only those whose owner is dead or
// whose lease ran out (unfinishedBroadcasts), each made its own first
// (takeBroadcast), and it goes on looking for such every
// store.broadcastRescue until ctx is done: the survivors of an instance
// killed mid-fan-out finish its broadcasts.
//
// The broadcasts are continued one after another in a goroutine until they
// are done or ctx is; one that ctx stops goes on at the next start. The
// returned function waits for those read at the call, or until its own ctx
// is done; once ctx is done, it waits for the goroutine to end. Errors are
// logged, not returned.
func ResumeBroadcasts(ctx context.Context, store *Store, workflows Workflows, subscribers Subscribers, logger *slog.Logger) (wait func(context.Context)) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pending, err := store.unfinishedBroadcasts(ctx, false)
	if err != nil {
		logger.Error("broadcasts not resumed", "error", err)
		pending = nil
	}
	t := newTriggerer(store, workflows, subscribers)
	resumeAll := func(list []unfinishedBroadcast) {
		for _, u := range list {
			if ctx.Err() != nil {
				return
			}
			log := logger.With("environment_id", u.tenant.EnvironmentID, "transaction_id", u.transactionID)
			if ok, err := store.takeBroadcast(ctx, u); err != nil || !ok {
				if err != nil {
					log.Error("broadcast not resumed", "error", err)
				}
				continue // another instance has it
			}
			t.resume(ctx, u, log)
		}
	}
	first, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		resumeAll(pending)
		close(first)
		if !store.db.Shared() {
			return
		}
		tick := time.NewTicker(store.broadcastRescue)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			list, err := store.unfinishedBroadcasts(ctx, true)
			if err != nil {
				if ctx.Err() == nil {
					logger.Error("broadcasts of dead instances not resumed", "error", err)
				}
				continue
			}
			resumeAll(list)
		}
	}()
	return func(wctx context.Context) {
		select {
		case <-first:
		case <-done:
		case <-wctx.Done():
			return
		}
		if ctx.Err() != nil {
			select {
			case <-done:
			case <-wctx.Done():
			}
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
	if p.attachments, err = t.store.transactionAttachments(ctx, u.tenant.EnvironmentID, u.transactionID); err != nil {
		logger.Error("broadcast not resumed; it is tried again at the next start", "error", err)
		return
	}
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

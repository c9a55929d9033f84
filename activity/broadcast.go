package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/platform"
)

// broadcast is one broadcast being fanned out: its plan, the body that
// rebuilds that plan, and how far it has got.
type broadcast struct {
	p       *plan
	request json.RawMessage // the body, with its transactionId, as activity_broadcasts keeps it
	after   string          // the last subscriberId whose notification is committed
	started bool            // the first batch is committed: the transactionId claimed, the broadcast recorded
}

// fanOut writes b's notification for every subscriber of the environment
// after b.after, a batch of subscribers per transaction. Each batch's
// transaction also records how far the broadcast has got (broadcastProgress),
// so that what activity_broadcasts says is always what is committed.
func (t *triggerer) fanOut(ctx context.Context, b *broadcast) error {
	p, size := b.p, t.store.broadcastBatch
	for {
		ids, err := t.subscribers.SubscriberIDsAfter(ctx, p.tenant.EnvironmentID, b.after, size)
		if err != nil {
			return fmt.Errorf("list subscribers: %w", err)
		}
		p.recipients = p.recipients[:0]
		for _, id := range ids {
			doc, err := t.subscribers.SubscriberJSON(ctx, p.tenant.EnvironmentID, id)
			if errors.Is(err, platform.ErrNotFound) {
				continue // deleted since it was listed
			}
			if err != nil {
				return fmt.Errorf("read subscriber %s: %w", id, err)
			}
			rc, err := newRecipient(doc)
			if err != nil {
				return err
			}
			p.recipients = append(p.recipients, rc)
		}
		last := len(ids) < size
		next := b.after
		if len(ids) > 0 {
			next = ids[len(ids)-1]
		}
		// A batch whose subscribers were all deleted is written too: it
		// moves the cursor, or finishes the broadcast.
		p.progress = t.store.broadcastProgress(b, next, last)
		if err := t.store.insertTrigger(ctx, p, !b.started); err != nil {
			return err
		}
		b.started, b.after = true, next
		if last {
			return nil
		}
	}
}

// errBroadcastMoved means a broadcast's row did not say what the batch
// expected: another process advanced or finished it. Herald runs one
// process per database, so it should never happen; if it does, the batch
// is not written, rather than written twice.
var errBroadcastMoved = errors.New("broadcast moved on without this batch")

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
			return errBroadcastMoved
		}
		return nil
	}
	switch {
	case !b.started && last:
		return nil
	case !b.started:
		org, request, actor := p.tenant.OrganizationID, string(b.request), string(p.actor)
		return func(ctx context.Context, tx *sql.Tx) error {
			ts := platform.FormatTime(s.now())
			return exactlyOne(tx.ExecContext(ctx, `
				INSERT INTO activity_broadcasts (environment_id, transaction_id, organization_id, request, actor,
					last_subscriber_id, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, env, txID, org, request, actor, next, ts, ts))
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

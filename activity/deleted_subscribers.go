package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// A notification's views show its subscriber as the subscriber now is.
// Once the subscriber is deleted, they show the summary kept at its
// deletion in deleted_subscribers, while notifications still name it
// (docs/storage.md, "Deleted subscribers"). A notification written before
// keeps a copy of its own (subscriber_snapshot), read in place of both.

// SubscriberDeleted keeps the summary of sub, deleted in tx, when
// notifications name it (subscribers.Deletions).
func (s *Store) SubscriberDeleted(ctx context.Context, tx *sql.Tx, sub subscribers.Subscriber) error {
	summary, err := json.Marshal(summaryOf(&sub))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO deleted_subscribers (environment_id, subscriber_id, summary)
		SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM notifications WHERE environment_id = ?1 AND subscriber_id = ?2)
		ON CONFLICT (environment_id, subscriber_id) DO NOTHING`, sub.EnvironmentID, sub.ID, string(summary))
	if err != nil {
		return fmt.Errorf("keep deleted subscriber %s: %w", sub.ID, err)
	}
	return nil
}

// fillSnapshots sets the Snapshot of each row whose subscriber is not in
// present (the page's subscribers, by _id) and that keeps no copy of its
// own: the summary kept at the subscriber's deletion, or, where none was,
// its _id alone.
func (s *Store) fillSnapshots(ctx context.Context, envID string, rows []notificationRow, present map[string]subscribers.Subscriber) error {
	var gone []string
	seen := map[string]bool{}
	for _, n := range rows {
		if _, ok := present[n.SubscriberID]; !ok && n.Snapshot == "" && !seen[n.SubscriberID] {
			seen[n.SubscriberID] = true
			gone = append(gone, n.SubscriberID)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	args := []any{envID}
	for _, id := range gone {
		args = append(args, id)
	}
	res, err := s.db.QueryContext(ctx, `SELECT subscriber_id, summary FROM deleted_subscribers
		WHERE environment_id = ? AND subscriber_id IN (`+sqldb.Placeholders(len(gone))+`)`, args...)
	if err != nil {
		return fmt.Errorf("read deleted subscribers: %w", err)
	}
	defer res.Close()
	kept := map[string]string{}
	for res.Next() {
		var id, summary string
		if err := res.Scan(&id, &summary); err != nil {
			return err
		}
		kept[id] = summary
	}
	if err := res.Err(); err != nil {
		return err
	}
	for i := range rows {
		n := &rows[i]
		if n.Snapshot != "" || !seen[n.SubscriberID] {
			continue
		}
		if n.Snapshot = kept[n.SubscriberID]; n.Snapshot == "" {
			b, _ := json.Marshal(summaryOf(&subscribers.Subscriber{ID: n.SubscriberID}))
			n.Snapshot = string(b)
		}
	}
	return nil
}

package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// pendingJob is true of a job whose work is not over: it is due or
// leased (run_at), waits for its parent, runs, or holds a delay or a
// digest window. A job merged into a digest that has not fired is pending
// too: the digest reads the merged notification's payload when it fires.
// Retention never deletes a notification with a pending job
// (docs/retention.md).
const pendingJob = `(j.run_at IS NOT NULL OR j.status IN ('pending', 'queued', 'running', 'delayed')
	OR (j.status = 'merged' AND EXISTS (SELECT 1 FROM jobs d
		WHERE d.id = j.merged_digest_id AND (d.run_at IS NOT NULL OR d.status IN ('pending', 'queued', 'running', 'delayed')))))`

// SweepFinished deletes, in one write transaction, at most limit
// notifications of env created before before whose work is over, with
// their jobs, execution details, context and topic entries, and the transaction
// claim of those whose transaction keeps no notification (so a
// transactionId may be used again once its records are gone, as on the
// reference platform). A notification with a pending job, or of a
// broadcast still fanning out, is kept. cursor is "" or what the previous
// call answered; next is "" when no older notification is left to look
// at.
func (s *Store) SweepFinished(ctx context.Context, env string, before time.Time, cursor string, limit int) (next string, removed map[string]int64, err error) {
	defer platform.Wrap(&err, "sweep notifications of %s", env)
	after, err := sqldb.ParseSweepCursor(cursor)
	if err != nil {
		return "", nil, err
	}
	removed = map[string]int64{}
	d := s.db.Dialect()
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		// Read through notifications_list, the environment oldest first:
		// the page stops at before, and the cursor steps past the kept.
		rows, err := tx.QueryContext(ctx, `SELECT n.id, n.transaction_id, n.subscriber_id, n.context_keys, n.topics, n.created_at,
				EXISTS (SELECT 1 FROM jobs j WHERE j.notification_id = n.id AND `+pendingJob+`)
				OR EXISTS (SELECT 1 FROM activity_broadcasts b
					WHERE b.environment_id = n.environment_id AND b.transaction_id = n.transaction_id)
			FROM `+d.IndexedBy("notifications n", "notifications_list")+`
			WHERE n.environment_id = ? AND n.created_at < ? AND (n.created_at, n.id) > (?, ?)
			ORDER BY n.created_at, n.id LIMIT ?`,
			env, sqldb.FormatTime(before), after.CreatedAt, after.ID, limit)
		if err != nil {
			return err
		}
		var ids, txs, subs, contexts, topicked []string
		seenTx, seenSub, read := map[string]bool{}, map[string]bool{}, 0
		for rows.Next() {
			var id, txID, sub, keys, topics string
			var pending bool
			if err := rows.Scan(&id, &txID, &sub, &keys, &topics, &after.CreatedAt, &pending); err != nil {
				rows.Close()
				return err
			}
			after.ID, read = id, read+1
			if pending {
				continue
			}
			ids = append(ids, id)
			if !seenTx[txID] {
				seenTx[txID], txs = true, append(txs, txID)
			}
			if !seenSub[sub] {
				seenSub[sub], subs = true, append(subs, sub)
			}
			if keys != "[]" && keys != "" {
				contexts = append(contexts, id)
			}
			if topics != "[]" && topics != "" {
				topicked = append(topicked, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if read == limit {
			next = after.String()
		}
		if len(ids) == 0 {
			return nil
		}
		list, _ := json.Marshal(ids)
		in := `(SELECT value FROM ` + d.JSONTexts("?", "") + `)`
		for _, del := range []struct{ table, query string }{
			{"execution_details", `DELETE FROM execution_details WHERE notification_id IN ` + in},
			{"jobs", `DELETE FROM jobs WHERE notification_id IN ` + in},
			{"notification_contexts", `DELETE FROM notification_contexts WHERE environment_id = ?1
				AND (context_key, created_at, notification_id) IN (SELECT k.value, n.created_at, n.id
					FROM notifications n, ` + d.JSONTexts("n.context_keys", "k") + `
					WHERE n.id IN (SELECT value FROM ` + d.JSONTexts("?2", "") + `))`},
			{"notification_topics", `DELETE FROM notification_topics WHERE environment_id = ?1
				AND (topic_key, created_at, notification_id) IN (SELECT ` + d.JSONField("t.value", "topicKey") + `, n.created_at, n.id
					FROM notifications n, ` + d.JSONElements("n.topics", "t") + `
					WHERE n.id IN (SELECT value FROM ` + d.JSONTexts("?2", "") + `))`},
			{"notifications", `DELETE FROM notifications WHERE id IN ` + in},
		} {
			args := []any{string(list)}
			if some, ok := map[string][]string{"notification_contexts": contexts, "notification_topics": topicked}[del.table]; ok {
				if len(some) == 0 {
					continue
				}
				c, _ := json.Marshal(some)
				args = []any{env, string(c)}
			}
			res, err := tx.ExecContext(ctx, del.query, args...)
			if err != nil {
				return fmt.Errorf("delete %s: %w", del.table, err)
			}
			n, _ := res.RowsAffected()
			removed[del.table] += n
			if s.swept != nil {
				s.swept(del.table)
			}
		}
		// A transaction's claim, and a deleted subscriber's summary
		// (deleted_subscribers.go), go with the last notification naming it.
		for _, named := range []struct {
			table, column, index string
			keys                 []string
		}{
			{"activity_transactions", "transaction_id", "notifications_transaction", txs},
			{"deleted_subscribers", "subscriber_id", "notifications_subscriber", subs},
		} {
			keys, _ := json.Marshal(named.keys)
			res, err := tx.ExecContext(ctx, `DELETE FROM `+named.table+`
				WHERE environment_id = ?1 AND `+named.column+` IN (SELECT value FROM `+d.JSONTexts("?2", "")+`)
				AND NOT EXISTS (SELECT 1 FROM `+d.IndexedBy("notifications n", named.index)+`
					WHERE n.environment_id = ?1 AND n.`+named.column+` = `+named.table+`.`+named.column+`)`,
				env, string(keys))
			if err != nil {
				return fmt.Errorf("delete %s: %w", named.table, err)
			}
			n, _ := res.RowsAffected()
			removed[named.table] += n
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return next, removed, nil
}

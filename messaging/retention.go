package messaging

import (
	"context"
	"database/sql"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// pendingMessage is true of a message that retention must keep whatever
// its age: one the inbox snoozed, which is to come back (its snooze ends
// through a job, and ending it clears snoozed_until).
const pendingMessage = `snoozed_until IS NOT NULL`

// SweepMessages deletes, in one write transaction, at most limit messages
// of env created before before, in-app ones when inApp and every other
// channel's otherwise, with the payloads no message of their notification
// is left to read. cursor is "" or what the previous call answered; next
// is "" when no older message is left to look at.
func (s *Store) SweepMessages(ctx context.Context, env string, inApp bool, before time.Time, cursor string, limit int) (next string, removed map[string]int64, err error) {
	defer platform.Wrap(&err, "sweep messages of %s", env)
	after, err := sqldb.ParseSweepCursor(cursor)
	if err != nil {
		return "", nil, err
	}
	channel := "channel = 'in_app'"
	if !inApp {
		channel = "channel <> 'in_app'"
	}
	removed = map[string]int64{}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		// messages_list holds the environment oldest first, the channel
		// included, so the page is read and tested on the index.
		rows, err := tx.QueryContext(ctx, `SELECT id, created_at, `+pendingMessage+`
			FROM `+s.queries.byList+`
			WHERE environment_id = ? AND created_at < ? AND (created_at, id) > (?, ?) AND `+channel+`
			ORDER BY created_at, id LIMIT ?`,
			env, sqldb.FormatTime(before), after.CreatedAt, after.ID, limit)
		if err != nil {
			return err
		}
		var ids []string
		read := 0
		for rows.Next() {
			var pending bool
			if err := rows.Scan(&after.ID, &after.CreatedAt, &pending); err != nil {
				rows.Close()
				return err
			}
			read++
			if !pending {
				ids = append(ids, after.ID)
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
		gone, payloads, err := s.deleteMessages(ctx, tx, s.queries.idsIn, idList(ids))
		removed["messages"], removed["message_payloads"] = int64(len(gone)), payloads
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return next, removed, nil
}

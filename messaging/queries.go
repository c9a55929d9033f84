package messaging

import (
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// queries are this package's statements and fragments whose text depends
// on the database's dialect, spelled once when the store is made: the
// deliveries and the feed run them thousands of times a second.
type queries struct {
	d sqldb.Dialect

	// The FROM items of the messages list through each index.
	byFeed, byTransaction, byList string

	// idsIn is the condition that id is one of the ids in the JSON array
	// bound to its placeholder (idList). The ids are one parameter,
	// whatever their number: a parameter each passed SQLite's limit of
	// 32,766 with a long enough list.
	idsIn string
	// tagsIn begins the condition that the JSON array of strings in
	// messages.tags holds one of the tags bound after it (anyTag).
	tagsIn string

	finish    string // finish's UPDATE
	endSnooze string // EndSnooze's UPDATE
	act       string // cta with its action's status ?1 and its result's type ?2

	// payload stores a notification's payload (storePayload); on a shared
	// database it takes the notification's payload lock, whose key is its
	// third argument, and payloadLocked is true.
	payload       string
	payloadLocked bool
	// insertNotify is insertMessageSQL that also sends the processes
	// sharing the database a live event for the message when, and only
	// if, it inserts one (SharedBus.wire gives the last two parameters,
	// the channel and the payload); "" where none share it. Announced in
	// the statement that stores the message, a delivery costs the group
	// commit no round trip of its own, where a NOTIFY of its own doubled
	// the statements of an in-app delivery.
	insertNotify string
}

func newQueries(d sqldb.Dialect) *queries {
	q := &queries{
		d:             d,
		byFeed:        d.IndexedBy("messages", "messages_feed"),
		byTransaction: d.IndexedBy("messages", "messages_transaction"),
		byList:        d.IndexedBy("messages", "messages_list"),
		idsIn:         `id IN (SELECT value FROM ` + d.JSONTexts("?", "ids") + `)`,
		tagsIn:        `EXISTS (SELECT 1 FROM ` + d.JSONTexts("messages.tags", "tags") + ` WHERE value IN (`,
		// A flag's parameter is compared with 1: a shared database takes
		// no integer as a condition.
		finish: `UPDATE messages SET status = ?, error_id = ?, error_text = ?,
			provider_id = ?, outcome = ?, updated_at = ?,
			delivered_at = CASE WHEN CAST(? AS INTEGER) = 1 THEN ` + d.JSONAppend(deliveredColumn, "?") + ` ELSE delivered_at END,
			provider_message_id = ?
			WHERE id = ?`,
		endSnooze: `UPDATE messages SET snoozed_until = NULL, read = 0, last_read_date = NULL,
			created_at = ?1, delivered_at = ` + d.JSONAppend(deliveredColumn, "?1") + `, updated_at = ?1
			WHERE environment_id = ?2 AND id = ?3 AND snoozed_until IS NOT NULL AND snoozed_until <= ?4
			RETURNING subscriber_id`,
		act:     d.JSONSet(d.JSONSet(ctaColumn, []string{"action", "status"}, "?1"), []string{"action", "result", "type"}, "?2"),
		payload: insertPayloadSQL,
	}
	if lock := d.LockShared("?"); lock != "" {
		q.payload, q.payloadLocked = insertPayloadSharedSQL(lock), true
	}
	if notify := d.Notify("?", "?"); notify != "" {
		q.insertNotify = `WITH inserted AS (` + insertMessageSQL + ` RETURNING 1)
			SELECT ` + notify + ` FROM inserted`
	}
	return q
}

// anyTag is the condition that messages.tags holds one of n tags bound
// after it.
func (q *queries) anyTag(n int) string {
	return q.tagsIn + sqldb.Placeholders(n) + `))`
}

// idList is ids as the JSON array idsIn binds. An id holding a NUL
// character names no message (ids are hex), and a shared database refuses
// to read one out of JSON (22P05), so it is left out.
func idList(ids []string) string {
	keep := make([]string, 0, len(ids))
	for _, id := range ids {
		if !strings.ContainsRune(id, 0) {
			keep = append(keep, id)
		}
	}
	b, _ := json.Marshal(keep)
	return string(b)
}

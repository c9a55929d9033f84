package migrations_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestMessagePayloads checks that 000024 keeps each notification's payload
// once, out of its messages' rows and stored feed items, and that an
// empty payload is not kept at all.
func TestMessagePayloads(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000023")
	_, err := db.ExecContext(ctx, `INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id,
		subscriber_id, external_subscriber, transaction_id, channel, payload, status, created_at, updated_at, feed_item)
		VALUES ('m1', 'e', 'o', 'j1', 'n1', 's', 'ada', 'tx1', 'in_app', '{"name":"Ada"}', 'sent', 'c', 'u',
			'{"_id":"m1","_environmentId":"e","content":"\u003cb\u003e","payload":{"name":"Ada"},"data":null}'),
		('m2', 'e', 'o', 'j2', 'n1', 's', 'ada', 'tx1', 'email', '{"name":"Ada"}', 'sent', 'c', 'u', NULL),
		('m3', 'e', 'o', 'j3', 'n2', 's', 'ada', 'tx2', 'in_app', '{}', 'sent', 'c', 'u', '{"_id":"m3","payload":{}}')`)
	is.NoErr(err) // messages at 000023

	is.NoErr(sqldb.Migrate(db, upTo{migrations.FS, "000024"}))
	var payload, item string
	is.NoErr(db.QueryRowContext(context.Background(), `SELECT payload FROM message_payloads WHERE notification_id = 'n1'`).Scan(&payload))
	is.Equal(payload, `{"name":"Ada"}`)                                                                              // kept once for n1's two messages
	is.Equal(count(t, db, `SELECT count(*) FROM message_payloads`), 1)                                               // n2's empty payload not kept
	is.NoErr(db.QueryRowContext(context.Background(), `SELECT feed_item FROM messages WHERE id = 'm1'`).Scan(&item)) // the stored item
	is.Equal(item, `{"_id":"m1","content":"\u003cb\u003e","data":null}`)                                             // without the payload and the environment, escapes as written
	is.Equal(count(t, db, `SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'payload'`), 0)           // the column gone
}

// TestMessagePayloadInline_DownKeepsThemApart checks that 000072's down
// file, on each store, keeps once for its notification every payload a
// message's row held, and drops the column.
func TestMessagePayloadInline_DownKeepsThemApart(t *testing.T) {
	const rows = `
		INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id, subscriber_id, external_subscriber,
			transaction_id, channel, status, created_at, updated_at, payload)
		VALUES ('m1', 'e', '', 'j1', 'n1', 's', 'ada', 'tx', 'in_app', 'sent', 't0', '', '{"a":1}'),
		       ('m2', 'e', '', 'j2', 'n1', 's', 'ada', 'tx', 'in_app', 'sent', 't0', '', '{"a":1}'),
		       ('m3', 'e', '', 'j3', 'n2', 's', 'ada', 'tx', 'in_app', 'sent', 't0', '', '');
		INSERT INTO message_payloads (notification_id, payload) VALUES ('n2', '{"b":2}')`
	check := func(t *testing.T, db *sqldb.DB, down func()) {
		is := is.New(t)
		_, err := db.ExecContext(context.Background(), rows)
		is.NoErr(err) // rows of release 72
		down()
		is.Equal(column(t, db, `SELECT notification_id || ' ' || payload FROM message_payloads ORDER BY notification_id`),
			[]string{`n1 {"a":1}`, `n2 {"b":2}`})
		_, err = db.ExecContext(context.Background(), `SELECT payload FROM messages`)
		is.True(err != nil) // the column is gone
	}
	downOnEachStore(t, "000072_message_payload_inline.down.sql", check)
}

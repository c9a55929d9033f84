package messaging

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// The payloads here are too large for a message's row (maxInlinePayload),
// so they are kept apart, in message_payloads.

// TestDropPayloads_ConcurrentDeletes: two processes on one PostgreSQL
// database, each deleting another message of one notification at once,
// leave no payload behind. Unlocked, each saw the other's message still
// there and kept the payload, which nothing would find again.
func TestDropPayloads_ConcurrentDeletes(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dbs := sqldbtest.NewSharedDBs(t, 2)
	a, b := NewStore(dbs[0], Sources{}), NewStore(dbs[1], Sources{})
	at := sqldb.FormatTime(time.Now())
	for _, id := range []string{"m1", "m2"} {
		inserted, err := a.insertMessage(ctx, &message{ID: id, EnvironmentID: "e", OrganizationID: "o", JobID: "job-" + id,
			NotificationID: "n", SubscriberID: "s", ExternalSubscriber: "s", TransactionID: "t", Channel: "in_app",
			Content: []byte(`""`), CTA: []byte("{}"), Overrides: []byte("{}"), Tags: []byte("[]"), Actor: []byte("{}"),
			SubscriberSummary: []byte("{}"), Status: "sent", DeliveredAt: []byte("[]"), Outcome: []byte("{}"),
			Payload: []byte(`{"big":"` + strings.Repeat("p", maxInlinePayload) + `"}`), CreatedAt: at, UpdatedAt: at})
		is.NoErr(err)     // stored
		is.True(inserted) // a new message
	}

	txA, endA := sqldbtest.WriteTx(t, a.db)
	_, _, err := a.deleteMessages(ctx, txA, `id = ?`, "m1")
	is.NoErr(err) // a deletes m1 and has not committed
	done := make(chan error, 1)
	go func() {
		done <- b.db.Tx(ctx, func(tx *sql.Tx) error {
			_, _, err := b.deleteMessages(ctx, tx, `id = ?`, "m2")
			return err
		})
	}()
	platformtest.Eventually(t, 5*time.Second, func() bool {
		var waiting int
		a.db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'`).Scan(&waiting)
		return waiting == 1
	}, "b's delete to wait for a's")
	is.NoErr(endA(true)) // a commits
	is.NoErr(<-done)     // then b
	var left int
	is.NoErr(a.db.QueryRowContext(context.Background(), `SELECT count(*) FROM message_payloads`).Scan(&left))
	is.Equal(left, 0) // the payload went with the notification's last message
}

// TestDropPayloads_DeleteBesideAnInsert: a process deleting a notification's
// last message while another stores a new message of it leaves the payload
// the new message reads. Unlocked, the delete could not see the message not
// yet committed and dropped the payload.
func TestDropPayloads_DeleteBesideAnInsert(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dbs := sqldbtest.NewSharedDBs(t, 2)
	a, b := NewStore(dbs[0], Sources{}), NewStore(dbs[1], Sources{})
	at := sqldb.FormatTime(time.Now())
	msg := func(id string) *message {
		return &message{ID: id, EnvironmentID: "e", OrganizationID: "o", JobID: "job-" + id,
			NotificationID: "n", SubscriberID: "s", ExternalSubscriber: "s", TransactionID: "t", Channel: "in_app",
			Content: []byte(`""`), CTA: []byte("{}"), Overrides: []byte("{}"), Tags: []byte("[]"), Actor: []byte("{}"),
			SubscriberSummary: []byte("{}"), Status: "sent", DeliveredAt: []byte("[]"), Outcome: []byte("{}"),
			Payload: []byte(`{"big":"` + strings.Repeat("p", maxInlinePayload) + `"}`), CreatedAt: at, UpdatedAt: at}
	}
	inserted, err := a.insertMessage(ctx, msg("m1"))
	is.NoErr(err)
	is.True(inserted)

	// b stores a second message of the notification and has not committed.
	txB, endB := sqldbtest.WriteTx(t, b.db)
	m2 := msg("m2")
	_, err = txB.ExecContext(ctx, insertMessageSQL, m2.values(m2.OrganizationID)...)
	is.NoErr(err)
	is.NoErr(b.storePayload(ctx, txB, m2))

	// a deletes the first, which it takes for the notification's last.
	done := make(chan error, 1)
	go func() {
		done <- a.db.Tx(ctx, func(tx *sql.Tx) error {
			_, _, err := a.deleteMessages(ctx, tx, `id = ?`, "m1")
			return err
		})
	}()
	platformtest.Eventually(t, 5*time.Second, func() bool {
		var waiting int
		a.db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'`).Scan(&waiting)
		return waiting == 1
	}, "a's delete to wait for b's insert")
	is.NoErr(endB(true))
	is.NoErr(<-done)
	var left int
	is.NoErr(a.db.QueryRowContext(context.Background(), `SELECT count(*) FROM message_payloads WHERE notification_id = 'n'`).Scan(&left))
	is.Equal(left, 1) // m2 still reads its payload
}

package activity_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
)

// TestDeletedSubscribers_KeptForTheirNotifications checks that a
// notification keeps no copy of its subscriber, that its views show the
// subscriber as it now is, and once it is deleted, as it was then, kept
// once for all its notifications until the last of them is swept.
func TestDeletedSubscribers_KeptForTheirNotifications(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	const day = 24 * time.Hour
	srv := apptest.NewServer(t, apptest.Retention(app.Retention{Activity: 30 * day, InApp: 30 * day, Messages: 30 * day}))
	apptest.CreateHello(t, srv, "Hello")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"bob"}`)
	var txs []string
	for range 2 {
		tx := apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
		apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
		txs = append(txs, tx)
	}
	subscriber := func(tx string) map[string]any {
		var page struct {
			Data []struct {
				Subscriber map[string]any `json:"subscriber"`
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/notifications?transactionId="+tx, "").Decode(t, &page)
		is.Equal(len(page.Data), 1)
		return page.Data[0].Subscriber
	}
	db := srv.App.DB
	count := func(query string) int {
		var n int
		is.NoErr(db.QueryRowContext(ctx, query).Scan(&n))
		return n
	}
	is.Equal(count(`SELECT count(*) FROM notifications WHERE subscriber_snapshot <> ''`), 0) // no copy kept

	apptest.MustStatus(t, srv.Dev, "PUT", "/v1/subscribers/ada", `{"firstName":"Augusta"}`, 200)
	is.Equal(subscriber(txs[0])["firstName"], "Augusta") // as it now is
	apptest.MustStatus(t, srv.Dev, "DELETE", "/v1/subscribers/bob", "", 200)
	is.Equal(count(`SELECT count(*) FROM deleted_subscribers`), 0) // one no notification names is not kept

	apptest.MustStatus(t, srv.Dev, "DELETE", "/v1/subscribers/ada", "", 200)
	is.Equal(count(`SELECT count(*) FROM deleted_subscribers`), 1) // kept once for both notifications
	for _, tx := range txs {
		got := subscriber(tx)
		is.Equal(got["subscriberId"], "ada")           // as it was when deleted
		is.Equal(got["firstName"], "Augusta")          // its last name
		is.Equal(got["email"], "ada@example.com")      // and address
		is.True(got["_id"] != nil && got["_id"] != "") // naming the deleted _id
	}

	// A notification written before keeps its own copy, and reads it.
	_, err := db.ExecContext(ctx, `UPDATE notifications SET subscriber_snapshot = ? WHERE transaction_id = ?`,
		`{"_id":"x","subscriberId":"ada","firstName":"Ada"}`, txs[1])
	is.NoErr(err)
	b, _ := json.Marshal(subscriber(txs[1]))
	is.Equal(string(b), `{"_id":"x","firstName":"Ada","subscriberId":"ada"}`)

	srv.App.Clock.Advance(40 * day)
	is.NoErr(srv.Herald.Sweeper.Sweep(ctx))                        // the notifications expire
	is.Equal(count(`SELECT count(*) FROM notifications`), 0)       // swept
	is.Equal(count(`SELECT count(*) FROM deleted_subscribers`), 0) // and the summary with them
}

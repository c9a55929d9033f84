package activity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// TestWorkflowSnapshots_StoredOnceAndReadTheSame checks that what every
// delivery copies from its workflow (each job's step, the notification's
// template summary and preferences) is stored once however many triggers
// name it, and that the activity a client reads is byte for byte what it
// was when each row held its own copy, as rows written before did.
func TestWorkflowSnapshots_StoredOnceAndReadTheSame(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	var txIDs []string
	for i := range 3 {
		tx := apptest.TriggerTo(t, srv, "hello", "ada", fmt.Sprintf(`{"name":"Ada %d"}`, i))
		apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
		txIDs = append(txIDs, tx)
	}
	db := srv.App.DB
	count := func(query string) int {
		var n int
		is.NoErr(db.QueryRowContext(ctx, query).Scan(&n))
		return n
	}
	is.Equal(count(`SELECT count(*) FROM workflow_snapshots`), 3) // the in-app step (the trigger job is derived), the template summary and the preferences, once
	is.Equal(count(`SELECT count(*) FROM jobs WHERE step NOT LIKE '#%'`), 0)
	is.Equal(count(`SELECT count(*) FROM notifications WHERE template NOT LIKE '#%' OR preferences NOT LIKE '#%'`), 0)

	reads := func() []string {
		var out []string
		for _, tx := range txIDs {
			out = append(out, string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications?transactionId="+tx, "", 200).Body))
			id, ok := apptest.NotificationOf(t, srv, tx)
			is.True(ok)
			out = append(out, string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications/"+id.ID, "", 200).Body))
		}
		return out
	}
	keyed := reads()
	// Each row holding its own copy again, as one written before does.
	for _, stmt := range []string{
		`UPDATE jobs SET step = (SELECT body FROM workflow_snapshots WHERE id = jobs.step) WHERE step LIKE '#%'`,
		`UPDATE notifications SET template = (SELECT body FROM workflow_snapshots WHERE id = notifications.template) WHERE template LIKE '#%'`,
		`UPDATE notifications SET preferences = (SELECT body FROM workflow_snapshots WHERE id = notifications.preferences) WHERE preferences LIKE '#%'`,
	} {
		_, err := db.ExecContext(ctx, stmt)
		is.NoErr(err)
	}
	is.Equal(count(`SELECT count(*) FROM jobs WHERE step LIKE '#%'`), 0)
	is.Equal(reads(), keyed) // the same bytes from copies as from keys

	// A trigger after a restart, whose process knows no snapshot, stores
	// none again and names the same.
	srv.StartAgain(t)
	tx := apptest.TriggerTo(t, srv, "hello", "ada", `{"name":"Bob"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	is.Equal(count(`SELECT count(*) FROM workflow_snapshots`), 3)
}

package webhooks_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/workflows"
)

func TestWebhooks_Metrics(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	rc.answer(func(n int) int {
		if n == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return len(d.Attempts) == 1 })

	m := platformtest.Scrape(t, srv.URL+"/metrics")
	n, _ := platformtest.Sample(m, "herald_webhook_events_total", map[string]string{"type": "message.sent"})
	is.Equal(n, 1.0) // the event raised, by type
	n, _ = platformtest.Sample(m, "herald_webhook_attempts_total", map[string]string{"type": "message.sent", "endpoint": e.ID, "outcome": "pending"})
	is.Equal(n, 1.0) // the failed attempt, by type, endpoint and outcome
	n, _ = platformtest.Sample(m, "herald_webhook_due_deliveries", nil)
	is.Equal(n, 0.0) // the retry is not due yet
	srv.App.Clock.Advance(time.Minute)
	m = platformtest.Scrape(t, srv.URL+"/metrics")
	age, _ := platformtest.Sample(m, "herald_webhook_oldest_due_seconds", nil)
	is.True(age > 0) // once due, how long it has waited
}

func TestWebhooks_RetentionSweepsTheLog(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.Retention(app.Retention{Activity: 24 * time.Hour}))
	rc := newReceiver(t)
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return d.Status == "succeeded" })
	srv.App.Clock.Advance(12 * time.Hour)
	is.NoErr(srv.Herald.Sweeper.Sweep(context.Background())) // a sweep within the retention
	is.Equal(len(deliveries(t, srv, e.ID)), 1)               // keeps the delivery
	srv.App.Clock.Advance(13 * time.Hour)
	is.NoErr(srv.Herald.Sweeper.Sweep(context.Background())) // one past it
	is.Equal(len(deliveries(t, srv, e.ID)), 0)               // removes it
}

// TestWebhooks_EventsCountedOnCommit: an event raised in a transaction
// that rolls back (a write that fails after it, then retried) was never
// raised, and the count of events raised must not say it was.
func TestWebhooks_EventsCountedOnCommit(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	mustEndpoint(t, srv, newReceiver(t), "workflow.created")
	failed := errors.New("a later write failed")
	err := srv.App.DB.Tx(context.Background(), func(tx *sql.Tx) error {
		e := workflows.WorkflowEvent{EnvironmentID: srv.App.Development.ID, Type: workflows.EventCreated, Object: map[string]any{}}
		if err := srv.Herald.Webhooks.RaiseWorkflowEvent(context.Background(), tx, e); err != nil {
			return err
		}
		return failed
	})
	is.Equal(err, failed) // rolled back
	n, _ := platformtest.Sample(platformtest.Scrape(t, srv.URL+"/metrics"), "herald_webhook_events_total", map[string]string{"type": "workflow.created"})
	is.Equal(n, 0.0) // not counted as raised

	apptest.CreateHello(t, srv, "Hi") // raised and committed
	n, _ = platformtest.Sample(platformtest.Scrape(t, srv.URL+"/metrics"), "herald_webhook_events_total", map[string]string{"type": "workflow.created"})
	is.Equal(n, 1.0) // counted once
}

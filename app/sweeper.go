package app

import (
	"context"
	"slices"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/sqldb"
)

// Retention is how long records are kept (docs/retention.md); 0 keeps
// them forever.
type Retention struct {
	Activity time.Duration // a finished notification, its jobs and execution details
	InApp    time.Duration // in-app messages
	Messages time.Duration // every other channel's messages
	Every    time.Duration // between sweeps; 0 starts none (tests sweep by hand)
}

// valueRefs are the columns that may name a stored value (sqldb.StoreValue).
var valueRefs = append(slices.Clone(activity.ValueRefs), messaging.ValueRefs...)

// newSweeper builds the retention sweeper: activity deletes its own
// records and messaging its own, each environment apart, since every
// index they read starts with the environment.
func newSweeper(d Deps, activityStore *activity.Store, messageStore *messaging.Store, hooks *webhooks.Store) *activity.Sweeper {
	sw := &activity.Sweeper{DB: d.DB, Now: d.Now, Every: d.Retention.Every, Logger: d.Logger}
	// The webhook delivery log is kept as long as the activity it reports.
	sw.Tasks = append(sw.Tasks, activity.SweepTask{Name: "webhook deliveries", Keep: d.Retention.Activity, Sweep: hooks.Sweep})
	for _, env := range d.Environments {
		sw.Tasks = append(sw.Tasks,
			activity.SweepTask{Name: "notifications", Keep: d.Retention.Activity,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return activityStore.SweepFinished(ctx, env.ID, before, cursor, limit)
				}},
			activity.SweepTask{Name: "in-app messages", Keep: d.Retention.InApp,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, true, before, cursor, limit)
				}},
			activity.SweepTask{Name: "messages", Keep: d.Retention.Messages,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, false, before, cursor, limit)
				}},
			// Last: the values the records swept above were the last to name.
			activity.SweepTask{Name: "stored values", Keep: sqldb.ValueGrace,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					next, n, err := d.DB.SweepValues(ctx, env.ID, valueRefs, before, cursor, limit)
					return next, map[string]int64{"stored_values": n}, err
				}},
		)
	}
	return sw
}

package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
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
	each := func(sweep envSweep) sweepFunc { return acrossEnvironments(d.DB, sweep) }
	sw.Tasks = append(sw.Tasks,
		// The webhook delivery log is kept as long as the activity it reports.
		activity.SweepTask{Name: "webhook deliveries", Keep: d.Retention.Activity, Sweep: hooks.Sweep},
		activity.SweepTask{Name: "notifications", Keep: d.Retention.Activity, Sweep: each(activityStore.SweepFinished)},
		activity.SweepTask{Name: "in-app messages", Keep: d.Retention.InApp,
			Sweep: each(func(ctx context.Context, env string, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
				return messageStore.SweepMessages(ctx, env, true, before, cursor, limit)
			})},
		activity.SweepTask{Name: "messages", Keep: d.Retention.Messages,
			Sweep: each(func(ctx context.Context, env string, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
				return messageStore.SweepMessages(ctx, env, false, before, cursor, limit)
			})},
		// Last: the values the records swept above were the last to name.
		activity.SweepTask{Name: "stored values", Keep: sqldb.ValueGrace,
			Sweep: each(func(ctx context.Context, env string, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
				next, n, err := d.DB.SweepValues(ctx, env, valueRefs, before, cursor, limit)
				return next, map[string]int64{"stored_values": n}, err
			})},
	)
	return sw
}

type sweepFunc = func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error)

// envSweep sweeps one environment's records of a kind.
type envSweep = func(ctx context.Context, env string, before time.Time, cursor string, limit int) (string, map[string]int64, error)

// acrossEnvironments sweeps every environment in turn, those created
// since the process started included: its cursor is the environment it
// is in, a NUL, and that environment's own cursor.
func acrossEnvironments(db *sqldb.DB, sweep envSweep) sweepFunc {
	return func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
		env, inner, _ := strings.Cut(cursor, "\x00")
		ids, err := platform.EnvironmentIDs(ctx, db)
		if err != nil || len(ids) == 0 {
			return "", nil, err
		}
		if env == "" {
			env = ids[0]
		}
		next, removed, err := sweep(ctx, env, before, inner, limit)
		if err != nil || next != "" {
			return env + "\x00" + next, removed, err
		}
		for _, id := range ids {
			if id > env {
				return id + "\x00", removed, nil
			}
		}
		return "", removed, nil
	}
}

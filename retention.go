package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/messaging"
)

// retention is how long records are kept (docs/retention.md); 0 keeps
// them forever.
type retention struct {
	activity time.Duration // a finished notification, its jobs and execution details
	inApp    time.Duration // in-app messages
	messages time.Duration // every other channel's messages
	every    time.Duration // between sweeps; 0 starts none (tests sweep by hand)
}

// sweepEvery is how often a running Herald sweeps.
const sweepEvery = time.Hour

// retentionFlags declares the retention settings on fs, each falling back
// to its HERALD_* variable through env; the returned function reads them
// once fs is parsed, and fails naming the setting whose value is negative
// or unreadable.
func retentionFlags(fs *flag.FlagSet, env func(name, def string) string) func() (retention, error) {
	settings := []struct {
		flag, variable, def, usage string
		value                      *string
	}{
		{"activity-retention", "HERALD_ACTIVITY_RETENTION", "30d", "how long a finished notification, its jobs and execution details are kept", new(string)},
		{"in-app-retention", "HERALD_IN_APP_RETENTION", "365d", "how long in-app messages are kept", new(string)},
		{"message-retention", "HERALD_MESSAGE_RETENTION", "30d", "how long email, sms, chat and push messages are kept", new(string)},
	}
	for _, s := range settings {
		fs.StringVar(s.value, s.flag, env(s.variable, s.def), s.usage+"; days (30d) or a duration (36h), 0 keeps forever ("+s.variable+")")
	}
	return func() (retention, error) {
		keep := make([]time.Duration, len(settings))
		for i, s := range settings {
			d, err := parseRetention("-"+s.flag+" ("+s.variable+")", *s.value)
			if err != nil {
				return retention{}, err
			}
			keep[i] = d
		}
		return retention{activity: keep[0], inApp: keep[1], messages: keep[2], every: sweepEvery}, nil
	}
}

// newSweeper builds the retention sweeper: activity deletes its own
// records and messaging its own, each environment apart, since every
// index they read starts with the environment.
func newSweeper(d deps, activityStore *activity.Store, messageStore *messaging.Store) *activity.Sweeper {
	sw := &activity.Sweeper{DB: d.db, Now: d.now, Every: d.retention.every, Logger: d.logger}
	for _, env := range d.environments {
		sw.Tasks = append(sw.Tasks,
			activity.SweepTask{Name: "notifications", Keep: d.retention.activity,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return activityStore.SweepFinished(ctx, env.ID, before, cursor, limit)
				}},
			activity.SweepTask{Name: "in-app messages", Keep: d.retention.inApp,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, true, before, cursor, limit)
				}},
			activity.SweepTask{Name: "messages", Keep: d.retention.messages,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, false, before, cursor, limit)
				}},
		)
	}
	return sw
}

// parseRetention reads a retention setting: a number of days ("30" or
// "30d") or a Go duration ("36h"); 0 keeps records forever. A negative or
// unreadable value is an error that names the setting, which stops the
// start (docs/retention.md).
func parseRetention(name, value string) (time.Duration, error) {
	v := strings.TrimSpace(value)
	var d time.Duration
	days, err := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64)
	switch {
	case err != nil:
		d, err = time.ParseDuration(v)
	case math.IsNaN(days) || math.Abs(days) > maxRetentionDays:
		err = errors.New("out of range")
	default:
		d = time.Duration(days * float64(24*time.Hour))
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %q is not a number of days (30, 30d) or a duration (36h)", name, value)
	case d < 0:
		return 0, fmt.Errorf("%s: %q is negative; 0 keeps records forever", name, value)
	}
	return d, nil
}

// maxRetentionDays bounds a setting in days well inside time.Duration.
const maxRetentionDays = 100 * 366

package main

import (
	"flag"
	"time"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/platform"
)

// sweepEvery is how often a running Herald sweeps.
const sweepEvery = time.Hour

// retentionFlags declares the retention settings on fs, each falling back
// to its HERALD_* variable through env; the returned function reads them
// once fs is parsed, and fails naming the setting whose value is negative
// or unreadable.
func retentionFlags(fs *flag.FlagSet, env func(name, def string) string) func() (app.Retention, error) {
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
	return func() (app.Retention, error) {
		keep := make([]time.Duration, len(settings))
		for i, s := range settings {
			d, err := platform.ParseRetention("-"+s.flag+" ("+s.variable+")", *s.value)
			if err != nil {
				return app.Retention{}, err
			}
			keep[i] = d
		}
		return app.Retention{Activity: keep[0], InApp: keep[1], Messages: keep[2], Every: sweepEvery}, nil
	}
}

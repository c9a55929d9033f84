package workflows

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads five-field cron expressions (and an optional seconds field
// in front), plus descriptors such as @daily.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// NextCron returns the first time after t that expr names, in UTC: when a
// timed delay or digest fires. A step's cron is valid when NextCron finds a
// time for it (the workflow's issues check so).
func NextCron(expr string, t time.Time) (next time.Time, err error) {
	// robfig/cron v3.0.1 slices past the end of a time zone with no
	// schedule after it ("TZ=UTC") and panics: that expression is invalid
	// like any other, and the step's configuration fails with it.
	defer func() {
		if r := recover(); r != nil {
			next, err = t, fmt.Errorf("cron %q: not a schedule", expr)
		}
	}()
	sched, err := cronParser.Parse(strings.TrimSpace(expr))
	if err != nil {
		return t, fmt.Errorf("cron %q: %w", expr, err)
	}
	next = sched.Next(t.UTC())
	if next.IsZero() {
		return t, fmt.Errorf("cron %q never fires", expr)
	}
	return next, nil
}

package workflows

import (
	"fmt"
	"strings"
	"time"

	cron "github.com/netresearch/go-cron"
)

// cronParser reads five-field cron expressions (and an optional seconds field
// in front), plus descriptors such as @daily. DowOrDom keeps the classic
// cron reading of a day of month and a day of week both given: either day
// fires ("0 0 15 * FRI" is the 15th and every Friday).
var cronParser = cron.MustNewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow |
	cron.Descriptor | cron.DowOrDom)

// NextCron returns the first time after t that expr names, in UTC: when a
// timed delay or digest fires. A step's cron is valid when NextCron finds a
// time for it (the workflow's issues check so).
func NextCron(expr string, t time.Time) (time.Time, error) {
	sched, err := cronParser.Parse(strings.TrimSpace(expr))
	if err != nil {
		return t, fmt.Errorf("cron %q: %w", expr, err)
	}
	next := sched.Next(t.UTC())
	if next.IsZero() {
		return t, fmt.Errorf("cron %q never fires", expr)
	}
	return next, nil
}

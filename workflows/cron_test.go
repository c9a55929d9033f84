package workflows_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/workflows"
)

func TestNextCron(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, expr string
		want       time.Time
		errors     bool
	}{
		{"OKEveryDayAtNine", "0 9 * * *", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), false},
		{"OKLaterToday", "30 10 * * *", time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC), false},
		{"OKMondays", "0 8 * * MON", time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), false},
		{"OKWithSeconds", "15 0 10 * * *", time.Date(2026, 11, 21, 10, 0, 15, 0, time.UTC), false},
		{"OKDescriptor", "@daily", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), false},
		{"ErrSyntax", "every day", t0, true},
		{"OKTimeZone", "TZ=UTC 0 9 * * *", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), false},
		{"ErrTimeZoneAlone", "TZ=UTC", t0, true},                   // the parser panics on it
		{"ErrCronTimeZoneAlone", "CRON_TZ=Europe/Paris", t0, true}, // and on this
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := workflows.NextCron(tc.expr, t0)
			is.Equal(err != nil, tc.errors) // parse errors only for bad expressions
			is.Equal(got, tc.want)          // next run
		})
	}
}

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
		{"OKOtherTimeZone", "CRON_TZ=Europe/Paris 0 9 * * *", time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), false},
		{"OKDayOfMonthOrWeek", "0 0 15 * FRI", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), false}, // either day fires
		{"OKRangeOfWeekdays", "0 9 * JAN-MAR MON-FRI", time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC), false},
		{"OKStepInRange", "1-5/2 * * * *", time.Date(2026, 11, 21, 10, 1, 0, 0, time.UTC), false},
		{"OKList", "5,10 * * * *", time.Date(2026, 11, 21, 10, 5, 0, 0, time.UTC), false},
		{"OKLeapDay", "0 0 29 2 *", time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), false},
		{"OKEvery", "@every 90s", time.Date(2026, 11, 21, 10, 1, 30, 0, time.UTC), false},
		{"ErrNeverFires", "0 0 31 2 *", t0, true},
		{"ErrMinuteOutOfRange", "60 * * * *", t0, true},
		{"ErrStepAsLongAsTheRange", "*/60 * * * *", t0, true}, // it would only ever name minute 0
		{"ErrEveryUnderASecond", "@every 100ms", t0, true},
		{"ErrUnknownTimeZone", "TZ=Nowhere/Land 0 9 * * *", t0, true},
		{"ErrEmptyTimeZone", "TZ= 0 9 * * *", t0, true},
		{"ErrTimeZoneAlone", "TZ=UTC", t0, true},
		{"ErrCronTimeZoneAlone", "CRON_TZ=Europe/Paris", t0, true},
		{"ErrEmpty", "  ", t0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := workflows.NextCron(tc.expr, t0)
			is.Equal(err != nil, tc.errors) // parse errors only for bad expressions
			is.Equal(got, tc.want)          // next run
		})
	}
}

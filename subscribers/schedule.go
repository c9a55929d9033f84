package subscribers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
)

// Schedule is when a subscriber wants to be reached: its quiet hours are
// the rest of the week. It is the shape the reference's preferences carry,
// with times of day in 12-hour form ("09:00 AM"), read in the subscriber's
// timezone (docs/schedules.md).
type Schedule struct {
	IsEnabled      bool                    `json:"isEnabled"`
	WeeklySchedule map[string]*DaySchedule `json:"weeklySchedule,omitempty"`
}

// DaySchedule is one weekday of a schedule: whether it has open hours, and
// which.
type DaySchedule struct {
	IsEnabled bool        `json:"isEnabled"`
	Hours     []TimeRange `json:"hours,omitempty"`
}

// TimeRange is one stretch of open hours. An end before its start runs
// past midnight into the next day.
type TimeRange struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Weekdays are the keys of a weekly schedule, by time.Weekday.
var Weekdays = [7]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

var clock12 = regexp.MustCompile(`(?i)^(0?[1-9]|1[0-2]):([0-5][0-9])\s?(AM|PM)$`)

// minuteOfDay reads a 12-hour time as minutes after midnight.
func minuteOfDay(s string) (int, bool) {
	m := clock12.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	h, _ := strconv.Atoi(m[1])
	mins, _ := strconv.Atoi(m[2])
	h %= 12
	if strings.EqualFold(m[3], "PM") {
		h += 12
	}
	return h*60 + mins, true
}

// IsClockTime reports whether s is a time of day in the 12-hour form a
// schedule's hours take, as "09:00 AM".
func IsClockTime(s string) bool {
	_, ok := minuteOfDay(s)
	return ok
}

// Check returns a 400 naming what is wrong with the schedule, or nil.
func (s *Schedule) Check() error {
	if s.IsEnabled && s.WeeklySchedule != nil && len(s.WeeklySchedule) == 0 {
		return platform.BadRequest("schedule.weeklySchedule must name at least one weekday when the schedule is enabled")
	}
	for day, d := range s.WeeklySchedule {
		if !isWeekday(day) {
			return platform.BadRequest("schedule.weeklySchedule has %q: its keys must be weekdays, monday to sunday", day)
		}
		if d == nil {
			return platform.BadRequest("schedule.weeklySchedule.%s must be an object with isEnabled", day)
		}
		if len(d.Hours) > 24 {
			return platform.BadRequest("schedule.weeklySchedule.%s.hours holds at most 24 ranges", day)
		}
		for i, r := range d.Hours {
			for field, v := range map[string]string{"start": r.Start, "end": r.End} {
				if _, ok := minuteOfDay(v); !ok {
					return platform.BadRequest("schedule.weeklySchedule.%s.hours[%d].%s is %q: times are 12-hour, as \"09:00 AM\"", day, i, field, v)
				}
			}
		}
	}
	return nil
}

func isWeekday(s string) bool {
	for _, d := range Weekdays {
		if d == s {
			return true
		}
	}
	return false
}

// UnmarshalJSON refuses a schedule without isEnabled, which the shape
// requires, and a day without its own.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	var raw struct {
		IsEnabled      *bool                      `json:"isEnabled"`
		WeeklySchedule map[string]json.RawMessage `json:"weeklySchedule"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.IsEnabled == nil {
		return fmt.Errorf("schedule.isEnabled is required")
	}
	s.IsEnabled, s.WeeklySchedule = *raw.IsEnabled, nil
	if raw.WeeklySchedule != nil {
		s.WeeklySchedule = make(map[string]*DaySchedule, len(raw.WeeklySchedule))
	}
	for day, v := range raw.WeeklySchedule {
		var d struct {
			IsEnabled *bool       `json:"isEnabled"`
			Hours     []TimeRange `json:"hours"`
		}
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("schedule.weeklySchedule.%s: %w", day, err)
		}
		if d.IsEnabled == nil {
			return fmt.Errorf("schedule.weeklySchedule.%s.isEnabled is required", day)
		}
		s.WeeklySchedule[day] = &DaySchedule{IsEnabled: *d.IsEnabled, Hours: d.Hours}
	}
	return nil
}

// merge returns s with the days of change laid over it: the inbox sends
// the days it changed, the rest stay as they were.
func (s *Schedule) merge(change *Schedule) *Schedule {
	out := &Schedule{IsEnabled: change.IsEnabled}
	if s != nil && s.WeeklySchedule != nil || change.WeeklySchedule != nil {
		out.WeeklySchedule = map[string]*DaySchedule{}
	}
	if s != nil {
		for d, v := range s.WeeklySchedule {
			out.WeeklySchedule[d] = v
		}
	}
	for d, v := range change.WeeklySchedule {
		out.WeeklySchedule[d] = v
	}
	return out
}

// Open reports whether t falls inside the schedule's hours, read on the
// wall clock of loc, to the minute, both ends included. A disabled
// schedule, or one without a weekly schedule, is always open. A range
// that ends before it starts is open from its start to midnight and, the
// next day, from midnight to its end.
func (s *Schedule) Open(t time.Time, loc *time.Location) bool {
	if s == nil || !s.IsEnabled || s.WeeklySchedule == nil {
		return true
	}
	local := t.In(loc)
	m := local.Hour()*60 + local.Minute()
	today := local.Weekday()
	for _, r := range s.ranges(today) {
		if r.start <= r.end && r.start <= m && m <= r.end || r.end < r.start && m >= r.start {
			return true
		}
	}
	for _, r := range s.ranges((today + 6) % 7) {
		if r.end < r.start && m <= r.end {
			return true
		}
	}
	return false
}

type minuteRange struct{ start, end int }

// ranges returns the open ranges of a weekday, none when it is disabled.
func (s *Schedule) ranges(day time.Weekday) []minuteRange {
	d := s.WeeklySchedule[Weekdays[day]]
	if d == nil || !d.IsEnabled {
		return nil
	}
	out := make([]minuteRange, 0, len(d.Hours))
	for _, h := range d.Hours {
		start, ok1 := minuteOfDay(h.Start)
		end, ok2 := minuteOfDay(h.End)
		if ok1 && ok2 {
			out = append(out, minuteRange{start, end})
		}
	}
	return out
}

// NextOpen returns the first moment at or after t when the schedule is
// open, looking a week and a day ahead; ok is false when it never opens
// in that time (every day disabled). Each opening is the start of a range
// on that day's wall clock in loc, so a window keeps its local hours across
// a change of the clocks.
func (s *Schedule) NextOpen(t time.Time, loc *time.Location) (time.Time, bool) {
	if s.Open(t, loc) {
		return t, true
	}
	local := t.In(loc)
	var starts []time.Time
	for offset := 0; offset <= 8; offset++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+offset, 12, 0, 0, 0, loc)
		for _, r := range s.ranges(day.Weekday()) {
			at := time.Date(day.Year(), day.Month(), day.Day(), r.start/60, r.start%60, 0, 0, loc)
			if at.After(t) {
				starts = append(starts, at)
			}
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	for _, at := range starts {
		// A start inside the hour a clock change skips lands past it, where
		// the range may already have ended: it does not open that day.
		if s.Open(at, loc) {
			return at, true
		}
	}
	return time.Time{}, false
}

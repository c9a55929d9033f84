package subscribers_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/subscribers"
)

func mustSchedule(t *testing.T, doc string) *subscribers.Schedule {
	t.Helper()
	var s subscribers.Schedule
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatalf("schedule %s: %v", doc, err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("schedule %s: %v", doc, err)
	}
	return &s
}

const workWeek = `{"isEnabled":true,"weeklySchedule":{
	"monday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"tuesday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"wednesday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"thursday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"friday":{"isEnabled":true,"hours":[{"start":"9:00am","end":"05:00 PM"}]},
	"saturday":{"isEnabled":false},"sunday":{"isEnabled":false}}}`

func TestSchedule_WorkWeekInParis(t *testing.T) {
	is := is.New(t)
	paris, err := time.LoadLocation("Europe/Paris")
	is.NoErr(err)
	s := mustSchedule(t, workWeek)
	at := func(v string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", v, paris)
		is.NoErr(err)
		return tm
	}
	is.True(s.Open(at("2027-01-11 09:00"), paris))                  // Monday at opening, inclusive
	is.True(s.Open(at("2027-01-11 17:00"), paris))                  // and at closing
	is.True(!s.Open(at("2027-01-11 17:01"), paris))                 // a minute after
	is.True(!s.Open(at("2027-01-09 10:00"), paris))                 // Saturday
	is.True(!s.Open(at("2027-01-09 10:00").In(time.UTC), time.UTC)) // 09:00 UTC on a Saturday is Saturday in UTC too
	next, ok := s.NextOpen(at("2027-01-09 10:00"), paris)
	is.True(ok)
	is.Equal(next, at("2027-01-11 09:00")) // Monday 09:00 Paris
	next, _ = s.NextOpen(at("2027-01-11 17:30"), paris)
	is.Equal(next, at("2027-01-12 09:00")) // the next morning
	now := at("2027-01-12 10:00")
	next, _ = s.NextOpen(now, paris)
	is.Equal(next, now) // open: now
	// The same hours read in UTC: Monday 09:00 UTC is 10:00 in Paris.
	next, _ = s.NextOpen(at("2027-01-09 10:00"), time.UTC)
	is.Equal(next, time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC))
}

// A range that ends before it starts runs past midnight into the next day,
// which the previous day's range keeps open even when the day itself is
// disabled.
func TestSchedule_AcrossMidnight(t *testing.T) {
	is := is.New(t)
	s := mustSchedule(t, `{"isEnabled":true,"weeklySchedule":{
		"friday":{"isEnabled":true,"hours":[{"start":"10:00 PM","end":"02:00 AM"}]},
		"saturday":{"isEnabled":false}}}`)
	utc := time.UTC
	fri := time.Date(2027, 1, 8, 0, 0, 0, 0, utc)               // a Friday
	is.True(!s.Open(fri.Add(21*time.Hour+59*time.Minute), utc)) // 21:59 Friday
	is.True(s.Open(fri.Add(22*time.Hour), utc))                 // 22:00 Friday
	is.True(s.Open(fri.Add(25*time.Hour), utc))                 // 01:00 Saturday
	is.True(s.Open(fri.Add(26*time.Hour), utc))                 // 02:00 Saturday, inclusive
	is.True(!s.Open(fri.Add(26*time.Hour+time.Minute), utc))    // 02:01 Saturday
	next, ok := s.NextOpen(fri.Add(27*time.Hour), utc)          // 03:00 Saturday
	is.True(ok)
	is.Equal(next, fri.Add(7*24*time.Hour+22*time.Hour)) // the next Friday at 22:00
}

// On the days the clocks change, a window keeps its wall-clock hours: the
// opening moves by an hour in absolute time.
func TestSchedule_DaylightSavingChanges(t *testing.T) {
	is := is.New(t)
	paris, err := time.LoadLocation("Europe/Paris")
	is.NoErr(err)
	s := mustSchedule(t, `{"isEnabled":true,"weeklySchedule":{
		"sunday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"10:00 AM"}]},
		"monday":{"isEnabled":true,"hours":[{"start":"02:30 AM","end":"02:45 AM"},{"start":"09:00 AM","end":"10:00 AM"}]}}}`)
	// Sunday 28 March 2027: at 02:00 the clocks go to 03:00 (UTC+1 to UTC+2).
	sat := time.Date(2027, 3, 27, 12, 0, 0, 0, paris)
	next, ok := s.NextOpen(sat, paris)
	is.True(ok)
	is.Equal(next.UTC(), time.Date(2027, 3, 28, 7, 0, 0, 0, time.UTC)) // 09:00 summer time
	is.Equal(next.In(paris).Hour(), 9)
	// Sunday 31 October 2027: at 03:00 the clocks go back to 02:00.
	sat = time.Date(2027, 10, 30, 12, 0, 0, 0, paris)
	next, _ = s.NextOpen(sat, paris)
	is.Equal(next.UTC(), time.Date(2027, 10, 31, 8, 0, 0, 0, time.UTC)) // 09:00 winter time

	// A window inside the skipped hour does not open that day.
	skipped := mustSchedule(t, `{"isEnabled":true,"weeklySchedule":{
		"sunday":{"isEnabled":true,"hours":[{"start":"02:15 AM","end":"02:45 AM"}]}}}`)
	next, _ = skipped.NextOpen(time.Date(2027, 3, 28, 0, 0, 0, 0, paris), paris)
	is.Equal(next.In(paris).Format("2006-01-02 15:04"), "2027-04-04 02:15") // a week later
}

func TestSchedule_DisabledAndNeverOpen(t *testing.T) {
	is := is.New(t)
	now := time.Date(2027, 1, 9, 10, 0, 0, 0, time.UTC)
	off := mustSchedule(t, `{"isEnabled":false,"weeklySchedule":{"monday":{"isEnabled":false}}}`)
	is.True(off.Open(now, time.UTC)) // a disabled schedule is always open
	never := mustSchedule(t, `{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":false}}}`)
	_, ok := never.NextOpen(now, time.UTC)
	is.True(!ok) // no day opens
}

func TestSchedule_Check(t *testing.T) {
	for _, doc := range []string{
		`{"isEnabled":true,"weeklySchedule":{}}`,
		`{"isEnabled":true,"weeklySchedule":{"someday":{"isEnabled":true}}}`,
		`{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"13:00 PM","end":"05:00 PM"}]}}}`,
		`{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"09:00","end":"05:00 PM"}]}}}`,
	} {
		var s subscribers.Schedule
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if s.Check() == nil {
			t.Errorf("%s: accepted", doc)
		}
	}
	for _, doc := range []string{`{"weeklySchedule":{}}`, `{"isEnabled":true,"weeklySchedule":{"monday":{}}}`} {
		var s subscribers.Schedule
		if json.Unmarshal([]byte(doc), &s) == nil {
			t.Errorf("%s: decoded", doc)
		}
	}
}

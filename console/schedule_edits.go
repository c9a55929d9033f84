package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/subscribers"
)

// weekdays are a schedule's days in the order the page lists them, the
// week starting on Monday.
var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// The schedule form's fields are named by the schedule's JSON paths.
const scheduleEnabled = "schedule.isEnabled"

func dayField(day, field string) string { return "schedule.weeklySchedule." + day + "." + field }

// scheduleForm is the schedule form filled with what the subscriber has:
// each day's hours as "09:00 AM - 05:00 PM" ranges, comma separated.
func scheduleForm(sc *subscribers.Schedule) form {
	v := url.Values{}
	if sc != nil && sc.IsEnabled {
		v.Set(scheduleEnabled, "true")
	}
	for _, day := range weekdays {
		if sc == nil || sc.WeeklySchedule[day] == nil {
			continue
		}
		d := sc.WeeklySchedule[day]
		if d.IsEnabled {
			v.Set(dayField(day, "isEnabled"), "true")
		}
		ranges := make([]string, len(d.Hours))
		for i, r := range d.Hours {
			ranges[i] = r.Start + " - " + r.End
		}
		v.Set(dayField(day, "hours"), strings.Join(ranges, ", "))
	}
	return form{Values: v, Errors: map[string]string{}}
}

// scheduleFrom reads the schedule the form holds, every weekday named, so
// that it replaces the stored one whole; a day's hours that do not read
// as ranges of 12-hour times are the form's errors.
func scheduleFrom(f *form) subscribers.Schedule {
	sc := subscribers.Schedule{IsEnabled: f.Checked(scheduleEnabled), WeeklySchedule: map[string]*subscribers.DaySchedule{}}
	for _, day := range weekdays {
		d := &subscribers.DaySchedule{IsEnabled: f.Checked(dayField(day, "isEnabled"))}
		hours, problem := parseHours(f.Value(dayField(day, "hours")))
		if problem != "" {
			f.fail(dayField(day, "hours"), problem)
		}
		if d.IsEnabled && len(hours) == 0 && problem == "" {
			f.fail(dayField(day, "hours"), "give the day's hours, or leave the day unticked")
		}
		d.Hours = hours
		sc.WeeklySchedule[day] = d
	}
	return sc
}

// parseHours reads "09:00 AM - 05:00 PM, 10:00 PM - 02:00 AM" as ranges,
// or says what is wrong with it.
func parseHours(s string) ([]subscribers.TimeRange, string) {
	if s == "" {
		return nil, ""
	}
	var out []subscribers.TimeRange
	for _, part := range strings.Split(s, ",") {
		start, end, ok := strings.Cut(part, "-")
		r := subscribers.TimeRange{Start: strings.TrimSpace(start), End: strings.TrimSpace(end)}
		if !ok || !subscribers.IsClockTime(r.Start) || !subscribers.IsClockTime(r.End) {
			return nil, "\"" + strings.TrimSpace(part) + "\" is not a range of 12-hour times, as 09:00 AM - 05:00 PM"
		}
		out = append(out, r)
	}
	return out, ""
}

// handleScheduleSave serves POST
// /console/env/{env}/subscribers/{subscriberId}/schedule: the subscriber's
// quiet hours, under the rules of PATCH
// /v2/subscribers/{subscriberId}/preferences.
func handleScheduleSave(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		sc := scheduleFrom(&f)
		if !f.Invalid() {
			err := d.Subscribers.SetSchedule(p.r.Context(), p.env.ID, p.r.PathValue("subscriberId"), sc)
			if err != nil && !f.refused(err) {
				return err
			}
		}
		if f.Invalid() {
			return renderSubscriber(p, d, subscriberData{ScheduleForm: f}, http.StatusUnprocessableEntity)
		}
		return p.redirect(p.subscriberURL()+"#schedule", "The schedule is saved.")
	}
}

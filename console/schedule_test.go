package console_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// scheduleAPI is a subscriber's schedule as the API answers it.
type scheduleAPI struct {
	Schedule *struct {
		IsEnabled      bool `json:"isEnabled"`
		WeeklySchedule map[string]struct {
			IsEnabled bool `json:"isEnabled"`
			Hours     []struct {
				Start string `json:"start"`
				End   string `json:"end"`
			} `json:"hours"`
		} `json:"weeklySchedule"`
	} `json:"schedule"`
}

func TestSubscriberPage_Schedule(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","timezone":"Europe/Paris"}`)
	page := devURL(srv, "subscribers", "ada")
	save := page + "/schedule"
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)
	ed.get(page)

	t.Run("OK weekdays nine to five, and a night that runs past midnight", func(t *testing.T) {
		is := is.New(t)
		form := url.Values{"schedule.isEnabled": {"true"}}
		for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday"} {
			form.Set("schedule.weeklySchedule."+d+".isEnabled", "true")
			form.Set("schedule.weeklySchedule."+d+".hours", "09:00 AM - 05:00 PM")
		}
		form.Set("schedule.weeklySchedule.saturday.isEnabled", "true")
		form.Set("schedule.weeklySchedule.saturday.hours", "10:00 AM - 12:00 PM, 10:00 PM - 02:00 AM")
		res := ed.post(save, form)
		is.Equal(res.status, 303)                             // saved
		is.True(strings.HasSuffix(res.location, "#schedule")) // back to the card

		var got scheduleAPI
		api(t, srv.Dev, "/v2/subscribers/ada/preferences/global", &got)
		is.True(got.Schedule != nil && got.Schedule.IsEnabled)                     // stored, on
		is.Equal(got.Schedule.WeeklySchedule["monday"].Hours[0].Start, "09:00 AM") // as the API answers it
		is.Equal(got.Schedule.WeeklySchedule["monday"].Hours[0].End, "05:00 PM")
		is.Equal(len(got.Schedule.WeeklySchedule["saturday"].Hours), 2)            // two ranges
		is.Equal(got.Schedule.WeeklySchedule["saturday"].Hours[1].End, "02:00 AM") // past midnight
		is.Equal(got.Schedule.WeeklySchedule["sunday"].IsEnabled, false)           // a day left unticked is closed
		is.Equal(len(got.Schedule.WeeklySchedule), 7)                              // every day written

		body := ed.get(page).body
		is.True(strings.Contains(body, `value="10:00 AM - 12:00 PM, 10:00 PM - 02:00 AM"`)) // the page shows what is stored
		is.True(strings.Contains(body, "Hours read in Europe/Paris"))                       // in the subscriber's timezone
	})

	t.Run("OK an API write shows on the page", func(t *testing.T) {
		is := is.New(t)
		apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/subscribers/ada/preferences",
			`{"schedule":{"isEnabled":false,"weeklySchedule":{"sunday":{"isEnabled":true,"hours":[{"start":"8:30 am","end":"11:00 AM"}]}}}}`, 200)
		body := ed.get(page).body
		is.True(strings.Contains(body, `value="8:30 am - 11:00 AM"`))                      // the day the API changed
		is.True(!strings.Contains(body, `name="schedule.isEnabled" value="true" checked`)) // the schedule is off
	})

	for _, tc := range []struct {
		name, day, hours, shows string
	}{
		{"ErrNotA12HourTime", "monday", "13:00 PM - 05:00 PM", `&#34;13:00 PM - 05:00 PM&#34; is not a range of 12-hour times`},
		{"ErrNoDash", "tuesday", "09:00 AM", `&#34;09:00 AM&#34; is not a range`},
		{"ErrOpenDayWithoutHours", "friday", "", "give the day&#39;s hours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var before scheduleAPI
			api(t, srv.Dev, "/v2/subscribers/ada/preferences/global", &before)
			ed.get(page)
			res := ed.post(save, url.Values{"schedule.isEnabled": {"true"},
				"schedule.weeklySchedule." + tc.day + ".isEnabled": {"true"}, "schedule.weeklySchedule." + tc.day + ".hours": {tc.hours}})
			is.Equal(res.status, 422)                                  // refused
			is.True(strings.Contains(res.body, tc.shows))              // beside the field
			is.True(strings.Contains(res.body, `aria-invalid="true"`)) // which is marked
			if tc.hours != "" {
				is.True(strings.Contains(res.body, `value="`+tc.hours+`"`)) // what was typed is kept
			}
			var after scheduleAPI
			api(t, srv.Dev, "/v2/subscribers/ada/preferences/global", &after)
			is.Equal(after, before) // nothing changed
		})
	}

	t.Run("ErrTooManyRanges is the API's own refusal", func(t *testing.T) {
		is := is.New(t)
		ed.get(page)
		hours := strings.TrimSuffix(strings.Repeat("09:00 AM - 10:00 AM, ", 25), ", ")
		res := ed.post(save, url.Values{"schedule.isEnabled": {"true"},
			"schedule.weeklySchedule.monday.isEnabled": {"true"}, "schedule.weeklySchedule.monday.hours": {hours}})
		is.Equal(res.status, 422)                                            // refused
		is.True(strings.Contains(res.body, "hours holds at most 24 ranges")) // as PATCH preferences words it
	})

	t.Run("viewer sees it read-only and cannot save", func(t *testing.T) {
		is := is.New(t)
		v := member(t, srv, "viewer@example.com", platform.RoleViewer)
		body := v.get(page).body
		is.True(strings.Contains(body, `id="schedule"`))                                       // the card is shown
		is.True(strings.Contains(body, `name="schedule.weeklySchedule.monday.hours" value="`)) // with the hours
		is.True(!strings.Contains(body, "Save schedule"))                                      // no save button
		is.True(strings.Contains(body, `autocomplete="off" disabled`))                         // read-only
		res := v.post(save, url.Values{"schedule.isEnabled": {"false"}})
		is.Equal(res.status, 403) // the route itself is the editor's
	})

	t.Run("ErrUnknownSubscriber", func(t *testing.T) {
		is := is.New(t)
		ed.get(page)
		res := ed.post(devURL(srv, "subscribers", "nobody", "schedule"), url.Values{"schedule.isEnabled": {"false"}})
		is.Equal(res.status, 404)
	})
}

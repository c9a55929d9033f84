package subscribers_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// A schedule written through the v2 preferences is read back by the v2
// routes and by the inbox; the inbox's write of some days keeps the others.
func TestSchedules_ReadAndWrittenThroughPreferences(t *testing.T) {
	is := is.New(t)
	srv, _ := setUpPreferences(t)

	type global struct {
		Channels map[string]bool `json:"channels"`
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
	var none struct {
		Global global `json:"global"`
	}
	srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences", "").Decode(t, &none)
	is.True(none.Global.Schedule == nil) // none set

	res := srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada/preferences", `{"channels":{"email":false},"schedule":{"isEnabled":true,
		"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},"sunday":{"isEnabled":false}}}}`)
	is.Equal(res.Status, 200)
	var v2 struct {
		Global global `json:"global"`
	}
	res.Decode(t, &v2)
	is.True(v2.Global.Schedule != nil)
	is.True(v2.Global.Schedule.IsEnabled)
	is.Equal(v2.Global.Schedule.WeeklySchedule["monday"].Hours[0].Start, "09:00 AM")
	is.Equal(v2.Global.Channels["email"], false) // the channels written with it

	var g global
	srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences/global", "").Decode(t, &g)
	is.Equal(g.Schedule.WeeklySchedule["monday"].Hours[0].End, "05:00 PM")

	// The inbox, as @novu/js's preferences.schedule.update sends it: only
	// the days it changes.
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	status, body, _ := inbox.Do("PATCH", "/v1/inbox/preferences", `{"schedule":{"isEnabled":true,
		"weeklySchedule":{"tuesday":{"isEnabled":true,"hours":[{"start":"10:00 AM","end":"12:00 PM"},{"start":"02:00 PM","end":"04:30 PM"}]}}}}`)
	is.Equal(status, 200)
	var patched struct {
		Data global `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &patched))
	is.Equal(len(patched.Data.Schedule.WeeklySchedule), 3)                             // monday and sunday kept, tuesday added
	is.Equal(patched.Data.Schedule.WeeklySchedule["tuesday"].Hours[1].End, "04:30 PM") // its second range
	status, body, _ = inbox.Do("GET", "/v1/inbox/preferences/global", "")
	is.Equal(status, 200)
	var read struct {
		Data global `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &read))
	is.Equal(read.Data.Schedule.WeeklySchedule["monday"].Hours[0].Start, "09:00 AM")
	is.Equal(srv.Dev.Do(t, "GET", "/v2/subscribers/bob/preferences/global", "").Status, 200)
	var bob global
	srv.Dev.Do(t, "GET", "/v2/subscribers/bob/preferences/global", "").Decode(t, &bob)
	is.True(bob.Schedule == nil) // another subscriber's is its own

	// Turning it off keeps the days for when it is turned on again.
	status, body, _ = inbox.Do("PATCH", "/v1/inbox/preferences", `{"schedule":{"isEnabled":false}}`)
	is.Equal(status, 200)
	is.NoErr(json.Unmarshal(body, &patched))
	is.True(!patched.Data.Schedule.IsEnabled)
	is.Equal(len(patched.Data.Schedule.WeeklySchedule), 3)
}

// A schedule that is not well formed, or sent with a workflow, is a 400 and
// changes nothing.
func TestSchedules_BadSchedulesAreRefused(t *testing.T) {
	is := is.New(t)
	srv, _ := setUpPreferences(t)
	for _, body := range []string{
		`{"schedule":{"isEnabled":true,"weeklySchedule":{}}}`,
		`{"schedule":{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"9","end":"5"}]}}}}`,
		`{"schedule":{"isEnabled":true,"weeklySchedule":{"caturday":{"isEnabled":true}}}}`,
		`{"schedule":{"weeklySchedule":{"monday":{"isEnabled":true}}}}`,
		`{"schedule":"always"}`,
		`{"workflowId":"news","schedule":{"isEnabled":false}}`,
	} {
		res := srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada/preferences", body)
		if res.Status != 400 && res.Status != 422 {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
	}
	var g struct {
		Schedule any `json:"schedule"`
	}
	srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences/global", "").Decode(t, &g)
	is.Equal(g.Schedule, nil) // nothing stored

	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	status, _, _ := inbox.Do("PATCH", "/v1/inbox/preferences/news", `{"schedule":{"isEnabled":false}}`)
	is.Equal(status, 400) // a workflow's preference has no schedule
	status, _, _ = inbox.Do("PATCH", "/v1/inbox/preferences", `{"schedule":{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"25:00 AM","end":"05:00 PM"}]}}}}`)
	is.Equal(status, 400)
}

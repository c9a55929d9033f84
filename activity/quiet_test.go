package activity_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// quietWeek is Monday to Friday, 09:00 to 17:00.
const quietWeek = `{"schedule":{"isEnabled":true,"weeklySchedule":{
	"monday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"tuesday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"wednesday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"thursday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"friday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]},
	"saturday":{"isEnabled":false},"sunday":{"isEnabled":false}}}}`

// setUpQuietHours starts a server whose clock reads Saturday 9 January
// 2027, 10:00 in Paris, with an email integration posting to the returned
// hook, the workflows "news" (in-app, then email), "alerts" (the same,
// critical) and "code" (an email whose control ignores schedules), and the
// subscriber ada in Europe/Paris, reached Monday to Friday, 09:00 to 17:00.
func setUpQuietHours(t *testing.T) (*apptest.Server, *apptest.ChatHook, *time.Location) {
	t.Helper()
	srv := apptest.NewServer(t)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	srv.App.Clock.Advance(time.Date(2027, 1, 9, 10, 0, 0, 0, paris).Sub(srv.App.Clock.Now()))
	mail := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,
		"credentials":{"webhookUrl":"`+mail.URL+`","from":"noreply@example.com"}}`)
	steps := `"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}},
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hi"}}]`
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"News","workflowId":"news","active":true,`+steps+`}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,
		"preferences":{"workflow":{"all":{"enabled":true,"readOnly":true}}},`+steps+`}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Code","workflowId":"code","active":true,
		"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"Code","body":"1234","schedule":"ignore"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com","timezone":"Europe/Paris"}`)
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/subscribers/ada/preferences", quietWeek, 200)
	return srv, mail, paris
}

// detailOf returns the first execution detail of the transaction's job at
// index job that contains text, or "".
func detailOf(n apptest.Notification, job int, text string) string {
	for _, d := range n.Jobs[job].ExecutionDetails {
		if strings.Contains(d.Detail, text) {
			return d.Detail
		}
	}
	return ""
}

// An email triggered on Saturday at 10:00 for a subscriber reached Monday
// to Friday from 09:00 in Paris waits until Monday 09:00 Paris time, then
// goes once; the in-app message goes at once, and so do a critical
// workflow's email and an email whose step ignores schedules.
func TestQuietHours_EmailHeldUntilTheScheduleOpens(t *testing.T) {
	is := is.New(t)
	srv, mail, paris := setUpQuietHours(t)

	tx := apptest.Trigger(t, srv, `{"name":"news","to":"ada"}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "email:delayed")
	held := detailOf(n, 2, "Held by the subscriber's schedule until")
	is.True(strings.Contains(held, "Mon 11 Jan 2027 09:00 CET")) // Monday 09:00 in Paris
	is.True(strings.Contains(held, "2027-01-11T08:00:00"))       // which is 08:00 UTC

	critical := apptest.Trigger(t, srv, `{"name":"alerts","to":"ada"}`)
	apptest.WaitJobs(t, srv, critical, "trigger:completed", "in_app:completed", "email:completed")
	code := apptest.Trigger(t, srv, `{"name":"code","to":"ada"}`)
	apptest.WaitJobs(t, srv, code, "trigger:completed", "email:completed")
	is.Equal(len(mail.Received()), 2) // the critical one and the code; not the held one

	srv.App.Clock.Advance(46*time.Hour + 59*time.Minute) // Monday 08:59
	// The email lane runs due jobs oldest first: once a later email has
	// gone, the held one was not due.
	later := apptest.Trigger(t, srv, `{"name":"code","to":"ada"}`)
	apptest.WaitJobs(t, srv, later, "trigger:completed", "email:completed")
	n, _ = apptest.NotificationOf(t, srv, tx)
	is.Equal(n.Jobs[2].Status, "delayed") // still held
	srv.App.Clock.Advance(time.Minute)    // Monday 09:00
	is.Equal(srv.App.Clock.Now().In(paris).Format("Mon 15:04"), "Mon 09:00")
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "email:completed")
	is.Equal(len(mail.Received()), 4) // sent once

	// Within the hours, an email goes at once.
	now := apptest.Trigger(t, srv, `{"name":"news","to":"ada"}`)
	apptest.WaitJobs(t, srv, now, "trigger:completed", "in_app:completed", "email:completed")
}

// A held step is the job's run-at: a Herald started after the one that
// held it sends it when the schedule opens.
func TestQuietHours_HoldSurvivesARestart(t *testing.T) {
	is := is.New(t)
	srv, mail, _ := setUpQuietHours(t)
	tx := apptest.Trigger(t, srv, `{"name":"news","to":"ada"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "email:delayed")
	srv.Stop()
	srv.StartAgain(t)
	srv.App.Clock.Advance(47 * time.Hour) // Monday 09:00
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "email:completed")
	is.Equal(len(mail.Received()), 1)
}

// The step control schedule: skip skips the step outside the hours, as the
// reference does, and the workflow goes on.
func TestQuietHours_SkipControl(t *testing.T) {
	is := is.New(t)
	srv, mail, _ := setUpQuietHours(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Digest","workflowId":"skipper","active":true,
		"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"s","body":"b","schedule":"skip"}},
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	tx := apptest.Trigger(t, srv, `{"name":"skipper","to":"ada"}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:skipped", "in_app:completed")
	is.True(detailOf(n, 1, "outside the subscriber's schedule") != "")
	is.Equal(len(mail.Received()), 0)
}

// A delay whose control extendToSchedule is set ends when the schedule
// next opens, when it would end while it is closed; without it, it ends
// on time.
func TestQuietHours_DelayExtendsToSchedule(t *testing.T) {
	is := is.New(t)
	srv, _, _ := setUpQuietHours(t)
	for _, extend := range []string{"true", "false"} {
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Later `+extend+`","workflowId":"later-`+extend+`","active":true,
			"steps":[{"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":1,"unit":"hours","extendToSchedule":`+extend+`}},
			{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	}
	extended := apptest.Trigger(t, srv, `{"name":"later-true","to":"ada"}`)
	plain := apptest.Trigger(t, srv, `{"name":"later-false","to":"ada"}`)
	n := apptest.WaitJobs(t, srv, extended, "trigger:completed", "delay:delayed", "in_app:pending")
	is.True(strings.Contains(detailOf(n, 1, "extended to the subscriber's schedule"), "2027-01-11T08:00:00"))
	apptest.WaitJobs(t, srv, plain, "trigger:completed", "delay:delayed", "in_app:pending")
	srv.App.Clock.Advance(61 * time.Minute)
	apptest.WaitJobs(t, srv, plain, "trigger:completed", "delay:completed", "in_app:completed")
	n, _ = apptest.NotificationOf(t, srv, extended)
	is.Equal(n.Jobs[1].Status, "delayed") // still waiting for Monday
	srv.App.Clock.Advance(47 * time.Hour)
	apptest.WaitJobs(t, srv, extended, "trigger:completed", "delay:completed", "in_app:completed")
}

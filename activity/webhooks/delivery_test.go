package webhooks_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

func TestWebhooks_MessageEventsSignedAndShaped(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	mustEndpoint(t, srv, rc, "message.sent", "message.delivered")
	apptest.CreateHello(t, srv, "Hi {{payload.name}}")
	txID := apptest.TriggerTo(t, srv, "hello", "ada", `{"name":"Ada"}`)

	got := rc.wait(2)
	sent, delivered := ofType(got, "message.sent"), ofType(got, "message.delivered")
	is.Equal(len(sent), 1)      // one message.sent for the in-app message
	is.Equal(len(delivered), 1) // and one message.delivered, as the reference platform raises both
	for _, g := range got {
		is.True(g.Verified)                                             // the Standard Webhooks library verifies the signature
		is.Equal(g.ID, g.Event.ID)                                      // webhook-id is the event's id
		is.True(strings.HasPrefix(g.Event.ID, "evt_"))                  // ids as the reference platform's
		is.Equal(g.Event.Object, "message")                             // the object type
		is.Equal(g.Event.EnvironmentID, srv.App.Development.Identifier) // the environment's identifier
	}
	var data struct {
		Object struct {
			ID                 string   `json:"_id"`
			NotificationID     string   `json:"_notificationId"`
			TemplateID         string   `json:"_templateId"`
			SubscriberID       string   `json:"subscriberId"`
			WorkflowID         string   `json:"workflowId"`
			TemplateIdentifier string   `json:"templateIdentifier"`
			TransactionID      string   `json:"transactionId"`
			Channel            string   `json:"channel"`
			Status             string   `json:"status"`
			DeliveredAt        []string `json:"deliveredAt"`
			ProviderResponseID string   `json:"providerResponseId"`
		} `json:"object"`
	}
	is.NoErr(json.Unmarshal(sent[0].Event.Data, &data))      // the message event's data
	is.True(data.Object.ID != "")                            // the message's _id
	is.True(data.Object.NotificationID != "")                // its notification's
	is.True(data.Object.TemplateID != "")                    // its workflow's _id
	is.Equal(data.Object.SubscriberID, "ada")                // the subscriberId, not an internal id
	is.Equal(data.Object.WorkflowID, "hello")                // the workflowId
	is.Equal(data.Object.TemplateIdentifier, "hello")        // under the reference's name too
	is.Equal(data.Object.TransactionID, txID)                // the trigger's transactionId
	is.Equal(data.Object.Channel, "in_app")                  // the channel
	is.Equal(data.Object.Status, "sent")                     // the message's status
	is.Equal(len(data.Object.DeliveredAt), 1)                // an in-app message is delivered when stored
	is.Equal(data.Object.ProviderResponseID, data.Object.ID) // the in-app provider's id is the message's

	var messages struct {
		Data []struct {
			ID string `json:"_id"`
		} `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?subscriberId=ada", "", 200).Decode(t, &messages)
	is.Equal(len(messages.Data), 1)               // the message
	is.Equal(messages.Data[0].ID, data.Object.ID) // the event names it
}

func TestWebhooks_InboxMarksRaiseEvents(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	mustEndpoint(t, srv, rc, "message.read", "message.unread", "message.seen")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	var messages struct {
		Data []struct {
			ID string `json:"_id"`
		} `json:"data"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(messages.Data) == 0 && time.Now().Before(deadline) {
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?subscriberId=ada", "", 200).Decode(t, &messages)
	}
	is.Equal(len(messages.Data), 1) // the message is stored
	id := messages.Data[0].ID
	for _, mark := range []string{"read", "unread", "seen"} {
		apptest.MustStatus(t, srv.Dev, "POST", "/v1/subscribers/ada/messages/mark-as",
			`{"messageId":"`+id+`","markAs":"`+mark+`"}`, 201)
	}
	got := rc.wait(3)
	var types []string
	for _, g := range got {
		types = append(types, g.Event.Type)
	}
	slices.Sort(types)                                                          // delivered side by side, in any order
	is.Equal(types, []string{"message.read", "message.seen", "message.unread"}) // one event per mark, none of the types not asked for
	var data struct {
		Object struct {
			ID             string `json:"_id"`
			OrganizationID string `json:"_organizationId"`
			Read           bool   `json:"read"`
		} `json:"object"`
	}
	is.NoErr(json.Unmarshal(ofType(got, "message.read")[0].Event.Data, &data)) // the read event's data
	is.Equal(data.Object.ID, id)                                               // names the message
	is.Equal(data.Object.OrganizationID, srv.App.Development.OrganizationID)   // and its organization, which it leaves out
	is.True(data.Object.Read)                                                  // as it stands after the change
}

func TestWebhooks_RetriesKeepTheID(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	rc.answer(func(n int) int {
		if n < 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)

	rc.wait(1)
	d := waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return len(d.Attempts) == 1 })
	is.Equal(d.Status, "pending")                                                 // to be retried
	is.True(d.NextAttemptAt != nil)                                               // at a time it says
	is.Equal(d.Attempts[0].StatusCode, 503)                                       // the answer is logged
	is.True(strings.Contains(d.Attempts[0].ResponseExcerpt, "from the receiver")) // with an excerpt of its body
	srv.App.Clock.Advance(6 * time.Second)                                        // past the first retry, 5 s give or take a tenth
	rc.wait(2)
	waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return len(d.Attempts) == 2 })
	srv.App.Clock.Advance(6 * time.Minute) // past the second, 5 min give or take a tenth
	got := rc.wait(3)
	d = waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return d.Status == "succeeded" })
	is.Equal(len(d.Attempts), 3)   // three attempts logged
	is.Equal(d.NextAttemptAt, nil) // and none to come
	is.Equal(got[0].ID, got[1].ID) // every attempt carries the same webhook-id
	is.Equal(got[1].ID, got[2].ID) // every attempt carries the same webhook-id
	for _, g := range got {
		is.True(g.Verified) // each attempt is signed afresh
	}
}

func TestWebhooks_GoneDisablesTheEndpoint(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	rc.answer(func(int) int { return http.StatusGone })
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)

	d := waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return d.Status == "failed" })
	is.Equal(len(d.Attempts), 1) // a 410 is not retried
	got := mustEndpointGet(t, srv, e.ID)
	is.True(!got.Active)               // the endpoint is disabled
	is.True(got.DisabledReason != nil) // saying why
	apptest.TriggerTo(t, srv, "hello", "bob", `{}`)
	apptest.WaitJobs(t, srv, apptest.TriggerTo(t, srv, "hello", "cy", `{}`), "trigger:completed", "in_app:completed")
	is.Equal(len(deliveries(t, srv, e.ID)), 1) // a disabled endpoint is sent nothing more
	is.Equal(len(rc.received()), 1)            // nor received anything

	var back endpoint
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/webhooks/endpoints/"+e.ID, `{"active":true}`, 200).Decode(t, &back)
	is.True(back.Active)               // activated again by hand
	is.Equal(back.DisabledReason, nil) // its reason cleared
}

func TestWebhooks_FailingFiveDaysDisables(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	rc.answer(func(int) int { return http.StatusInternalServerError })
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return len(d.Attempts) == 1 })
	is.True(mustEndpointGet(t, srv, e.ID).Active) // one failure disables nothing

	srv.App.Clock.Advance(5*24*time.Hour + time.Minute)
	apptest.TriggerTo(t, srv, "hello", "bob", `{}`)
	deadline := time.Now().Add(10 * time.Second)
	for mustEndpointGet(t, srv, e.ID).Active && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := mustEndpointGet(t, srv, e.ID)
	is.True(!got.Active)                                                                  // failing for 5 days disables it
	is.True(got.DisabledReason != nil && strings.Contains(*got.DisabledReason, "5 days")) // saying why
}

func TestWebhooks_GuardRefusesLoopback(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.Outbound(nil)) // the default guard
	rc := newReceiver(t)
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	d := waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return len(d.Attempts) == 1 })
	is.Equal(d.Attempts[0].StatusCode, 0)                                             // no answer
	is.True(strings.Contains(d.Attempts[0].ResponseExcerpt, "HERALD_OUTBOUND_ALLOW")) // the guard refused, naming the setting
	is.Equal(len(rc.received()), 0)                                                   // the receiver got nothing
}

func TestWebhooks_ReplayKeepsTheID(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	e := mustEndpoint(t, srv, rc, "message.sent")
	apptest.CreateHello(t, srv, "Hi")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	first := rc.wait(1)[0]
	d := waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return d.Status == "succeeded" })

	var replayed delivery
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/deliveries/"+d.ID+"/replay", "", 202).Decode(t, &replayed)
	is.Equal(replayed.Status, "pending") // due again
	got := rc.wait(2)
	is.Equal(got[1].ID, first.ID) // replayed under the same webhook-id
	is.True(got[1].Verified)      // and signed

	var n struct {
		Replayed int `json:"replayed"`
	}
	since := srv.App.Clock.Now().Add(-time.Minute).Format(time.RFC3339)
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/replay", `{"since":"`+since+`"}`, 202).Decode(t, &n)
	is.Equal(n.Replayed, 1) // every delivery since then
	got = rc.wait(3)
	is.Equal(got[2].ID, first.ID) // again under the same id
	waitDelivery(t, srv, e.ID, "message.sent", func(d delivery) bool { return d.Status == "succeeded" && len(d.Attempts) == 3 })

	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"ErrUnknownDelivery", "/deliveries/000000000000000000000000/replay", "", 404},
		{"ErrNoSince", "/replay", `{}`, 422},
		{"ErrSinceNotATime", "/replay", `{"since":"yesterday"}`, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v2/webhooks/endpoints/"+e.ID+tc.path, tc.body)
			is.Equal(res.Status, tc.status) // refused
		})
	}
}

func TestWebhooks_TestEvent(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	e := mustEndpoint(t, srv, rc, "message.sent")
	var d delivery
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/test", `{"eventType":"workflow.updated"}`, 202).Decode(t, &d)
	is.Equal(d.EventType, "workflow.updated") // a sample of the type asked, whatever the endpoint takes
	got := rc.wait(1)
	is.Equal(got[0].Event.Type, "workflow.updated") // sent
	is.Equal(got[0].Event.Object, "workflow")       // with its object
	is.True(got[0].Verified)                        // and signed
	res := srv.Dev.Do(t, "POST", "/v2/webhooks/endpoints/"+e.ID+"/test", `{"eventType":"message.nope"}`)
	is.Equal(res.Status, 422) // an unknown type is refused
}

func TestWebhooks_WorkflowAndPreferenceEvents(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	mustEndpoint(t, srv, rc, "workflow.created", "workflow.updated", "workflow.deleted", "preference.updated")
	apptest.CreateHello(t, srv, "Hi")
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/workflows/hello", `{"name":"Hello again"}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/subscribers/ada/preferences/hello", `{"channel":{"type":"email","enabled":false}}`, 200)
	apptest.MustStatus(t, srv.Dev, "DELETE", "/v2/workflows/hello", "", 204)

	got := rc.wait(4)
	var types []string
	for _, g := range got {
		is.True(g.Verified) // signed
		types = append(types, g.Event.Type)
	}
	slices.Sort(types)                                                                                          // an endpoint's deliveries run side by side: their order is not kept
	is.Equal(types, []string{"preference.updated", "workflow.created", "workflow.deleted", "workflow.updated"}) // one event per change

	var updated struct {
		Object struct {
			WorkflowID string `json:"workflowId"`
			Name       string `json:"name"`
		} `json:"object"`
		PreviousObject struct {
			Name string `json:"name"`
		} `json:"previousObject"`
	}
	is.NoErr(json.Unmarshal(ofType(got, "workflow.updated")[0].Event.Data, &updated)) // workflow.updated's data
	is.Equal(updated.Object.WorkflowID, "hello")                                      // names the workflow
	is.Equal(updated.Object.Name, "Hello again")                                      // as it is now
	is.Equal(updated.PreviousObject.Name, "Hello")                                    // and as it was
	var pref struct {
		SubscriberID string `json:"subscriberId"`
		Object       struct {
			Level    string          `json:"level"`
			Channels map[string]bool `json:"channels"`
			Workflow struct {
				Identifier string `json:"identifier"`
			} `json:"workflow"`
		} `json:"object"`
	}
	is.NoErr(json.Unmarshal(ofType(got, "preference.updated")[0].Event.Data, &pref)) // preference.updated's data
	is.Equal(pref.SubscriberID, "ada")                                               // the subscriberId
	is.Equal(pref.Object.Level, "template")                                          // a workflow's preference
	is.Equal(pref.Object.Workflow.Identifier, "hello")                               // which one
	is.Equal(pref.Object.Channels["email"], false)                                   // as written
}

func TestWebhooks_ScheduleChangeRaisesPreferenceUpdated(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	rc := newReceiver(t)
	mustEndpoint(t, srv, rc, "preference.updated")
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/subscribers/ada/preferences",
		`{"schedule":{"isEnabled":true,"weeklySchedule":{"monday":{"isEnabled":true,"hours":[{"start":"09:00 AM","end":"05:00 PM"}]}}}}`, 200)
	rc.wait(1)
	status, _, _ := inbox.Do("PATCH", "/v1/inbox/preferences",
		`{"schedule":{"isEnabled":true,"weeklySchedule":{"saturday":{"isEnabled":true,"hours":[{"start":"10:00 PM","end":"02:00 AM"}]}}}}`)
	is.Equal(status, 200) // the inbox's write
	got := rc.wait(2)
	is.Equal(len(got), 2) // one event per write

	type event struct {
		SubscriberID string `json:"subscriberId"`
		Object       struct {
			Level    string          `json:"level"`
			Enabled  bool            `json:"enabled"`
			Channels map[string]bool `json:"channels"`
			Schedule *struct {
				IsEnabled      bool `json:"isEnabled"`
				WeeklySchedule map[string]struct {
					Hours []struct{ Start, End string } `json:"hours"`
				} `json:"weeklySchedule"`
			} `json:"schedule"`
		} `json:"object"`
	}
	var days []int
	for _, g := range got {
		var e event
		is.NoErr(json.Unmarshal(g.Event.Data, &e))
		is.Equal(e.SubscriberID, "ada")      // whose schedule
		is.Equal(e.Object.Level, "global")   // a subscriber's schedule is its global preference's
		is.True(e.Object.Enabled)            // no channel turned off
		is.True(e.Object.Channels != nil)    // channels are always there
		is.True(e.Object.Schedule != nil)    // the schedule, as written
		is.True(e.Object.Schedule.IsEnabled) // on
		is.Equal(e.Object.Schedule.WeeklySchedule["monday"].Hours[0].End, "05:00 PM")
		days = append(days, len(e.Object.Schedule.WeeklySchedule))
	}
	slices.Sort(days)
	is.Equal(days, []int{1, 2}) // the second event carries the schedule as it stands after the inbox's write: both days
}

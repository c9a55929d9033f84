package activity_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// These tests drive a trigger through the real wiring: workflows stores the
// workflow, subscribers the recipient, activity queues and runs the jobs,
// and messaging renders and delivers.

func TestDelivery_InAppReachesTheFeed(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"subject":"Hi","body":"Hello {{ payload.name }} ({{ subscriber.firstName }})"}}]}`)

	tx := apptest.Trigger(t, srv, `{"name":"welcome","to":{"subscriberId":"ada","firstName":"Ada"},"payload":{"name":"Bea"}}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	var details []string
	for _, d := range n.Jobs[1].ExecutionDetails {
		details = append(details, d.Detail)
	}
	is.Equal(details, []string{"Step queued", "Message created", "Message sent"}) // the in-app step's details, in order

	var feed struct {
		Data []struct {
			Content        string `json:"content"`
			TransactionID  string `json:"transactionId"`
			NotificationID string `json:"_notificationId"`
			Read           bool   `json:"read"`
		} `json:"data"`
	}
	res := srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	is.Equal(res.Status, 200) // the trigger created the subscriber and its feed
	res.Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                       // one message
	is.Equal(feed.Data[0].Content, "Hello Bea (Ada)") // rendered with payload and subscriber
	is.Equal(feed.Data[0].TransactionID, tx)          // of this trigger
	is.Equal(feed.Data[0].NotificationID, n.ID)       // and this notification

	one := srv.Dev.Do(t, "GET", "/v1/notifications/"+n.ID, "")
	is.Equal(one.Status, 200) // the single event reads back
	var single struct {
		Subscriber struct {
			SubscriberID string `json:"subscriberId"`
			FirstName    string `json:"firstName"`
		} `json:"subscriber"`
		Template struct {
			Name string `json:"name"`
		} `json:"template"`
	}
	one.Decode(t, &single)
	is.Equal(single.Subscriber.SubscriberID, "ada") // embedded subscriber
	is.Equal(single.Subscriber.FirstName, "Ada")    // read from the subscribers domain
	is.Equal(single.Template.Name, "Welcome")       // and the workflow summary
}

// A first in-app step is run by the trigger itself: its message is in the
// feed when the trigger is answered, even with no worker running, and the
// steps after it are queued for the worker as usual.
func TestDelivery_TriggerRunsAFirstInAppStep(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	srv.Stop()
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hello {{ payload.name }}"}},
		{"name":"Later","type":"delay","controlValues":{"type":"regular","amount":1,"unit":"hours"}}]}`)

	tx := apptest.Trigger(t, srv, `{"name":"welcome","to":"ada","payload":{"name":"Bea"}}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "delay:queued")
	var details []string
	for _, d := range n.Jobs[1].ExecutionDetails {
		details = append(details, d.Detail)
	}
	is.Equal(details, []string{"Step queued", "Message created", "Message sent"}) // the worker's sequence
	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                 // delivered with no worker running
	is.Equal(feed.Data[0].Content, "Hello Bea") // rendered as the worker renders
}

// A step's templates may take messaging's render limit, a second, and a
// trigger for many recipients ran each first in-app step itself: a template
// that spends that second held a trigger for 100 recipients, or a bulk of
// 100 triggers, for minutes. The trigger now runs first steps for a second
// in all and leaves the rest to the worker, which is stopped here so that
// every state below is the trigger's own.
func TestDelivery_SlowTemplatesDoNotHoldTheTrigger(t *testing.T) {
	slow := `{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..18) %}{% assign s = s | append: s %}{% endfor %}` +
		`{% for i in (1..100000) %}{% assign y = s | upcase %}{% endfor %}`
	setup := func(t *testing.T) *apptest.Server {
		srv := apptest.NewServer(t)
		srv.Stop()
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Slow","workflowId":"slow","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"body":"`+slow+`"}}]}`)
		return srv
	}
	// firstSteps reads the in-app job of each of the notifications by
	// subscriberId: its status, and its last detail.
	firstSteps := func(t *testing.T, srv *apptest.Server, query string) map[string]string {
		var out struct {
			Data []struct {
				Subscriber struct {
					SubscriberID string `json:"subscriberId"`
				} `json:"subscriber"`
				apptest.Notification
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/notifications?"+query, "").Decode(t, &out)
		got := map[string]string{}
		for _, n := range out.Data {
			job := n.Jobs[1]
			got[n.Subscriber.SubscriberID] = job.Status + ": " + job.ExecutionDetails[len(job.ExecutionDetails)-1].Detail
		}
		return got
	}
	// The time limit is the one render failure tried again later
	// (TestDelivery_SlowRenderIsRetried): the first recipient's step is
	// queued after its first attempt, the rest before theirs.
	retried := func(state string) string {
		if strings.HasPrefix(state, "queued: Attempt 1 of 3 failed; retrying at ") {
			return "retried"
		}
		return state
	}

	t.Run("Recipients", func(t *testing.T) {
		is := is.New(t)
		srv := setup(t)
		tx := apptest.Trigger(t, srv, `{"name":"slow","to":["ada","bob","cy"]}`)
		got := firstSteps(t, srv, "transactionId="+tx)
		got["ada"] = retried(got["ada"])
		is.Equal(got, map[string]string{
			"ada": "retried",             // run by the trigger, out of time
			"bob": "queued: Step queued", // left to the worker
			"cy":  "queued: Step queued",
		})
	})
	t.Run("Bulk", func(t *testing.T) {
		is := is.New(t)
		srv := setup(t)
		res := srv.Dev.Do(t, "POST", "/v1/events/trigger/bulk",
			`{"events":[{"name":"slow","to":"ada"},{"name":"slow","to":"bob"}]}`)
		is.Equal(res.Status, http.StatusCreated)
		got := firstSteps(t, srv, "channels=in_app")
		got["ada"] = retried(got["ada"])
		is.Equal(got, map[string]string{
			"ada": "retried",             // the first event's, run by the request
			"bob": "queued: Step queued", // the second's, left to the worker
		})
	})
}

// A render cut off by the time limit may be the machine's want of CPU, not
// the template's fault, so the step is tried again after the backoff as a
// provider's error is, and fails only when every attempt ran out of time.
// A template failing for a reason of its own fails at its first attempt.
func TestDelivery_SlowRenderIsRetried(t *testing.T) {
	slow := `{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..18) %}{% assign s = s | append: s %}{% endfor %}` +
		`{% for i in (1..100000) %}{% assign y = s | upcase %}{% endfor %}`
	tooSlow := "Message content could not be generated: body: template " +
		`"{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..18) %}{% assign s = s | appen…": rendering took longer than 1s`
	details := func(t *testing.T, srv *apptest.Server, tx string) []string {
		var out []string
		for _, d := range apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:failed").Jobs[1].ExecutionDetails {
			out = append(out, d.Status+": "+d.Detail)
		}
		return out
	}

	t.Run("OutOfTime", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Slow","workflowId":"slow","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"body":"`+slow+`"}}]}`)
		tx := apptest.Trigger(t, srv, `{"name":"slow","to":"ada"}`)
		for attempt := 1; attempt < 3; attempt++ {
			apptest.WaitFailures(t, srv, tx, 1, attempt)
			srv.App.Clock.Advance(time.Duration(10<<attempt) * time.Second) // past the backoff
		}
		got := details(t, srv, tx)
		is.Equal(len(got), 7) // queued, then two details for each of three attempts
		for i, want := range []string{"Failed: " + tooSlow, "Pending: Attempt 1 of 3 failed; retrying at ",
			"Failed: " + tooSlow, "Pending: Attempt 2 of 3 failed; retrying at ",
			"Failed: " + tooSlow, "Failed: Step failed after 3 attempts"} {
			is.True(strings.HasPrefix(got[i+1], want)) // each attempt's outcome, in turn
		}
	})
	t.Run("OwnFault", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Loops","workflowId":"loops","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"body":"{% for i in (1..200000) %}x{% endfor %}"}}]}`)
		tx := apptest.Trigger(t, srv, `{"name":"loops","to":"ada"}`)
		got := details(t, srv, tx)
		is.Equal(len(got), 2)                                                                                // queued, then failed at once
		is.True(strings.HasPrefix(got[1], "Failed: Message content could not be generated: body: template")) // why
		is.True(strings.HasSuffix(got[1], "loops ran more than 100000 iterations"))                          // its own limit
	})
}

// Messaging keeps each subscriber's decoded template variables while their
// document is unchanged; a change to the subscriber shows in the very next
// message.
func TestDelivery_RendersTheSubscriberAsItIsNow(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi {{ subscriber.firstName }} {{ payload.n }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada"}`)

	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":1}}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":2}}`)
	res := srv.Dev.Do(t, "PUT", "/v1/subscribers/ada", `{"firstName":"Augusta"}`)
	is.Equal(res.Status, 200) // renamed
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":3}}`)

	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	var got []string
	for _, m := range feed.Data {
		got = append(got, m.Content)
	}
	is.Equal(got, []string{"Hi Augusta 3", "Hi Ada 2", "Hi Ada 1"}) // newest first, each as the subscriber was
}

// A trigger that names its recipient by an object the subscriber already
// matches writes no subscriber, as the platform skips that update; one that
// differs is written, and its message shows the new value.
func TestDelivery_UnchangedRecipientObjectIsNotWritten(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi {{ subscriber.firstName }}")
	version := func() string {
		var s struct {
			Version   json.RawMessage `json:"__v"`
			UpdatedAt string          `json:"updatedAt"`
		}
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &s)
		return string(s.Version) + " " + s.UpdatedAt
	}
	apptest.Trigger(t, srv, `{"name":"hello","to":{"subscriberId":"ada","firstName":"Ada"}}`) // creates ada
	created := version()
	apptest.Trigger(t, srv, `{"name":"hello","to":{"subscriberId":"ada","firstName":"Ada"}}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":[{"subscriberId":"ada","firstName":"Ada"}]}`)
	is.Equal(version(), created) // neither trigger rewrote ada
	apptest.Trigger(t, srv, `{"name":"hello","to":{"subscriberId":"ada","firstName":"Augusta"}}`)
	is.True(version() != created) // a changed field is written

	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 4)                  // every trigger delivered
	is.Equal(feed.Data[0].Content, "Hi Augusta") // rendered with the change
}

// An actor that is a subscriber shows in the feed with its avatar, as the
// reference platform fills actor.data, whether the trigger named it by id or
// by an object it upserts.
func TestDelivery_ActorCarriesItsAvatar(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","avatar":"https://img.example/ada.png"}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"bob"}`)
	for _, tc := range []struct{ name, actor, want string }{
		{"ById", `"ada"`, `{"type":"user","data":"https://img.example/ada.png"}`},
		{"ByObject", `{"subscriberId":"cy","avatar":"https://img.example/cy.png"}`, `{"type":"user","data":"https://img.example/cy.png"}`},
		{"WithoutAvatar", `"bob"`, `{"type":"user","data":null}`},
		{"None", `null`, `{"type":"none","data":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			apptest.Trigger(t, srv, `{"name":"hello","to":"dee","actor":`+tc.actor+`}`)
			var feed struct {
				Data []struct {
					Actor json.RawMessage `json:"actor"`
				} `json:"data"`
			}
			srv.Dev.Do(t, "GET", "/v1/subscribers/dee/notifications/feed?limit=1", "").Decode(t, &feed)
			is.Equal(string(feed.Data[0].Actor), tc.want) // the actor as an inbox shows it
		})
	}
	res := srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello","to":"dee","actor":" "}`)
	is.New(t).Equal(res.Status, 422) // a blank actor names no subscriber
}

// A template reads the trigger's actor as actor.*: the subscriber it names,
// by id or by an object it upserts, with the fields a subscriber has;
// without an actor, actor.* renders empty.
func TestDelivery_ActorInTemplates(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Liked","workflowId":"liked","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ actor.firstName }} ({{ actor.subscriberId }}{{ actor.data.team }}) liked it"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","data":{"team":", ops"}}`)
	for _, tc := range []struct{ name, actor, want string }{
		{"ById", `"ada"`, "Ada (ada, ops) liked it"},
		{"ByObject", `{"subscriberId":"cy","firstName":"Cy"}`, "Cy (cy) liked it"},
		{"None", `null`, " () liked it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			tx := apptest.Trigger(t, srv, `{"name":"liked","to":"dee","actor":`+tc.actor+`}`)
			apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
			var feed struct {
				Data []struct {
					Content string `json:"content"`
				} `json:"data"`
			}
			srv.Dev.Do(t, "GET", "/v1/subscribers/dee/notifications/feed?limit=1", "").Decode(t, &feed)
			is.Equal(feed.Data[0].Content, tc.want) // the actor's fields rendered
		})
	}
}

// A trigger refused for one subscriber it names changes none of the others:
// every subscriber is checked before any is created or updated.
func TestDelivery_RefusedTriggerChangesNoSubscriber(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada"}`)

	res := srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello",
		"actor":{"subscriberId":"boss","firstName":"Bo"},
		"to":["newcomer",{"subscriberId":"ada","firstName":"Clobbered"},{"subscriberId":"bad","email":5}]}`)
	is.Equal(res.Status, 422) // the wrong type refuses the trigger
	var body struct {
		Errors map[string]struct {
			Value any `json:"value"`
		} `json:"errors"`
	}
	res.Decode(t, &body)
	e, ok := body.Errors["to.2.email"]
	is.True(ok)                   // named by its path in the request
	is.Equal(e.Value, float64(5)) // with the value sent

	for _, id := range []string{"newcomer", "boss", "bad"} {
		is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/"+id, "").Status, 404) // not created
	}
	got := srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "")
	is.True(strings.Contains(string(got.Body), `"firstName":"Ada"`)) // not updated
}

// A subscriber a trigger names twice, as its actor and as a recipient, is
// the same subscriber to both: what one entry updates, the other sees.
func TestDelivery_ActorAndRecipientAreOneSubscriber(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi {{ subscriber.firstName }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Old"}`)
	var feed struct {
		Data []struct {
			Content string          `json:"content"`
			Actor   json.RawMessage `json:"actor"`
		} `json:"data"`
	}
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","actor":{"subscriberId":"ada","firstName":"New"}}`)
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=1", "").Decode(t, &feed)
	is.Equal(feed.Data[0].Content, "Hi New") // the recipient as the actor updated it

	apptest.Trigger(t, srv, `{"name":"hello","to":{"subscriberId":"ada","avatar":"https://img.example/a.png"},"actor":"ada"}`)
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?limit=1", "").Decode(t, &feed)
	is.Equal(string(feed.Data[0].Actor), `{"type":"user","data":"https://img.example/a.png"}`) // the actor as the recipient updated it
}

// A broadcast refused for its reused transactionId changes nothing: not
// its actor, not the workflow's lastTriggeredAt.
func TestDelivery_RefusedBroadcastChangesNothing(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","transactionId":"used"}`)
	lastTriggered := func() string {
		var wf struct {
			LastTriggeredAt string `json:"lastTriggeredAt"`
		}
		srv.Dev.Do(t, "GET", "/v2/workflows/hello", "").Decode(t, &wf)
		return wf.LastTriggeredAt
	}
	before := lastTriggered()
	srv.App.Clock.Advance(5 * time.Second)
	for _, actor := range []string{`{"subscriberId":"ghost","firstName":"Created"}`, `"ghost"`} {
		res := srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"hello","transactionId":"used","actor":`+actor+`}`)
		is.Equal(res.Status, 409)                                               // the transactionId is taken
		is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/ghost", "").Status, 404) // the actor was not created
	}
	is.Equal(lastTriggered(), before) // nor the workflow marked triggered
}

// A workflow's lastTriggeredAt says when it was last triggered, to the
// second: a burst of triggers writes it once.
func TestDelivery_LastTriggeredAt(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	last := func() any {
		var wf struct {
			LastTriggeredAt any `json:"lastTriggeredAt"`
		}
		srv.Dev.Do(t, "GET", "/v2/workflows/hello", "").Decode(t, &wf)
		return wf.LastTriggeredAt
	}
	is.Equal(last(), nil) // never triggered

	first := sqldb.FormatTime(srv.App.Clock.Now())
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)
	is.Equal(last(), first) // the trigger's time
	srv.App.Clock.Advance(500 * time.Millisecond)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)
	is.Equal(last(), first) // within the second: not written again
	srv.App.Clock.Advance(time.Second)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)
	is.Equal(last(), sqldb.FormatTime(srv.App.Clock.Now())) // later: written
}

// A feed item embeds its subscriber as the subscriber is at the time of
// reading, not at delivery: a rename shows in the very next feed read, even
// right after a read of the old name, and a deleted subscriber has no feed.
func TestDelivery_FeedEmbedsTheSubscriberAsItIsNow(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada"}`)

	type feedPage struct {
		Data []struct {
			Subscriber map[string]any `json:"subscriber"`
		} `json:"data"`
	}
	readSubscriber := func() map[string]any {
		var feed feedPage
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
		is.Equal(len(feed.Data), 1)
		return feed.Data[0].Subscriber
	}
	sub := readSubscriber()
	is.Equal(sub["firstName"], "Ada")
	is.Equal(sub["subscriberId"], "ada")
	is.Equal(sub["email"], nil) // the summary names the subscriber; it is not the whole document

	res := srv.Dev.Do(t, "PUT", "/v1/subscribers/ada", `{"firstName":"Augusta","lastName":"King","avatar":"https://example.com/a.png"}`)
	is.Equal(res.Status, 200)
	sub = readSubscriber()
	is.Equal(sub["firstName"], "Augusta") // renamed
	is.Equal(sub["lastName"], "King")
	is.Equal(sub["avatar"], "https://example.com/a.png")

	res = srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada", "")
	is.Equal(res.Status, 200)
	res = srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	is.Equal(res.Status, 404) // gone
}

func TestDelivery_ChatWebhook(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	hook := apptest.NewChatHook(t, http.StatusOK)
	fallback := apptest.NewChatHook(t, http.StatusOK) // the integration's own URL, used only when a subscriber has none
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
		"credentials":{"webhookUrl":"`+fallback.URL+`"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi {{ payload.name }}"}}]}`)
	apptest.SetUpChat(t, srv, "bob", hook.URL+"/chat")

	tx := apptest.Trigger(t, srv, `{"name":"ping","to":"bob","payload":{"name":"Bea"}}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:completed")
	is.Equal(n.Jobs[1].ProviderID, "chat-webhook") // the provider messaging used
	got := hook.Received()
	is.Equal(len(got), 1)                 // posted once
	is.Equal(got[0]["content"], "Hi Bea") // the rendered body
	is.Equal(len(fallback.Received()), 0) // to the subscriber's webhook, not the integration's
}

func TestDelivery_FailingWebhookRetriesThenFails(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	broken := apptest.NewChatHook(t, http.StatusServiceUnavailable)
	fine := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
		"credentials":{"webhookUrl":"`+fine.URL+`"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi"}},{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	apptest.SetUpChat(t, srv, "bad", broken.URL)
	apptest.SetUpChat(t, srv, "good", fine.URL)

	bad := apptest.Trigger(t, srv, `{"name":"ping","to":"bad"}`)
	apptest.WaitJobs(t, srv, bad, "trigger:completed", "chat:queued", "in_app:pending")
	good := apptest.Trigger(t, srv, `{"name":"ping","to":"good"}`)
	apptest.WaitJobs(t, srv, good, "trigger:completed", "chat:completed", "in_app:completed") // not held up by the failing one

	// Each retry is scheduled from the clock when the attempt is recorded, so
	// the clock moves only once the attempt is recorded and the job queued.
	apptest.WaitFailures(t, srv, bad, 1, 1)
	srv.App.Clock.Advance(time.Minute) // past the first backoff
	apptest.WaitFailures(t, srv, bad, 1, 2)
	is.Equal(len(broken.Received()), 2)
	srv.App.Clock.Advance(time.Minute) // past the second
	n := apptest.WaitJobs(t, srv, bad, "trigger:completed", "chat:failed", "in_app:canceled")
	is.True(n.Failures(1) >= 3)         // every attempt recorded as Failed
	is.Equal(len(broken.Received()), 3) // three tries, no more
}

func TestDelivery_DigestListsEveryEvent(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Digest","workflowId":"digest","active":true,"steps":[
		{"name":"Collect","stepId":"collect","type":"digest","controlValues":{"type":"regular","amount":10,"unit":"minutes"}},
		{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"{{ steps.collect.eventCount }} events: {% for e in steps.collect.events %}{{ e.payload.n }} {% endfor %}"}}]}`)
	first := apptest.Trigger(t, srv, `{"name":"digest","to":"ada","payload":{"n":1}}`)
	apptest.WaitJobs(t, srv, first, "trigger:completed", "digest:delayed", "in_app:pending")
	for _, n := range []string{"2", "3"} {
		tx := apptest.Trigger(t, srv, `{"name":"digest","to":"ada","payload":{"n":`+n+`}}`)
		apptest.WaitJobs(t, srv, tx, "trigger:completed", "digest:merged", "in_app:skipped")
	}
	srv.App.Clock.Advance(11 * time.Minute)
	apptest.WaitJobs(t, srv, first, "trigger:completed", "digest:completed", "in_app:completed")

	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                                          // one message for the three events
	is.Equal(strings.TrimSpace(feed.Data[0].Content), "3 events: 1 2 3") // listing each, in order
}

// An audit found that canceling an event merged into a waiting digest
// answered false and the digest still delivered it.
func TestDelivery_CancelMergedEventLeavesTheDigest(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Digest","workflowId":"digest","active":true,"steps":[
		{"name":"Collect","stepId":"dg","type":"digest","controlValues":{"type":"regular","amount":3,"unit":"seconds"}},
		{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"{{steps.dg.eventCount}} events: {% for e in steps.dg.events %}{{e.payload.n}},{% endfor %}"}}]}`)
	apptest.Trigger(t, srv, `{"name":"digest","to":"ada","payload":{"n":1},"transactionId":"a"}`)
	apptest.WaitJobs(t, srv, "a", "trigger:completed", "digest:delayed", "in_app:pending")
	apptest.Trigger(t, srv, `{"name":"digest","to":"ada","payload":{"n":2},"transactionId":"b"}`)
	apptest.WaitJobs(t, srv, "b", "trigger:completed", "digest:merged", "in_app:skipped")

	res := srv.Dev.Do(t, "DELETE", "/v1/events/trigger/b", "")
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // the merged event is canceled
	apptest.WaitJobs(t, srv, "b", "trigger:completed", "digest:canceled", "in_app:canceled")
	srv.App.Clock.Advance(4 * time.Second)
	apptest.WaitJobs(t, srv, "a", "trigger:completed", "digest:completed", "in_app:completed")

	var feed struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
	is.Equal(len(feed.Data), 1)                                       // one digest message
	is.Equal(strings.TrimSpace(feed.Data[0].Content), "1 events: 1,") // without the canceled event
}

// The job of a first in-app step, which the trigger runs itself and records
// in its own transaction, reads exactly as one the worker ran and settled:
// the same fields and values, and the same execution details, save ids,
// times and what names the step itself.
func TestDelivery_FirstInAppJobReadsAsTheWorkersOwn(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Twice","workflowId":"twice","active":true,"steps":[
		{"name":"First","stepId":"same","type":"in_app","controlValues":{"body":"Hi {{ payload.n }}"}},
		{"name":"Second","stepId":"same-2","type":"in_app","controlValues":{"body":"Hi {{ payload.n }}"}}]}`)
	tx := apptest.Trigger(t, srv, `{"name":"twice","to":"ada","payload":{"n":1}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "in_app:completed")

	var out struct {
		Data []struct {
			Jobs []map[string]any `json:"jobs"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications?transactionId="+tx, "").Decode(t, &out)
	is.Equal(len(out.Data), 1) // one notification
	inlineRow, workerRow := jobQueueState(t, srv, out.Data[0].Jobs[1]["_id"]), jobQueueState(t, srv, out.Data[0].Jobs[2]["_id"])
	is.Equal(inlineRow, workerRow) // the same state in the queue: done, unleased, not due
	inline, worker := comparableJob(out.Data[0].Jobs[1]), comparableJob(out.Data[0].Jobs[2])
	a, _ := json.Marshal(inline)
	b, _ := json.Marshal(worker)
	is.Equal(string(a), string(b)) // the trigger's record is the worker's
}

// jobQueueState is what the queue keeps of a job beside its API fields.
func jobQueueState(t *testing.T, srv *apptest.Server, id any) string {
	t.Helper()
	var status, stage, groupKey, merged, owner, until string
	var digest, runAt sql.NullString
	var attempts int
	err := srv.App.DB.QueryRowContext(context.Background(), `SELECT status, stage, digest, group_key, merged_digest_id, run_at,
		lease_owner, lease_until, attempts FROM jobs WHERE id = ?`, id).Scan(&status, &stage, &digest, &groupKey, &merged, &runAt,
		&owner, &until, &attempts)
	if err != nil {
		t.Fatalf("read job %v: %v", id, err)
	}
	orNull := func(s sql.NullString) any {
		if s.Valid {
			return s.String
		}
		return nil
	}
	// As SQLite's json_array would write them, read on either database.
	b, _ := json.Marshal([]any{status, stage, orNull(digest), groupKey, merged, orNull(runAt), owner, until, attempts})
	return string(b)
}

// comparableJob drops from a job what differs between two runs of equal
// steps: ids, times, and the step's own name and position.
func comparableJob(j map[string]any) map[string]any {
	for _, k := range []string{"_id", "_parentId", "createdAt", "updatedAt", "step", "stepId", "position"} {
		delete(j, k)
	}
	details, _ := j["executionDetails"].([]any)
	for _, d := range details {
		for _, k := range []string{"_id", "_jobId", "createdAt", "updatedAt"} {
			delete(d.(map[string]any), k)
		}
	}
	return j
}

// A first in-app step that the trigger runs itself settles the chain as the
// worker would: skipped, it releases the next step; failed, it cancels the
// steps after it, each with the worker's details. The worker is stopped, so
// every state below is the trigger's own write.
func TestDelivery_FirstInAppStepSettlesTheChain(t *testing.T) {
	steps := `{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hello"}},
		{"name":"Later","type":"delay","controlValues":{"type":"regular","amount":1,"unit":"hours"}}]}`
	t.Run("Skipped", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		srv.Stop()
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Skip","workflowId":"skip","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi","skip":{"==":[1,1]}}},`+steps)

		tx := apptest.Trigger(t, srv, `{"name":"skip","to":"ada"}`)
		n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:skipped", "email:queued", "delay:pending")
		is.Equal(jobDetails(n, 1), []string{"Step queued", "Step was skipped based on steps conditions"}) // the worker's details
		is.Equal(jobDetails(n, 2), []string{"Step queued"})                                               // released, not yet run
	})
	t.Run("Failed", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		srv.Stop()
		var list []struct {
			ID      string `json:"_id"`
			Channel string `json:"channel"`
		}
		srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &list)
		for _, in := range list {
			if in.Channel == "in_app" {
				is.Equal(srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"active":false}`).Status, 200) // no in-app integration left
			}
		}
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Fail","workflowId":"fail","active":true,"steps":[
			{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"Hi"}},`+steps)

		tx := apptest.Trigger(t, srv, `{"name":"fail","to":"ada"}`)
		n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:failed", "email:canceled", "delay:canceled")
		is.Equal(jobDetails(n, 1), []string{"Step queued", "Subscriber does not have an active integration"}) // the failure
		canceled := []string{"Step queued", `Step canceled because step "inbox" failed`}
		is.Equal(jobDetails(n, 2), canceled) // every step after it canceled…
		is.Equal(jobDetails(n, 3), canceled) // …with the reason

		state := jobQueueState(t, srv, n.Jobs[3].ID)
		is.Equal(state, `["canceled","",null,"","",null,"","",0]`) // not due, never run
	})
}

// jobDetails lists the details of the notification's i-th job, in order.
func jobDetails(n apptest.Notification, i int) []string {
	var out []string
	for _, d := range n.Jobs[i].ExecutionDetails {
		out = append(out, d.Detail)
	}
	return out
}

// SQLite's JSON functions refuse documents nested past 1,000 levels. A
// payload that deep was accepted, and every feed request filtering on
// payloads for its subscriber then failed with a 500. Requests are now held
// to platform.MaxJSONDepth, far inside what a stored payload may reach.
func TestDelivery_DeepPayloadsAndThePayloadFilter(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Deep","workflowId":"deep","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"deep"}}]}`)
	deep := func(levels int) string { // a payload nesting objects levels deep
		return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
	}
	body := func(levels int) string { return `{"name":"deep","to":"ada","payload":` + deep(levels) + `}` }

	apptest.Trigger(t, srv, body(platform.MaxJSONDepth-1)) // as deep as a request may nest
	res := srv.Dev.Do(t, "POST", "/v1/events/trigger", body(1000))
	is.Equal(res.Status, http.StatusBadRequest) // deeper is refused

	filter := base64.StdEncoding.EncodeToString([]byte(`{"a":{"a":{"b":1}}}`))
	res = srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?payload="+filter, "")
	is.Equal(res.Status, http.StatusOK) // the filter reads the stored deep payload
	res = srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	var feed struct {
		TotalCount int `json:"totalCount"`
	}
	res.Decode(t, &feed)
	is.Equal(feed.TotalCount, 1) // only the accepted trigger delivered
}

// GET /v1/notifications resolves subscriberIds, emails and search to the
// subscribers they name now, any of them matching, as the platform does;
// when none matches, the answer is an empty page 0.
func TestDelivery_NotificationsBySubscriber(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	apptest.Trigger(t, srv, `{"name":"hello","to":[{"subscriberId":"ada","email":"ada@old.example"},
		{"subscriberId":"bob","email":"Bob@Example.org"},"cy"]}`)
	is.Equal(srv.Dev.Do(t, "PUT", "/v1/subscribers/ada", `{"email":"ada@new.example"}`).Status, 200)

	list := func(query string) (subscribers []string, page int) {
		var out struct {
			Page int `json:"page"`
			Data []struct {
				Subscriber struct {
					SubscriberID string `json:"subscriberId"`
				} `json:"subscriber"`
			} `json:"data"`
		}
		res := srv.Dev.Do(t, "GET", "/v1/notifications?"+query, "")
		is.Equal(res.Status, 200) // listed
		res.Decode(t, &out)
		subscribers = []string{}
		for _, n := range out.Data {
			subscribers = append(subscribers, n.Subscriber.SubscriberID)
		}
		slices.Sort(subscribers)
		return subscribers, out.Page
	}
	got, _ := list("subscriberIds=cy")
	is.Equal(got, []string{"cy"})
	got, _ = list("emails=ada@new.example")
	is.Equal(got, []string{"ada"}) // by the address the subscriber has now
	got, page := list("emails=ada@old.example&page=2")
	is.Equal(got, []string{}) // not by the one it had
	is.Equal(page, 0)         // and no match is page 0
	got, _ = list("emails=ada@new.example&subscriberIds=cy")
	is.Equal(got, []string{"ada", "cy"}) // either filter matches
	got, _ = list("search=example.ORG")
	is.Equal(got, []string{"bob"}) // search: part of an email, any case
	got, _ = list("search=cy")
	is.Equal(got, []string{"cy"}) // or a whole subscriberId
	got, _ = list("search=c")
	is.Equal(got, []string{}) // not part of one

	is.Equal(srv.Dev.Do(t, "DELETE", "/v1/subscribers/cy", "").Status, 200)
	is.Equal(srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"cy"}`).Status, 201)
	got, _ = list("subscriberIds=cy")
	is.Equal(got, []string{}) // a new cy does not list the deleted one's
}

package subscribers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// setUpPreferences wires a server with an email integration posting to a
// hook, the workflows "news" (in-app, then email) and "alerts" (the same,
// critical), and the subscribers ada and bob.
func setUpPreferences(t *testing.T) (*apptest.Server, *apptest.ChatHook) {
	t.Helper()
	srv := apptest.NewServer(t)
	mail := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,
		"credentials":{"webhookUrl":"`+mail.URL+`","from":"noreply@example.com"}}`)
	steps := `"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}},
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hi"}}]`
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"News","workflowId":"news","active":true,`+steps+`}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,
		"preferences":{"workflow":{"all":{"enabled":true,"readOnly":true}}},`+steps+`}`)
	for _, id := range []string{"ada", "bob"} {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+id+`","email":"`+id+`@example.com"}`)
	}
	return srv, mail
}

// lastDetail is the last execution detail of the job at index i.
func lastDetail(n apptest.Notification, i int) string {
	d := n.Jobs[i].ExecutionDetails
	return d[len(d)-1].Detail
}

func TestPreferences_SkipAtDelivery(t *testing.T) {
	is := is.New(t)
	srv, mail := setUpPreferences(t)
	res := srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/preferences/news", `{"channel":{"type":"email","enabled":false}}`)
	is.Equal(res.Status, http.StatusOK) // ada turns email off for news
	var upd struct {
		Preference struct {
			Enabled  bool            `json:"enabled"`
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
		Template struct {
			ID       string `json:"_id"`
			Critical bool   `json:"critical"`
		} `json:"template"`
	}
	res.Decode(t, &upd)
	is.Equal(upd.Preference.Channels, map[string]bool{"in_app": true, "email": false}) // the workflow's channels, email off
	is.True(upd.Template.ID != "" && !upd.Template.Critical)                           // the template it applies to

	for _, tc := range []struct {
		name, workflow, subscriber string
		email, detail              string
	}{
		{"OKEmailOffForOneWorkflow", "news", "ada", "email:skipped", "Step filtered by subscriber workflow preferences"},
		{"OKOthersStillGetIt", "news", "bob", "email:completed", ""},
		{"OKCriticalIgnoresIt", "alerts", "ada", "email:completed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := len(mail.Received())
			tx := apptest.Trigger(t, srv, `{"name":"`+tc.workflow+`","to":"`+tc.subscriber+`"}`)
			n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", tc.email)
			if tc.detail != "" {
				is.Equal(lastDetail(n, 2), tc.detail)  // names the preference that skipped it
				is.Equal(len(mail.Received()), before) // no email sent
			} else {
				is.Equal(len(mail.Received()), before+1) // the email went out
			}
		})
	}
	var msgs struct {
		Data []struct {
			Channel string `json:"channel"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?subscriberId=ada&limit=100", "").Decode(t, &msgs)
	var channels []string
	for _, m := range msgs.Data {
		channels = append(channels, m.Channel)
	}
	is.Equal(strings.Count(strings.Join(channels, ","), "email"), 1) // ada's only email is the critical one's
}

// A global change clears that channel from the subscriber's per-workflow
// overrides; an override set afterwards wins over the global one again.
func TestPreferences_GlobalAndOverride(t *testing.T) {
	is := is.New(t)
	srv, _ := setUpPreferences(t)
	type v2Prefs struct {
		Global struct {
			Enabled  bool            `json:"enabled"`
			Channels map[string]bool `json:"channels"`
		} `json:"global"`
		Workflows []struct {
			Enabled   bool            `json:"enabled"`
			Channels  map[string]bool `json:"channels"`
			Overrides []struct {
				Channel string `json:"channel"`
				Source  string `json:"source"`
			} `json:"overrides"`
			Workflow struct {
				Slug       string `json:"slug"`
				Identifier string `json:"identifier"`
				Name       string `json:"name"`
				UpdatedAt  string `json:"updatedAt"`
			} `json:"workflow"`
		} `json:"workflows"`
	}
	patch := func(body string) v2Prefs {
		t.Helper()
		var out v2Prefs
		res := srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada/preferences", body)
		if res.Status != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", body, res.Status, res.Body)
		}
		res.Decode(t, &out)
		return out
	}
	news := func(p v2Prefs) map[string]bool {
		for _, w := range p.Workflows {
			if w.Workflow.Identifier == "news" {
				return w.Channels
			}
		}
		return nil
	}

	p := patch(`{"workflowId":"news","channels":{"email":true,"in_app":false}}`)
	is.Equal(news(p), map[string]bool{"email": true, "in_app": false}) // the override
	is.Equal(len(p.Workflows), 1)                                      // the critical workflow is not listed
	is.True(p.Workflows[0].Workflow.Slug != "" && p.Workflows[0].Workflow.Name == "News")

	p = patch(`{"channels":{"email":false}}`)
	is.Equal(p.Global.Channels, map[string]bool{"email": false, "in_app": true}) // global email off
	is.Equal(news(p), map[string]bool{"email": false, "in_app": false})          // the global write cleared news's email override, not its in_app one
	tx := apptest.Trigger(t, srv, `{"name":"news","to":"ada"}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:skipped", "email:skipped")
	is.Equal(lastDetail(n, 1), "Step filtered by subscriber workflow preferences") // in_app: the override
	is.Equal(lastDetail(n, 2), "Step filtered by subscriber global preferences")   // email: the global

	p = patch(`{"workflowId":"news","channels":{"email":true}}`)
	is.Equal(news(p), map[string]bool{"email": true, "in_app": false}) // an override set after the global wins
	is.Equal(p.Global.Channels["email"], false)                        // and leaves the global as it was
	tx = apptest.Trigger(t, srv, `{"name":"news","to":"ada"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:skipped", "email:completed")

	var v1 []struct {
		Template struct {
			ID       string `json:"_id"`
			Name     string `json:"name"`
			Critical bool   `json:"critical"`
			Triggers []struct {
				Identifier string `json:"identifier"`
			} `json:"triggers"`
		} `json:"template"`
		Preference struct {
			Enabled  bool            `json:"enabled"`
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
		Type string `json:"type"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/preferences", "").Decode(t, &v1)
	is.Equal(len(v1), 1)                                                                 // non-critical workflows only
	is.Equal(v1[0].Template.Triggers[0].Identifier, "news")                              // named by its trigger
	is.Equal(v1[0].Preference.Channels, map[string]bool{"email": true, "in_app": false}) // as v2 resolves them
	is.Equal(v1[0].Type, "SUBSCRIBER_WORKFLOW")                                          // the last document merged
	var global []struct {
		Preference struct {
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada/preferences/global", "").Decode(t, &global)
	is.Equal(global[0].Preference.Channels, map[string]bool{"email": false, "in_app": true}) // the global level

	res := srv.Dev.Do(t, "PATCH", "/v1/subscribers/bob/preferences", `{"preferences":[{"type":"in_app","enabled":false}]}`)
	is.Equal(res.Status, http.StatusOK) // v1 global write
	var bob struct {
		Preference struct {
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
	}
	res.Decode(t, &bob)
	is.Equal(bob.Preference.Channels, map[string]bool{"email": true, "in_app": false}) // bob's global in_app off

	var bulk []struct {
		Level    string          `json:"level"`
		Channels map[string]bool `json:"channels"`
		Workflow struct {
			Identifier string `json:"identifier"`
			Critical   bool   `json:"critical"`
		} `json:"workflow"`
	}
	res = srv.Dev.Do(t, "PATCH", "/v2/subscribers/bob/preferences/bulk", `{"preferences":[{"workflowId":"news","channels":{"sms":false,"in_app":true}}]}`)
	is.Equal(res.Status, http.StatusOK) // bulk write
	res.Decode(t, &bulk)
	is.Equal(bulk[0].Level, "template")                                        // a workflow's level
	is.Equal(bulk[0].Channels, map[string]bool{"email": true, "in_app": true}) // the override beats the global
	is.Equal(bulk[0].Workflow.Identifier, "news")                              // which workflow
}

func TestPreferences_BadInputChangesNothing(t *testing.T) {
	srv, _ := setUpPreferences(t)
	srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada/preferences", `{"workflowId":"news","channels":{"email":false}}`)
	snapshot := func() string {
		return string(srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences?criticality=all", "").Body)
	}
	before := snapshot()
	many := make([]string, 101)
	for i := range many {
		many[i] = `{"workflowId":"news","channels":{"email":true}}`
	}
	for _, tc := range []refused{
		{"ErrUnknownWorkflowV1", "PATCH", "/v1/subscribers/ada/preferences/nope", `{"channel":{"type":"email","enabled":true}}`, 404},
		{"ErrUnknownChannelV1", "PATCH", "/v1/subscribers/ada/preferences/news", `{"channel":{"type":"fax","enabled":true}}`, 422},
		{"ErrMissingEnabledV1", "PATCH", "/v1/subscribers/ada/preferences/news", `{"channel":{"type":"email"}}`, 422},
		{"ErrCriticalV1", "PATCH", "/v1/subscribers/ada/preferences/alerts", `{"channel":{"type":"email","enabled":false}}`, 400},
		{"ErrUnknownChannelGlobalV1", "PATCH", "/v1/subscribers/ada/preferences", `{"preferences":[{"type":"fax","enabled":true}]}`, 422},
		{"ErrUnknownSubscriberV1", "GET", "/v1/subscribers/nobody/preferences", "", 404},
		{"ErrUnknownLevel", "GET", "/v1/subscribers/ada/preferences/weekly", "", 422},
		{"ErrBadFlag", "GET", "/v1/subscribers/ada/preferences?includeInactiveChannels=maybe", "", 400},
		{"ErrUnknownChannelV2", "PATCH", "/v2/subscribers/ada/preferences", `{"channels":{"fax":false}}`, 422},
		{"ErrNotABoolV2", "PATCH", "/v2/subscribers/ada/preferences", `{"channels":{"email":"no"}}`, 422},
		{"ErrUnknownWorkflowV2", "PATCH", "/v2/subscribers/ada/preferences", `{"workflowId":"nope","channels":{"email":true}}`, 404},
		{"ErrCriticalV2", "PATCH", "/v2/subscribers/ada/preferences", `{"workflowId":"alerts","channels":{"email":false}}`, 400},
		{"ErrUnknownSubscriberV2", "PATCH", "/v2/subscribers/nobody/preferences", `{"channels":{"email":false}}`, 404},
		{"ErrBadCriticality", "GET", "/v2/subscribers/ada/preferences?criticality=some", "", 422},
		{"ErrBulkEmpty", "PATCH", "/v2/subscribers/ada/preferences/bulk", `{"preferences":[]}`, 422},
		{"ErrBulkTooMany", "PATCH", "/v2/subscribers/ada/preferences/bulk", `{"preferences":[` + strings.Join(many, ",") + `]}`, 422},
		{"ErrBulkOneUnknown", "PATCH", "/v2/subscribers/ada/preferences/bulk",
			`{"preferences":[{"workflowId":"news","channels":{"email":true}},{"workflowId":"nope","channels":{"email":true}}]}`, 404},
		{"ErrBulkOneCritical", "PATCH", "/v2/subscribers/ada/preferences/bulk",
			`{"preferences":[{"workflowId":"news","channels":{"email":true}},{"workflowId":"alerts","channels":{"email":true}}]}`, 400},
		{"ErrNotJSON", "PATCH", "/v2/subscribers/ada/preferences", `{"channels":`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, srv, snapshot, before) })
	}
}

// refused is a request that bad input must make a 4xx JSON error which
// changes nothing.
type refused struct {
	name, method, path, body string
	status                   int
}

// check sends the request and asserts its error and that snapshot still
// reads before.
func (tc refused) check(t *testing.T, srv *apptest.Server, snapshot func() string, before string) {
	is := is.New(t)
	res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
	is.Equal(res.Status, tc.status) // refused
	var e struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
	}
	is.NoErr(json.Unmarshal(res.Body, &e)) // a JSON error
	is.Equal(e.StatusCode, tc.status)      // that says its status
	is.True(e.Message != "")               // and why
	is.Equal(snapshot(), before)           // nothing changed
}

// An inactive workflow is not among the preferences the v1 and v2 routes
// list, nor are the channels only it has among the global ones, as the
// reference lists them; a write may still name it.
func TestPreferences_ListActiveWorkflowsOnly(t *testing.T) {
	is := is.New(t)
	srv, _ := setUpPreferences(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Paused","workflowId":"paused","active":false,
		"steps":[{"name":"Text","type":"sms","controlValues":{"body":"x"}}]}`)
	type v1Pref struct {
		Template struct {
			Triggers []struct {
				Identifier string `json:"identifier"`
			} `json:"triggers"`
		} `json:"template"`
	}
	identifiers := func(prefs []v1Pref) []string {
		var out []string
		for _, p := range prefs {
			out = append(out, p.Template.Triggers[0].Identifier)
		}
		return out
	}
	for _, path := range []string{"/v1/subscribers/ada/preferences", "/v1/subscribers/ada/preferences/template"} {
		var prefs []v1Pref
		apptest.MustStatus(t, srv.Dev, "GET", path, "", http.StatusOK).Decode(t, &prefs)
		is.Equal(identifiers(prefs), []string{"news"}) // the active, non-critical workflow only (the path's)
	}
	var global []struct {
		Preference struct {
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v1/subscribers/ada/preferences/global", "", http.StatusOK).Decode(t, &global)
	is.Equal(global[0].Preference.Channels, map[string]bool{"in_app": true, "email": true}) // no sms: only the inactive workflow has it

	var v2 struct {
		Global struct {
			Channels map[string]bool `json:"channels"`
		} `json:"global"`
		Workflows []struct {
			Workflow struct {
				Identifier string `json:"identifier"`
			} `json:"workflow"`
		} `json:"workflows"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/ada/preferences?criticality=all", "", http.StatusOK).Decode(t, &v2)
	is.Equal(len(v2.Workflows), 2)                                               // news and alerts, not paused
	is.True(v2.Workflows[0].Workflow.Identifier != "paused")                     // an active one…
	is.True(v2.Workflows[1].Workflow.Identifier != "paused")                     // …and the other
	is.Equal(v2.Global.Channels, map[string]bool{"in_app": true, "email": true}) // the active workflows' channels

	var upd struct {
		Preference struct {
			Channels map[string]bool `json:"channels"`
		} `json:"preference"`
	}
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/subscribers/ada/preferences/paused",
		`{"channel":{"type":"sms","enabled":false}}`, http.StatusOK).Decode(t, &upd)
	is.Equal(upd.Preference.Channels, map[string]bool{"sms": false}) // the inactive workflow's preference is still written and answered
}

func TestPreferences_ContextIsNotAScope(t *testing.T) {
	is := is.New(t)
	srv, _ := setUpPreferences(t)
	res := srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada/preferences",
		`{"workflowId":"news","channels":{"email":false},"context":{"tenant":"acme"}}`)
	is.Equal(res.Status, http.StatusOK) // a write naming a context is accepted
	var got struct {
		Workflows []struct {
			Channels map[string]bool `json:"channels"`
			Workflow struct {
				Identifier string `json:"identifier"`
			} `json:"workflow"`
		} `json:"workflows"`
	}
	srv.Dev.Do(t, "GET", "/v2/subscribers/ada/preferences?contextKeys=tenant:globex", "").Decode(t, &got)
	found := false
	for _, w := range got.Workflows {
		if w.Workflow.Identifier == "news" {
			found = true
			is.Equal(w.Channels["email"], false) // the one set of preferences, whatever the context
		}
	}
	is.True(found) // news is listed
}

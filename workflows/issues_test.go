package workflows_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// stepIssueTypes returns the issue types of step i keyed by control path (or
// "integration.<channel>").
func stepIssueTypes(w wfResponse, i int) map[string][]string {
	out := map[string][]string{}
	if w.Steps[i].Issues == nil {
		return out
	}
	for path, list := range w.Steps[i].Issues.Controls {
		for _, is := range list {
			out[path] = append(out[path], is.IssueType)
		}
	}
	for ch, list := range w.Steps[i].Issues.Integration {
		for _, is := range list {
			out["integration."+ch] = append(out["integration."+ch], is.IssueType)
		}
	}
	return out
}

func TestWorkflow_Issues(t *testing.T) {
	srv, _ := newServer(t, nil)
	for _, tc := range []struct {
		name       string
		schema     string // payloadSchema, "" for none
		steps      string
		step       int
		path       string // "" when the step must have no issues
		issueType  string
		variable   string
		fixedSteps string // the same steps with the problem fixed
	}{
		{name: "MissingEmailSubject", steps: `[{"name":"e","type":"email","controlValues":{"body":"b"}}]`,
			path: "subject", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"e","type":"email","controlValues":{"body":"b","subject":"s"}}]`},
		{name: "MissingEmailBody", steps: `[{"name":"e","type":"email","controlValues":{"subject":"s","body":"  "}}]`,
			path: "body", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"e","type":"email","controlValues":{"body":"b","subject":"s"}}]`},
		{name: "MissingInAppContent", steps: `[{"name":"i","type":"in_app"}]`,
			path: "body", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"i","type":"in_app","controlValues":{"subject":"only a subject"}}]`},
		{name: "MissingDelayUnit", steps: `[{"name":"d","type":"delay","controlValues":{"amount":3}}]`,
			path: "unit", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"d","type":"delay","controlValues":{"amount":3,"unit":"days"}}]`},
		{name: "MissingThrottleUnit", steps: `[{"name":"t","type":"throttle","controlValues":{"amount":1,"threshold":2}}]`,
			path: "unit", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"t","type":"throttle","controlValues":{"amount":1,"unit":"minutes","threshold":2}}]`},
		{name: "UnreadableDelayCron", steps: `[{"name":"d","type":"delay","controlValues":{"type":"timed","cron":"every day"}}]`,
			path: "cron", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"d","type":"delay","controlValues":{"type":"timed","cron":"0 9 * * *"}}]`},
		{name: "DigestCronThatNeverFires", steps: `[{"name":"d","type":"digest","controlValues":{"type":"timed","cron":"0 0 30 2 *"}}]`,
			path: "cron", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"d","type":"digest","controlValues":{"type":"timed","cron":"0 0 28 2 *"}}]`},
		{name: "CronTheParserPanicsOn", steps: `[{"name":"d","type":"delay","controlValues":{"type":"timed","cron":"TZ=UTC"}}]`,
			path: "cron", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"d","type":"delay","controlValues":{"type":"timed","cron":"TZ=UTC 0 9 * * *"}}]`},
		{name: "MissingDigestCron", steps: `[{"name":"d","type":"digest","controlValues":{"type":"timed"}}]`,
			path: "cron", issueType: "MISSING_VALUE",
			fixedSteps: `[{"name":"d","type":"digest","controlValues":{"type":"timed","cron":"0 9 * * *"}}]`},
		{name: "UnknownRoot", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ order.id }}"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "order.id",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.order.id }}"}}]`},
		{name: "UnknownSubscriberField", steps: `[{"name":"s","type":"chat","controlValues":{"body":"{{subscriber.nickname}}"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "subscriber.nickname",
			fixedSteps: `[{"name":"s","type":"chat","controlValues":{"body":"{{subscriber.firstName}} {{subscriber.data.nickname}}"}}]`},
		{name: "UnknownActorField", steps: `[{"name":"s","type":"in_app","controlValues":{"body":"{{actor.nickname}} liked it"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "actor.nickname",
			fixedSteps: `[{"name":"s","type":"in_app","controlValues":{"body":"{{actor.firstName | default: 'Someone'}} ({{actor.subscriberId}}, {{actor.data.team}}) liked it"}}]`},
		{name: "PayloadOutsideSchema", schema: `{"type":"object","properties":{"name":{"type":"string"}}}`,
			steps: `[{"name":"p","type":"push","controlValues":{"subject":"{{payload.nam | upcase}}"}}]`,
			path:  "subject", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "payload.nam",
			fixedSteps: `[{"name":"p","type":"push","controlValues":{"subject":"{{payload.name | upcase}} {{payload.name.size}}"}}]`},
		{name: "NestedRedirect", steps: `[{"name":"i","type":"in_app","controlValues":{"body":"b","redirect":{"url":"{{ link }}"}}}]`,
			path: "redirect.url", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "link",
			fixedSteps: `[{"name":"i","type":"in_app","controlValues":{"body":"b","redirect":{"url":"{{ payload.link }}"}}}]`},
		{name: "DigestEventsBeforeDigest",
			steps: `[{"name":"e","type":"email","controlValues":{"subject":"{{steps.bundle.eventCount}}","body":"b"}},{"name":"Bundle","type":"digest","controlValues":{"amount":1,"unit":"hours"}}]`,
			path:  "subject", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "steps.bundle.eventCount",
			fixedSteps: `[{"name":"Bundle","type":"digest","controlValues":{"amount":1,"unit":"hours"}},{"name":"e","type":"email","controlValues":{"subject":"{{steps.bundle.eventCount}} new","body":"{% for e in steps.bundle.events %}{{ e.payload.title }} {{ forloop.index }}{% endfor %}"}}]`},
		{name: "TagCondition", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{% if secret %}x{% endif %}"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE", variable: "secret",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{% if payload.secret and subscriber.email %}x{% endif %}"}}]`},
		{name: "FilterNumberArg", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | truncate: 'ten' }}"}}]`,
			path: "body", issueType: "INVALID_FILTER_ARG_IN_VARIABLE", variable: "payload.text",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | truncate: 10, '…' }}"}}]`},
		{name: "FilterMissingArg", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | append: }}"}}]`,
			path: "body", issueType: "INVALID_FILTER_ARG_IN_VARIABLE", variable: "payload.text",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | append: '!' }}"}}]`},
		{name: "FilterArity", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | replace: 'a' }}"}}]`,
			path: "body", issueType: "INVALID_FILTER_ARG_IN_VARIABLE", variable: "payload.text",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | replace: 'a', 'b' | default: subscriber.firstName }}"}}]`},
		{name: "UnclosedBlock", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{% if payload.x %} open"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{% if payload.x %} open{% endif %}"}}]`},
		{name: "UnclosedOutput", steps: `[{"name":"s","type":"in_app","controlValues":{"body":"Hi {{ payload.x "}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"s","type":"in_app","controlValues":{"body":"Hi {{ payload.x }}"}}]`},
		{name: "UnknownTag", steps: `[{"name":"s","type":"in_app","controlValues":{"body":"{% foo %}"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"s","type":"in_app","controlValues":{"body":"foo"}}]`},
		{name: "ParserPanics", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{10000000000000000000}}"}}]`,
			path: "body", issueType: "ILLEGAL_VARIABLE_IN_CONTROL_VALUE",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{1000000000000000000}}"}}]`},
		{name: "FilterUnterminated", steps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | prepend: 'oops }}"}}]`,
			path: "body", issueType: "INVALID_FILTER_ARG_IN_VARIABLE", variable: "payload.text",
			fixedSteps: `[{"name":"s","type":"sms","controlValues":{"body":"{{ payload.text | prepend: 'ok' }} {% raw %}{{ not.checked }}{% endraw %}"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			schema := "null"
			if tc.schema != "" {
				schema = tc.schema
			}
			id := strings.ToLower(tc.name)
			body := func(steps string) string {
				return fmt.Sprintf(`{"name":%q,"workflowId":%q,"active":true,"payloadSchema":%s,"steps":%s}`, tc.name, id, schema, steps)
			}
			w := mustCreate(t, srv.Dev, body(tc.steps))
			is.Equal(w.Status, "ERROR") // a workflow with issues is in error
			step := 0
			for i, st := range w.Steps {
				if st.Issues != nil {
					step = i
				}
			}
			got := stepIssueTypes(w, step)
			is.Equal(got[tc.path], []string{tc.issueType}) // the issue is reported at its control
			if tc.variable != "" {
				is.Equal(w.Steps[step].Issues.Controls[tc.path][0].VariableName, tc.variable) // names the variable
			}
			is.True(w.Steps[step].Issues.Controls[tc.path][0].Message != "") // with a message

			res := srv.Dev.Do(t, "GET", "/v2/workflows/"+id, "")
			var read wfResponse
			res.Decode(t, &read)
			is.Equal(read.Status, "ERROR") // issues are computed on read too

			res = srv.Dev.Do(t, "PUT", "/v2/workflows/"+id, body(tc.fixedSteps))
			is.Equal(res.Status, 200) // fixed
			var fixed wfResponse
			res.Decode(t, &fixed)
			for i := range fixed.Steps {
				is.Equal(stepIssueTypes(fixed, i), map[string][]string{}) // no issue left
			}
			is.Equal(fixed.Status, "ACTIVE") // active again
		})
	}
}

func TestWorkflow_MissingIntegration(t *testing.T) {
	is := is.New(t)
	checker := &fakeChecker{active: map[string]bool{"in_app": true}}
	srv, _ := newServer(t, checker)
	w := mustCreate(t, srv.Dev, `{"name":"Mixed","active":true,"steps":[
		{"name":"i","type":"in_app","controlValues":{"body":"b"}},
		{"name":"e","type":"email","controlValues":{"subject":"s","body":"b"}},
		{"name":"d","type":"delay","controlValues":{"amount":1,"unit":"seconds"}}]}`)
	is.Equal(w.Status, "ACTIVE")                                                                      // a missing integration is no ERROR
	is.Equal(stepIssueTypes(w, 0), map[string][]string{})                                             // in_app has an integration
	is.Equal(stepIssueTypes(w, 1), map[string][]string{"integration.email": {"MISSING_INTEGRATION"}}) // email has none
	is.Equal(stepIssueTypes(w, 2), map[string][]string{})                                             // a delay needs none

	checker.set("email", true)
	res := srv.Dev.Do(t, "GET", "/v2/workflows/mixed", "")
	var read wfResponse
	res.Decode(t, &read)
	is.Equal(read.Status, "ACTIVE")                          // the issue disappears with the integration
	is.Equal(stepIssueTypes(read, 1), map[string][]string{}) // no email issue

	res = srv.Dev.Do(t, "PUT", "/v2/workflows/mixed", `{"name":"Mixed","active":false,"steps":[{"name":"i","type":"in_app","controlValues":{"body":"b"}}]}`)
	res.Decode(t, &read)
	is.Equal(read.Status, "INACTIVE") // inactive without issues
}

func TestWorkflow_PayloadSchema(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	w := mustCreate(t, srv.Dev, `{"name":"Typed","validatePayload":true,"payloadSchema":{"type":"object","properties":{
		"name":{"type":"string","default":"Ada"},"count":{"type":"number"},"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}},
		"meta":{"type":"object"}},"required":["name"]},
		"steps":[{"name":"s","type":"sms","controlValues":{"body":"{{payload.items[0].sku}} {{payload.items.first.sku}} {{payload.items.size}} {{payload.meta.any.depth}} {{payload['name']}}"}}]}`)
	is.True(w.ValidatePayload)                                                          // validatePayload kept
	is.True(strings.Contains(string(w.PayloadSchema), `"required":["name"]`))           // schema kept
	is.Equal(string(w.PayloadExample), `{"count":0,"items":[],"meta":{},"name":"Ada"}`) // example from the schema
	is.Equal(stepIssueTypes(w, 0), map[string][]string{})                               // arrays, indexes and open objects resolve
	vars := w.Steps[0].Variables["properties"].(map[string]any)
	is.Equal(vars["payload"].(map[string]any)["required"], []any{"name"}) // payload variables are the schema

	res := srv.Dev.Do(t, "PUT", "/v2/workflows/typed", `{"name":"Typed","payloadSchema":null,"steps":[{"name":"s","type":"sms","controlValues":{"body":"{{payload.whatever.deep}}"}}]}`)
	is.Equal(res.Status, 200) // schema cleared
	var upd wfResponse
	res.Decode(t, &upd)
	is.Equal(string(upd.PayloadSchema), "null")             // no schema
	is.Equal(stepIssueTypes(upd, 0), map[string][]string{}) // any payload variable is allowed without a schema
	is.True(upd.ValidatePayload)                            // absent fields keep their value on update
}

func TestWorkflow_LiquidWithoutIssues(t *testing.T) {
	srv, _ := newServer(t, nil)
	for _, tmpl := range []string{
		`{{ payload.name | default: "there" }}`,
		`{{- payload.x -}} {%- if payload.y -%}y{%- endif -%}`,
		`{{ "literal" | upcase }} {{ 5 | plus: payload.n }} {{ true }}`,
		`{% assign full = subscriber.firstName | append: " " | append: subscriber.lastName %}{{ full | strip }}`,
		`{% capture greeting %}Hi {{ subscriber.firstName }}{% endcapture %}{{ greeting }}`,
		`{{ payload.items | map: 'name' | join: ', ' }} {{ payload.date | date: '%Y-%m-%d' }}`,
		`{{ subscriber.data['key with space'] }} {{ payload.list[0] }} {{ payload.list.size }}`,
		`{% if subscriber.firstName == 'Ada' and payload.n >= 2 or payload.tags contains 'x' %}ok{% elsif payload.z %}{% else %}{% endif %}`,
		`{% for i in (1..3) %}{{ i }}{% endfor %} {% for item in payload.items reversed limit: 2 %}{{ item.name }} {{ forloop.last }}{% endfor %}`,
		`{% case payload.kind %}{% when 'a', 'b' %}A{% else %}B{% endcase %}`,
		`{% comment %}{{ not.a.variable }}{% endcomment %}{% raw %}{{ also | not: }}{% endraw %}`,
		`{{ payload.text | truncate: 10, '...' | replace: 'a', 'b' | slice: 0, 5 | round }}`,
		`plain text with { braces } and }} stray closers`,
		`{{ payload.amount | divided_by: 100.0 | at_least: -1 }}`,
	} {
		t.Run(tmpl, func(t *testing.T) {
			is := is.New(t)
			cv, _ := json.Marshal(map[string]string{"body": tmpl})
			w := mustCreate(t, srv.Dev, `{"name":"ok","steps":[{"name":"s","type":"sms","controlValues":`+string(cv)+`}]}`)
			is.Equal(stepIssueTypes(w, 0), map[string][]string{}) // valid Liquid raises no issue
		})
	}
}

// TestWorkflow_Status follows the reference's computeWorkflowStatus: an
// inactive workflow is INACTIVE whatever its issues, and only control issues
// put an active one in ERROR. A missing integration stays listed on its step
// but does not stop a trigger, so it does not make the workflow ERROR.
func TestWorkflow_Status(t *testing.T) {
	checker := &fakeChecker{active: map[string]bool{"in_app": true}}
	srv, _ := newServer(t, checker)
	const (
		noIntegration = `[{"name":"S","type":"sms","controlValues":{"body":"hi"}}]`
		badControl    = `[{"name":"I","type":"in_app","controlValues":{"body":"{{ nope.x }}"}}]`
		both          = `[{"name":"I","type":"in_app","controlValues":{"body":"{{ nope.x }}"}},{"name":"S","type":"sms","controlValues":{"body":"hi"}}]`
	)
	for _, tc := range []struct {
		name   string
		active bool
		steps  string
		want   string
	}{
		{"OKInactiveMissingIntegration", false, noIntegration, "INACTIVE"},
		{"OKActiveMissingIntegration", true, noIntegration, "ACTIVE"},
		{"OKInactiveControlIssue", false, badControl, "INACTIVE"},
		{"ErrActiveControlIssue", true, badControl, "ERROR"},
		{"ErrActiveControlAndIntegrationIssues", true, both, "ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id := strings.ToLower(tc.name)
			w := mustCreate(t, srv.Dev, fmt.Sprintf(`{"name":%q,"workflowId":%q,"active":%t,"steps":%s}`, tc.name, id, tc.active, tc.steps))
			is.Equal(w.Status, tc.want) // status on create
			last := len(w.Steps) - 1
			if w.Steps[last].Type == "sms" {
				is.Equal(stepIssueTypes(w, last)["integration.sms"], []string{"MISSING_INTEGRATION"}) // integration issue still listed
			}

			var read wfResponse
			srv.Dev.Do(t, "GET", "/v2/workflows/"+id, "").Decode(t, &read)
			is.Equal(read.Status, tc.want) // the same status on read

			var list struct {
				Workflows []wfResponse `json:"workflows"`
			}
			srv.Dev.Do(t, "GET", "/v2/workflows?query="+id, "").Decode(t, &list)
			is.Equal(len(list.Workflows), 1)            // found by its workflowId
			is.Equal(list.Workflows[0].Status, tc.want) // the same status in the list
		})
	}
}

// A block editor's body is a JSON document: its text nodes are templates
// once decoded, so the document as a whole is not parsed as one, where its
// escaped quotes would read as a broken template.
func TestWorkflow_BlockBodyIsNotOneTemplate(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"{{ payload.x | default: \"y\" }}"}]}]}`
	steps, _ := json.Marshal([]any{map[string]any{"name": "e", "type": "email",
		"controlValues": map[string]any{"subject": "s", "editorType": "block", "body": doc}}})
	w := mustCreate(t, srv.Dev, `{"name":"Maily","active":true,"steps":`+string(steps)+`}`)
	is.Equal(stepIssueTypes(w, 0), map[string][]string{}) // no issue
	is.Equal(w.Status, "ACTIVE")                          // and active
}

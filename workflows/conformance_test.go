package workflows_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/workflows"
)

// newConformanceServer wires workflows to the real integrations store, as
// wire.go does, and seeds both environments.
func newConformanceServer(t *testing.T) *platformtest.Server {
	t.Helper()
	return platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		ints, err := integrations.NewStore(app.DB, app.Secret)
		if err != nil {
			t.Fatalf("integrations store: %v", err)
		}
		store := workflows.NewStore(app.DB)
		for _, env := range []platform.Environment{app.Development, app.Production} {
			if err := ints.SeedEnvironment(t.Context(), env); err != nil {
				t.Fatalf("seed integrations: %v", err)
			}
			if err := store.SeedEnvironment(t.Context(), env); err != nil {
				t.Fatalf("seed workflows: %v", err)
			}
		}
		workflows.AddRoutes(mux, store, ints)
	})
}

var (
	origins   = []string{"service-cloud", "service-cloud-v1", "external"}
	stepKinds = []string{"in_app", "email", "sms", "chat", "push", "digest", "trigger", "delay", "throttle", "custom"}
	uiGroups  = strings.Fields("IN_APP EMAIL DIGEST DELAY THROTTLE SMS CHAT PUSH SKIP LAYOUT")
	uiParts   = strings.Fields(`EMAIL_EDITOR_SELECT LAYOUT_SELECT BLOCK_EDITOR EMAIL_BODY TEXT_FULL_LINE
		TEXT_INLINE_LABEL IN_APP_BODY IN_APP_AVATAR IN_APP_PRIMARY_SUBJECT IN_APP_BUTTON_DROPDOWN
		IN_APP_DISABLE_SANITIZATION_SWITCH DISABLE_SANITIZATION_SWITCH URL_TEXT_BOX DIGEST_AMOUNT DIGEST_UNIT
		DIGEST_TYPE DIGEST_KEY DIGEST_CRON DELAY_AMOUNT DELAY_UNIT DELAY_TYPE DELAY_CRON DELAY_DYNAMIC_KEY
		THROTTLE_TYPE THROTTLE_WINDOW THROTTLE_UNIT THROTTLE_DYNAMIC_KEY THROTTLE_THRESHOLD THROTTLE_KEY
		EXTEND_TO_SCHEDULE SMS_BODY CHAT_BODY PUSH_BODY PUSH_SUBJECT QUERY_EDITOR DATA LAYOUT_EMAIL`)
	contentIssues     = strings.Fields("ILLEGAL_VARIABLE_IN_CONTROL_VALUE INVALID_FILTER_ARG_IN_VARIABLE MISSING_VALUE TIER_LIMIT_EXCEEDED")
	integrationIssues = []string{"MISSING_INTEGRATION", "INBOX_NOT_CONNECTED"}
)

// conformWorkflow checks a spec §2.14 workflow and its steps (§2.14.1).
func conformWorkflow(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	wf := conform(t, where, v, []field{
		{name: "name", kind: "string", required: true},
		{name: "description", kind: "string"},
		{name: "tags", kind: "array"},
		{name: "active", kind: "bool"},
		{name: "validatePayload", kind: "bool"},
		{name: "payloadSchema", kind: "object", nullable: true},
		{name: "isTranslationEnabled", kind: "bool"},
		{name: "_id", kind: "id", required: true},
		{name: "workflowId", kind: "string", required: true},
		{name: "slug", kind: "string", required: true},
		{name: "updatedAt", kind: "time", required: true},
		{name: "createdAt", kind: "time", required: true},
		{name: "updatedBy", kind: "object"},
		{name: "lastPublishedBy", kind: "object"},
		{name: "lastPublishedAt", kind: "time", nullable: true},
		{name: "steps", kind: "array", required: true},
		{name: "origin", kind: "string", required: true, enum: origins},
		{name: "preferences", kind: "object", required: true},
		{name: "status", kind: "string", required: true, enum: []string{"ACTIVE", "INACTIVE", "ERROR"}},
		{name: "issues", kind: "object"},
		{name: "lastTriggeredAt", kind: "time", nullable: true},
		{name: "payloadExample", kind: "object", nullable: true},
		{name: "severity", kind: "string", required: true, enum: []string{"high", "medium", "low", "none"}},
	})
	for _, k := range []string{"updatedBy", "lastPublishedBy"} {
		if u, ok := wf[k]; ok {
			conform(t, where+"."+k, u, []field{{name: "_id", kind: "string", required: true},
				{name: "firstName", kind: "string", nullable: true}, {name: "lastName", kind: "string", nullable: true},
				{name: "externalId", kind: "string", nullable: true}})
		}
	}
	prefs := conform(t, where+".preferences", wf["preferences"], []field{
		{name: "default", kind: "object", required: true}, {name: "user", kind: "object", required: true, nullable: true}})
	conform(t, where+".preferences.default", prefs["default"], []field{
		{name: "all", kind: "object", required: true}, {name: "channels", kind: "object", required: true}})
	for _, s := range items(t, where+".steps", wf["steps"]) {
		conformStep(t, where+".steps", s)
	}
	return wf
}

func conformStep(t *testing.T, where string, v any) {
	t.Helper()
	st := conform(t, where, v, []field{
		{name: "controls", kind: "object", required: true},
		{name: "controlValues", kind: "object"},
		{name: "variables", kind: "object", required: true},
		{name: "stepId", kind: "string", required: true},
		{name: "_id", kind: "id", required: true},
		{name: "name", kind: "string", required: true},
		{name: "slug", kind: "string", required: true},
		{name: "workflowId", kind: "string", required: true},
		{name: "workflowDatabaseId", kind: "id", required: true},
		{name: "type", kind: "string", required: true, enum: stepKinds},
		{name: "origin", kind: "string", required: true, enum: origins},
		{name: "issues", kind: "object"},
	})
	controls := conform(t, where+".controls", st["controls"], []field{
		{name: "dataSchema", kind: "object"}, {name: "uiSchema", kind: "object"}, {name: "values", kind: "object", required: true}})
	if ui, ok := controls["uiSchema"]; ok {
		u := conform(t, where+".controls.uiSchema", ui, []field{{name: "group", kind: "string", enum: uiGroups}, {name: "properties", kind: "object"}})
		conformUIProperties(t, where+".controls.uiSchema.properties", u["properties"])
	}
	if issues, ok := st["issues"]; ok {
		is := conform(t, where+".issues", issues, []field{{name: "controls", kind: "object"}, {name: "integration", kind: "object"}})
		for key, enum := range map[string][]string{"controls": contentIssues, "integration": integrationIssues} {
			m, _ := is[key].(map[string]any)
			for path, list := range m {
				for _, issue := range items(t, where+".issues."+key+"."+path, list) {
					conform(t, where+".issues."+key+"."+path, issue, []field{
						{name: "issueType", kind: "string", required: true, enum: enum},
						{name: "variableName", kind: "string"},
						{name: "message", kind: "string", required: true},
					})
				}
			}
		}
	}
}

func conformUIProperties(t *testing.T, where string, v any) {
	t.Helper()
	props, _ := v.(map[string]any)
	for name, p := range props {
		m := conform(t, where+"."+name, p, []field{
			{name: "component", kind: "string", required: true, enum: uiParts},
			{name: "properties", kind: "object"},
		})
		if sub, ok := m["properties"]; ok {
			conformUIProperties(t, where+"."+name+".properties", sub)
		}
	}
}

// summaryFields is spec §2.10.1, with contract §9's never-null strings.
var summaryFields = []field{
	{name: "_id", kind: "id"},
	{name: "name", kind: "string", required: true},
	{name: "description", kind: "string", required: true},
	{name: "active", kind: "bool", required: true},
	{name: "draft", kind: "bool", required: true},
	{name: "critical", kind: "bool", required: true},
	{name: "deleted", kind: "bool", required: true},
	{name: "_organizationId", kind: "id", required: true},
	{name: "_creatorId", kind: "id", required: true},
	{name: "_environmentId", kind: "id", required: true},
	{name: "_notificationGroupId", kind: "id", required: true},
	{name: "deletedAt", kind: "string", required: true},
	{name: "deletedBy", kind: "string", required: true},
	{name: "preferenceSettings", kind: "object", required: true},
	{name: "tags", kind: "array", required: true},
	{name: "steps", kind: "array", required: true},
	{name: "triggers", kind: "array", required: true},
	{name: "notificationGroup", kind: "object"},
	{name: "data", kind: "object"},
	{name: "workflowIntegrationStatus", kind: "object"},
}

// allSteps is a workflow body with one step of every kind.
const allSteps = `"steps":[
	{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi {{ payload.name }}","redirect":{"url":"/x","target":"_blank"}}},
	{"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>{{ payload.name }}</p>"}},
	{"name":"Text","type":"sms","controlValues":{"body":"b"}},
	{"name":"Chat","type":"chat","controlValues":{"body":"b"}},
	{"name":"Push","type":"push","controlValues":{"subject":"s","body":"b"}},
	{"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":1,"unit":"minutes"}},
	{"name":"Bundle","type":"digest","controlValues":{"type":"regular","amount":5,"unit":"minutes","lookBackWindow":{"amount":1,"unit":"minutes"}}},
	{"name":"Timed","type":"digest","controlValues":{"type":"timed","cron":"0 9 * * *"}},
	{"name":"Slow","type":"throttle","controlValues":{"type":"fixed","amount":1,"unit":"hours","threshold":3}},
	{"name":"Code","type":"custom","controlValues":{"anything":true}}]`

func TestConformance_WorkflowResponses(t *testing.T) {
	is := is.New(t)
	srv := newConformanceServer(t)

	res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Everything","workflowId":"everything","tags":["a"],
		"payloadSchema":{"type":"object","properties":{"name":{"type":"string"}}},`+allSteps+`}`)
	is.Equal(res.Status, 201) // create: 201
	wf := conformWorkflow(t, "POST /v2/workflows", decode(t, res))
	is.Equal(wf["status"], "ERROR") // no email, sms, chat or push integration: MISSING_INTEGRATION

	res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Bare","steps":[]}`)
	is.Equal(res.Status, 201) // a workflow without steps
	conformWorkflow(t, "POST /v2/workflows (bare)", decode(t, res))

	res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Broken","steps":[{"name":"x","type":"email","controlValues":{"subject":"{{ nope.x }}","body":"{{ payload.a | nofilter }}"}}]}`)
	is.Equal(res.Status, 201) // a workflow with content issues
	conformWorkflow(t, "POST /v2/workflows (issues)", decode(t, res))

	for _, schema := range []string{`{"type":"string"}`, `{"default":5}`, `{"type":"array"}`, `{"type":"object","default":"x"}`} {
		res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Odd schema","payloadSchema":`+schema+`,"steps":[]}`)
		is.Equal(res.Status, 201) // any JSON Schema object is accepted
		conformWorkflow(t, "POST /v2/workflows payloadSchema "+schema, decode(t, res))
	}

	for _, path := range []string{"/v2/workflows/everything", "/v2/workflows/" + wf["_id"].(string)} {
		res = srv.Dev.Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // read by workflowId or _id
		conformWorkflow(t, "GET "+path, decode(t, res))
	}

	res = srv.Dev.Do(t, "GET", "/v2/workflows?limit=100", "")
	is.Equal(res.Status, 200) // listed
	list := conform(t, "GET /v2/workflows", decode(t, res), []field{
		{name: "workflows", kind: "array", required: true}, {name: "totalCount", kind: "number", required: true}})
	for _, w := range items(t, "workflows", list["workflows"]) {
		conformWorkflow(t, "GET /v2/workflows item", w)
	}
	res = srv.Dev.Do(t, "GET", "/v2/workflows?query=nothing-matches", "")
	is.Equal(res.Status, 200) // an empty list
	list = conform(t, "empty list", decode(t, res), []field{{name: "workflows", kind: "array", required: true}})
	is.Equal(len(items(t, "workflows", list["workflows"])), 0) // [] not null

	res = srv.Dev.Do(t, "PUT", "/v2/workflows/everything", `{"name":"Everything v2","preferences":{"user":{"all":{"enabled":true}}},`+allSteps+`}`)
	is.Equal(res.Status, 200) // update: 200
	conformWorkflow(t, "PUT /v2/workflows/everything", decode(t, res))

	res = srv.Dev.Do(t, "PUT", "/v2/workflows/everything/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, 200) // sync: 200
	synced := conformWorkflow(t, "PUT sync", decode(t, res))
	is.Equal(synced["workflowId"], "everything") // the target's copy

	res = srv.Dev.Do(t, "DELETE", "/v2/workflows/everything", "")
	is.Equal(res.Status, 204)  // delete: 204
	is.Equal(len(res.Body), 0) // no body
}

func TestConformance_WorkflowSummaries(t *testing.T) {
	is := is.New(t)
	var store *workflows.Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		store = workflows.NewStore(app.DB)
		for _, env := range []platform.Environment{app.Development, app.Production} {
			if err := store.SeedEnvironment(t.Context(), env); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
		workflows.AddRoutes(mux, store, nil)
	})
	var ids []string
	for _, body := range []string{`{"name":"All",` + allSteps + `}`, `{"name":"Gone","steps":[]}`} {
		res := srv.Dev.Do(t, "POST", "/v2/workflows", body)
		is.Equal(res.Status, 201) // created
		var wf struct {
			ID         string `json:"_id"`
			WorkflowID string `json:"workflowId"`
		}
		res.Decode(t, &wf)
		ids = append(ids, wf.ID)
		if wf.WorkflowID == "gone" {
			is.Equal(srv.Dev.Do(t, "DELETE", "/v2/workflows/gone", "").Status, 204) // deleted
		}
	}
	res := srv.Dev.Do(t, "PUT", "/v2/workflows/all/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, 200) // synced
	var synced struct {
		ID string `json:"_id"`
	}
	res.Decode(t, &synced)

	check := func(env platform.Environment, ids []string) {
		got, err := store.WorkflowSummariesJSON(t.Context(), env.ID, ids)
		is.NoErr(err)                // summaries read
		is.Equal(len(got), len(ids)) // deleted ones included
		for id, raw := range got {
			var v any
			is.NoErr(json.Unmarshal(raw, &v)) // JSON
			sum := conform(t, "summary "+id, v, summaryFields)
			for _, trig := range items(t, "triggers", sum["triggers"]) {
				conform(t, "summary triggers", trig, []field{
					{name: "type", kind: "string", required: true, enum: []string{"event"}},
					{name: "identifier", kind: "string", required: true},
					{name: "variables", kind: "array", required: true},
					{name: "subscriberVariables", kind: "array"},
				})
			}
			for _, st := range items(t, "steps", sum["steps"]) {
				s := conform(t, "summary step", st, []field{
					{name: "_id", kind: "string"}, {name: "uuid", kind: "string"}, {name: "name", kind: "string"},
					{name: "_templateId", kind: "string"}, {name: "_parentId", kind: "string"},
					{name: "active", kind: "bool"}, {name: "shouldStopOnFail", kind: "bool"},
					{name: "filters", kind: "array"}, {name: "metadata", kind: "object"},
				})
				if md, ok := s["metadata"]; ok {
					conformMetadata(t, "summary step metadata", md)
				}
			}
		}
	}
	check(srv.App.Development, ids)
	check(srv.App.Production, []string{synced.ID}) // a synced copy has a creator and group too
}

// conformMetadata checks the four metadata shapes of spec §2.10.1.
func conformMetadata(t *testing.T, where string, v any) {
	t.Helper()
	units := []string{"seconds", "minutes", "hours", "days", "weeks", "months"}
	md := conform(t, where, v, []field{
		{name: "type", kind: "string", required: true, enum: []string{"regular", "backoff", "timed", "scheduled"}},
		{name: "amount", kind: "number"}, {name: "unit", kind: "string", enum: units},
		{name: "digestKey", kind: "string"}, {name: "backoff", kind: "bool"},
		{name: "backoffAmount", kind: "number"}, {name: "backoffUnit", kind: "string", enum: units},
		{name: "updateMode", kind: "bool"}, {name: "timed", kind: "object"}, {name: "delayPath", kind: "string"},
	})
	_ = md
}

func TestConformance_WorkflowBadInput(t *testing.T) {
	srv := newConformanceServer(t)
	if res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"One","workflowId":"one","steps":[{"name":"a","type":"sms","controlValues":{"body":"x"}}]}`); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"Err unknown workflow", "GET", "/v2/workflows/%F0%9F%98%80", "", 404},
		{"Err unknown id", "GET", "/v2/workflows/5f0000000000000000000000", "", 404},
		{"Err unknown delete", "DELETE", "/v2/workflows/nope", "", 404},
		{"Err sync to a malformed environment", "PUT", "/v2/workflows/one/sync", `{"targetEnvironmentId":"zz"}`, 422},
		{"Err sync to an unknown environment", "PUT", "/v2/workflows/one/sync", `{"targetEnvironmentId":"5f0000000000000000000000"}`, 404},
		{"Err sync of a missing workflow", "PUT", "/v2/workflows/nope/sync", `{"targetEnvironmentId":"5f0000000000000000000000"}`, 404},
		{"Err sync with a null body", "PUT", "/v2/workflows/one/sync", `null`, 422},
		{"Err steps null", "POST", "/v2/workflows", `{"name":"x","steps":null}`, 422},
		{"Err step null", "POST", "/v2/workflows", `{"name":"x","steps":[null]}`, 422},
		{"Err controlValues an array", "POST", "/v2/workflows", `{"name":"x","steps":[{"name":"a","type":"sms","controlValues":[1]}]}`, 422},
		{"Err huge number literal", "POST", "/v2/workflows", `{"name":1e999,"steps":[]}`, 422},
		{"Err payloadSchema a string", "POST", "/v2/workflows", `{"name":"x","payloadSchema":"s","steps":[]}`, 422},
		{"Err bad workflowId", "POST", "/v2/workflows", `{"name":"x","workflowId":"a b","steps":[]}`, 422},
		{"Err workflowId taken", "POST", "/v2/workflows", `{"name":"x","workflowId":"one","steps":[]}`, 409},
		{"Err unknown step type", "POST", "/v2/workflows", `{"name":"x","steps":[{"name":"a","type":"fax"}]}`, 422},
		{"Err preferences channel unknown", "PUT", "/v2/workflows/one", `{"name":"x","steps":[],"preferences":{"user":{"channels":{"fax":{"enabled":true}}}}}`, 422},
		{"Err limit out of range", "GET", "/v2/workflows?limit=0", "", 422},
		{"Err page huge", "GET", "/v2/workflows?page=99999999999999999999", "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.want) // a clear 4xx
			body := conform(t, tc.name, decode(t, res), errorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (contract §9)
			}
		})
	}
}

// errorFields is contract §4's error body.
var errorFields = []field{
	{name: "statusCode", kind: "number", required: true},
	{name: "timestamp", kind: "time", required: true},
	{name: "path", kind: "string", required: true},
	{name: "message", kind: "string", required: true},
}

// field is one property of a response object as the spec types it.
type field struct {
	name     string
	kind     string // string, id, time, bool, number, object, array, any
	required bool
	nullable bool
	enum     []string
}

var timeFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// conform checks obj against fields as a client validating the spec's schema
// would: required keys present, types and nulls as allowed, enums exact,
// timestamps in contract §3's format, ids 24 lowercase hex.
func conform(t *testing.T, where string, obj any, fields []field) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T %v", where, obj, obj)
	}
	for _, f := range fields {
		v, present := m[f.name]
		at := where + "." + f.name
		if !present {
			if f.required {
				t.Errorf("%s: required, missing", at)
			}
			continue
		}
		if v == nil {
			if !f.nullable {
				t.Errorf("%s: null, spec allows no null", at)
			}
			continue
		}
		bad := false
		switch f.kind {
		case "string":
			_, ok := v.(string)
			bad = !ok
		case "id":
			s, ok := v.(string)
			bad = !ok || !isID(s)
		case "time":
			s, ok := v.(string)
			bad = !ok || !timeFormat.MatchString(s)
		case "bool":
			_, ok := v.(bool)
			bad = !ok
		case "number":
			_, ok := v.(float64)
			bad = !ok
		case "object":
			_, ok := v.(map[string]any)
			bad = !ok
		case "array":
			_, ok := v.([]any)
			bad = !ok
		}
		if bad {
			t.Errorf("%s: want %s, got %T %v", at, f.kind, v, v)
			continue
		}
		if f.enum != nil {
			if s, _ := v.(string); !slices.Contains(f.enum, s) {
				t.Errorf("%s: %v is not one of %v", at, v, f.enum)
			}
		}
	}
	return m
}

func isID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decode unmarshals a response body into generic JSON.
func decode(t *testing.T, res *platformtest.Response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatalf("body %s: %v", res.Body, err)
	}
	return v
}

// items returns v as an array, failing when it is not one (null included).
func items(t *testing.T, where string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T %v", where, v, v)
	}
	return a
}

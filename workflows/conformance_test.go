package workflows_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/workflows"
)

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

// conformWorkflow checks a workflow (docs/api.md, "Workflows") and its steps
// (docs/api.md, "Workflow steps").
func conformWorkflow(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	wf := platformtest.Conform(t, where, v, []platformtest.Field{
		{Name: "name", Kind: "string", Required: true},
		{Name: "description", Kind: "string"},
		{Name: "tags", Kind: "array"},
		{Name: "active", Kind: "bool"},
		{Name: "validatePayload", Kind: "bool"},
		{Name: "payloadSchema", Kind: "object", Nullable: true},
		{Name: "isTranslationEnabled", Kind: "bool"},
		{Name: "_id", Kind: "id", Required: true},
		{Name: "workflowId", Kind: "string", Required: true},
		{Name: "slug", Kind: "string", Required: true},
		{Name: "updatedAt", Kind: "time", Required: true},
		{Name: "createdAt", Kind: "time", Required: true},
		{Name: "updatedBy", Kind: "object"},
		{Name: "lastPublishedBy", Kind: "object"},
		{Name: "lastPublishedAt", Kind: "time", Nullable: true},
		{Name: "steps", Kind: "array", Required: true},
		{Name: "origin", Kind: "string", Required: true, Enum: origins},
		{Name: "preferences", Kind: "object", Required: true},
		{Name: "status", Kind: "string", Required: true, Enum: []string{"ACTIVE", "INACTIVE", "ERROR"}},
		{Name: "issues", Kind: "object"},
		{Name: "lastTriggeredAt", Kind: "time", Nullable: true},
		{Name: "payloadExample", Kind: "object", Nullable: true},
		{Name: "severity", Kind: "string", Required: true, Enum: []string{"high", "medium", "low", "none"}},
	})
	for _, k := range []string{"updatedBy", "lastPublishedBy"} {
		if u, ok := wf[k]; ok {
			platformtest.Conform(t, where+"."+k, u, []platformtest.Field{{Name: "_id", Kind: "string", Required: true},
				{Name: "firstName", Kind: "string", Nullable: true}, {Name: "lastName", Kind: "string", Nullable: true},
				{Name: "externalId", Kind: "string", Nullable: true}})
		}
	}
	prefs := platformtest.Conform(t, where+".preferences", wf["preferences"], []platformtest.Field{
		{Name: "default", Kind: "object", Required: true}, {Name: "user", Kind: "object", Required: true, Nullable: true}})
	platformtest.Conform(t, where+".preferences.default", prefs["default"], []platformtest.Field{
		{Name: "all", Kind: "object", Required: true}, {Name: "channels", Kind: "object", Required: true}})
	for _, s := range platformtest.Items(t, where+".steps", wf["steps"]) {
		conformStep(t, where+".steps", s)
	}
	return wf
}

func conformStep(t *testing.T, where string, v any) {
	t.Helper()
	st := platformtest.Conform(t, where, v, []platformtest.Field{
		{Name: "controls", Kind: "object", Required: true},
		{Name: "controlValues", Kind: "object"},
		{Name: "variables", Kind: "object", Required: true},
		{Name: "stepId", Kind: "string", Required: true},
		{Name: "_id", Kind: "id", Required: true},
		{Name: "name", Kind: "string", Required: true},
		{Name: "slug", Kind: "string", Required: true},
		{Name: "workflowId", Kind: "string", Required: true},
		{Name: "workflowDatabaseId", Kind: "id", Required: true},
		{Name: "type", Kind: "string", Required: true, Enum: stepKinds},
		{Name: "origin", Kind: "string", Required: true, Enum: origins},
		{Name: "issues", Kind: "object"},
	})
	controls := platformtest.Conform(t, where+".controls", st["controls"], []platformtest.Field{
		{Name: "dataSchema", Kind: "object"}, {Name: "uiSchema", Kind: "object"}, {Name: "values", Kind: "object", Required: true}})
	if ui, ok := controls["uiSchema"]; ok {
		u := platformtest.Conform(t, where+".controls.uiSchema", ui, []platformtest.Field{{Name: "group", Kind: "string", Enum: uiGroups}, {Name: "properties", Kind: "object"}})
		conformUIProperties(t, where+".controls.uiSchema.properties", u["properties"])
	}
	if issues, ok := st["issues"]; ok {
		is := platformtest.Conform(t, where+".issues", issues, []platformtest.Field{{Name: "controls", Kind: "object"}, {Name: "integration", Kind: "object"}})
		for key, enum := range map[string][]string{"controls": contentIssues, "integration": integrationIssues} {
			m, _ := is[key].(map[string]any)
			for path, list := range m {
				for _, issue := range platformtest.Items(t, where+".issues."+key+"."+path, list) {
					platformtest.Conform(t, where+".issues."+key+"."+path, issue, []platformtest.Field{
						{Name: "issueType", Kind: "string", Required: true, Enum: enum},
						{Name: "variableName", Kind: "string"},
						{Name: "message", Kind: "string", Required: true},
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
		m := platformtest.Conform(t, where+"."+name, p, []platformtest.Field{
			{Name: "component", Kind: "string", Required: true, Enum: uiParts},
			{Name: "properties", Kind: "object"},
		})
		if sub, ok := m["properties"]; ok {
			conformUIProperties(t, where+"."+name+".properties", sub)
		}
	}
}

// summaryFields follows docs/api.md, "Workflow summaries", with the
// never-null strings (docs/api.md, "What strict clients check").
var summaryFields = []platformtest.Field{
	{Name: "_id", Kind: "id"},
	{Name: "name", Kind: "string", Required: true},
	{Name: "description", Kind: "string", Required: true},
	{Name: "active", Kind: "bool", Required: true},
	{Name: "draft", Kind: "bool", Required: true},
	{Name: "critical", Kind: "bool", Required: true},
	{Name: "deleted", Kind: "bool", Required: true},
	{Name: "_organizationId", Kind: "id", Required: true},
	{Name: "_creatorId", Kind: "id", Required: true},
	{Name: "_environmentId", Kind: "id", Required: true},
	{Name: "_notificationGroupId", Kind: "id", Required: true},
	{Name: "deletedAt", Kind: "string", Required: true},
	{Name: "deletedBy", Kind: "string", Required: true},
	{Name: "preferenceSettings", Kind: "object", Required: true},
	{Name: "tags", Kind: "array", Required: true},
	{Name: "steps", Kind: "array", Required: true},
	{Name: "triggers", Kind: "array", Required: true},
	{Name: "notificationGroup", Kind: "object"},
	{Name: "data", Kind: "object"},
	{Name: "workflowIntegrationStatus", Kind: "object"},
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
	srv := apptest.NewServer(t)

	res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Everything","workflowId":"everything","tags":["a"],
		"payloadSchema":{"type":"object","properties":{"name":{"type":"string"}}},`+allSteps+`}`)
	is.Equal(res.Status, 201) // create: 201
	wf := conformWorkflow(t, "POST /v2/workflows", platformtest.DecodeAny(t, res))
	is.Equal(wf["status"], "INACTIVE") // inactive by default, whatever its MISSING_INTEGRATION issues

	res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Bare","steps":[]}`)
	is.Equal(res.Status, 201) // a workflow without steps
	conformWorkflow(t, "POST /v2/workflows (bare)", platformtest.DecodeAny(t, res))

	res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Broken","steps":[{"name":"x","type":"email","controlValues":{"subject":"{{ nope.x }}","body":"{{ payload.a | nofilter }}"}}]}`)
	is.Equal(res.Status, 201) // a workflow with content issues
	conformWorkflow(t, "POST /v2/workflows (issues)", platformtest.DecodeAny(t, res))

	for _, schema := range []string{`{"type":"string"}`, `{"default":5}`, `{"type":"array"}`, `{"type":"object","default":"x"}`} {
		res = srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Odd schema","payloadSchema":`+schema+`,"steps":[]}`)
		is.Equal(res.Status, 201) // any JSON Schema object is accepted
		conformWorkflow(t, "POST /v2/workflows payloadSchema "+schema, platformtest.DecodeAny(t, res))
	}

	for _, path := range []string{"/v2/workflows/everything", "/v2/workflows/" + wf["_id"].(string)} {
		res = srv.Dev.Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // read by workflowId or _id
		conformWorkflow(t, "GET "+path, platformtest.DecodeAny(t, res))
	}

	res = srv.Dev.Do(t, "GET", "/v2/workflows?limit=100", "")
	is.Equal(res.Status, 200) // listed
	list := platformtest.Conform(t, "GET /v2/workflows", platformtest.DecodeAny(t, res), []platformtest.Field{
		{Name: "workflows", Kind: "array", Required: true}, {Name: "totalCount", Kind: "number", Required: true}})
	for _, w := range platformtest.Items(t, "workflows", list["workflows"]) {
		conformWorkflow(t, "GET /v2/workflows item", w)
	}
	res = srv.Dev.Do(t, "GET", "/v2/workflows?query=nothing-matches", "")
	is.Equal(res.Status, 200) // an empty list
	list = platformtest.Conform(t, "empty list", platformtest.DecodeAny(t, res), []platformtest.Field{{Name: "workflows", Kind: "array", Required: true}})
	is.Equal(len(platformtest.Items(t, "workflows", list["workflows"])), 0) // [] not null

	res = srv.Dev.Do(t, "PUT", "/v2/workflows/everything", `{"name":"Everything v2","preferences":{"user":{"all":{"enabled":true}}},`+allSteps+`}`)
	is.Equal(res.Status, 200) // update: 200
	conformWorkflow(t, "PUT /v2/workflows/everything", platformtest.DecodeAny(t, res))

	res = srv.Dev.Do(t, "PUT", "/v2/workflows/everything/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, 200) // sync: 200
	synced := conformWorkflow(t, "PUT sync", platformtest.DecodeAny(t, res))
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
		got, err := summariesJSON(store, t.Context(), env.ID, ids)
		is.NoErr(err)                // summaries read
		is.Equal(len(got), len(ids)) // deleted ones included
		for id, raw := range got {
			var v any
			is.NoErr(json.Unmarshal(raw, &v)) // JSON
			sum := platformtest.Conform(t, "summary "+id, v, summaryFields)
			for _, trig := range platformtest.Items(t, "triggers", sum["triggers"]) {
				platformtest.Conform(t, "summary triggers", trig, []platformtest.Field{
					{Name: "type", Kind: "string", Required: true, Enum: []string{"event"}},
					{Name: "identifier", Kind: "string", Required: true},
					{Name: "variables", Kind: "array", Required: true},
					{Name: "subscriberVariables", Kind: "array"},
				})
			}
			for _, st := range platformtest.Items(t, "steps", sum["steps"]) {
				s := platformtest.Conform(t, "summary step", st, []platformtest.Field{
					{Name: "_id", Kind: "string"}, {Name: "uuid", Kind: "string"}, {Name: "name", Kind: "string"},
					{Name: "_templateId", Kind: "string"}, {Name: "_parentId", Kind: "string"},
					{Name: "active", Kind: "bool"}, {Name: "shouldStopOnFail", Kind: "bool"},
					{Name: "filters", Kind: "array"}, {Name: "metadata", Kind: "object"},
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

// conformMetadata checks the four metadata shapes of the
// "Workflow summaries" section of docs/api.md.
func conformMetadata(t *testing.T, where string, v any) {
	t.Helper()
	units := []string{"seconds", "minutes", "hours", "days", "weeks", "months"}
	md := platformtest.Conform(t, where, v, []platformtest.Field{
		{Name: "type", Kind: "string", Required: true, Enum: []string{"regular", "backoff", "timed", "scheduled"}},
		{Name: "amount", Kind: "number"}, {Name: "unit", Kind: "string", Enum: units},
		{Name: "digestKey", Kind: "string"}, {Name: "backoff", Kind: "bool"},
		{Name: "backoffAmount", Kind: "number"}, {Name: "backoffUnit", Kind: "string", Enum: units},
		{Name: "updateMode", Kind: "bool"}, {Name: "timed", Kind: "object"}, {Name: "delayPath", Kind: "string"},
	})
	_ = md
}

func TestConformance_WorkflowBadInput(t *testing.T) {
	srv := apptest.NewServer(t)
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
			body := platformtest.Conform(t, tc.name, platformtest.DecodeAny(t, res), platformtest.ErrorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (docs/api.md, "What strict clients check")
			}
		})
	}
}

// platformtest.ErrorFields is the error body (docs/api.md, "Errors").

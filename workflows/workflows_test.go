package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/workflows"
)

// issue is a content or integration issue as the wire shows it.
type issue struct {
	IssueType    string `json:"issueType"`
	VariableName string `json:"variableName"`
	Message      string `json:"message"`
}

// wfStep is a step response, declared here so a renamed field fails the tests.
type wfStep struct {
	ID                 string `json:"_id"`
	StepID             string `json:"stepId"`
	Name               string `json:"name"`
	Slug               string `json:"slug"`
	Type               string `json:"type"`
	Origin             string `json:"origin"`
	WorkflowID         string `json:"workflowId"`
	WorkflowDatabaseID string `json:"workflowDatabaseId"`
	Controls           struct {
		Values     map[string]any `json:"values"`
		DataSchema map[string]any `json:"dataSchema"`
		UISchema   struct {
			Group      string                    `json:"group"`
			Properties map[string]map[string]any `json:"properties"`
		} `json:"uiSchema"`
	} `json:"controls"`
	ControlValues map[string]any `json:"controlValues"`
	Variables     map[string]any `json:"variables"`
	Issues        *struct {
		Controls    map[string][]issue `json:"controls"`
		Integration map[string][]issue `json:"integration"`
	} `json:"issues"`
}

// wfResponse is a workflow response (docs/api.md, "Workflows").
type wfResponse struct {
	ID                   string          `json:"_id"`
	WorkflowID           string          `json:"workflowId"`
	Slug                 string          `json:"slug"`
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Tags                 []string        `json:"tags"`
	Active               bool            `json:"active"`
	ValidatePayload      bool            `json:"validatePayload"`
	PayloadSchema        json.RawMessage `json:"payloadSchema"`
	IsTranslationEnabled bool            `json:"isTranslationEnabled"`
	CreatedAt            string          `json:"createdAt"`
	UpdatedAt            string          `json:"updatedAt"`
	UpdatedBy            struct {
		ID string `json:"_id"`
	} `json:"updatedBy"`
	LastPublishedAt *string  `json:"lastPublishedAt"`
	Steps           []wfStep `json:"steps"`
	Origin          string   `json:"origin"`
	Preferences     struct {
		Default struct {
			All struct {
				Enabled  bool `json:"enabled"`
				ReadOnly bool `json:"readOnly"`
			} `json:"all"`
			Channels map[string]struct {
				Enabled bool `json:"enabled"`
			} `json:"channels"`
		} `json:"default"`
		User json.RawMessage `json:"user"`
	} `json:"preferences"`
	Status          string          `json:"status"`
	LastTriggeredAt *string         `json:"lastTriggeredAt"`
	PayloadExample  json.RawMessage `json:"payloadExample"`
	Severity        string          `json:"severity"`
}

// fakeChecker stands in for integrations.Store: channels listed are active.
type fakeChecker struct {
	mu     sync.Mutex
	active map[string]bool
}

func (f *fakeChecker) HasActiveIntegration(_ context.Context, _, channel string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[channel], nil
}

func (f *fakeChecker) set(channel string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.active[channel] = on
}

func newServer(t *testing.T, checker workflows.IntegrationChecker) (*platformtest.Server, *workflows.Store) {
	t.Helper()
	var store *workflows.Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		store = workflows.NewStore(app.DB)
		for _, env := range []string{"dev", "prod"} {
			e := app.Development
			if env == "prod" {
				e = app.Production
			}
			if err := store.SeedEnvironment(context.Background(), e); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
		workflows.AddRoutes(mux, store, checker)
	})
	return srv, store
}

func mustCreate(t *testing.T, c platformtest.Client, body string) wfResponse {
	t.Helper()
	res := c.Do(t, "POST", "/v2/workflows", body)
	if res.Status != 201 {
		t.Fatalf("create workflow: %d %s", res.Status, res.Body)
	}
	var w wfResponse
	res.Decode(t, &w)
	return w
}

// allKinds is a workflow with one complete step of every kind.
const allKinds = `{"name":"Every Kind","workflowId":"every-kind","active":true,"steps":[
 {"name":"Inbox","type":"in_app","controlValues":{"subject":"Hi","body":"Hello {{subscriber.firstName}}","avatar":"https://x.test/a.png","redirect":{"url":"/home","target":"_blank"},"primaryAction":{"label":"Go","redirect":{"url":"https://x.test"}},"data":{"k":1},"disableOutputSanitization":true}},
 {"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>B</p>","editorType":"html","layoutId":null}},
 {"name":"Text","type":"sms","controlValues":{"body":"sms"}},
 {"name":"Talk","type":"chat","controlValues":{"body":"chat"}},
 {"name":"Buzz","type":"push","controlValues":{"subject":"p","body":"push"}},
 {"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":2,"unit":"minutes"}},
 {"name":"Bundle","type":"digest","controlValues":{"type":"regular","amount":5,"unit":"minutes","lookBackWindow":{"amount":1,"unit":"minutes"},"digestKey":"payload.thread"}},
 {"name":"Slow","type":"throttle","controlValues":{"type":"fixed","amount":1,"unit":"hours","threshold":3}},
 {"name":"Code","type":"custom","controlValues":{"anything":["goes"]}}]}`

func TestWorkflow_RoundTrip(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	created := mustCreate(t, srv.Dev, allKinds)

	is.True(regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(created.ID)) // _id is an object id
	is.Equal(created.WorkflowID, "every-kind")                            // explicit workflowId kept
	is.Equal(created.Slug, "every-kind_wf_"+created.ID)                   // slug names the workflow
	is.Equal(created.Origin, "service-cloud")                             // API origin (docs/api.md, "The write side")
	is.Equal(created.Status, "ACTIVE")                                    // complete and active
	is.Equal(created.Severity, "none")                                    // severity default
	is.Equal(string(created.PayloadSchema), "null")                       // no schema given
	is.Equal(string(created.PayloadExample), "null")                      // no example without schema
	is.True(created.UpdatedBy.ID != "")                                   // updatedBy is the key's user
	is.True(created.LastTriggeredAt == nil)                               // never triggered
	is.True(created.Preferences.Default.All.Enabled)                      // all on by default
	is.Equal(string(created.Preferences.User), "null")                    // no user preferences
	for _, c := range []string{"in_app", "email", "sms", "chat", "push"} {
		is.True(created.Preferences.Default.Channels[c].Enabled) // every channel on by default
	}
	is.Equal(len(created.Steps), 9) // one step per kind
	groups := map[string]string{"in_app": "IN_APP", "email": "EMAIL", "sms": "SMS", "chat": "CHAT", "push": "PUSH",
		"delay": "DELAY", "digest": "DIGEST", "throttle": "THROTTLE", "custom": ""}
	for _, st := range created.Steps {
		is.True(st.Issues == nil)                                              // complete steps have no issues
		is.Equal(st.Origin, "service-cloud")                                   // step origin
		is.Equal(st.WorkflowID, "every-kind")                                  // step names its workflow
		is.Equal(st.WorkflowDatabaseID, created.ID)                            // and its database id
		is.Equal(st.Slug, st.StepID+"_st_"+st.ID)                              // step slug
		is.Equal(st.Controls.UISchema.Group, groups[st.Type])                  // ui group per kind
		is.Equal(st.Controls.DataSchema["type"], "object")                     // data schema per kind
		is.Equal(fmt.Sprint(st.Controls.Values), fmt.Sprint(st.ControlValues)) // values mirrored
		is.Equal(st.Variables["type"], "object")                               // variables schema
	}
	is.Equal(created.Steps[0].StepID, "inbox")                                                  // stepId from the name
	is.Equal(created.Steps[0].Controls.UISchema.Properties["body"]["component"], "IN_APP_BODY") // ui component
	is.Equal(created.Steps[6].Controls.Values["digestKey"], "payload.thread")                   // digest values kept

	res := srv.Dev.Do(t, "GET", "/v2/workflows/every-kind", "")
	is.Equal(res.Status, 200) // read by workflowId
	var got wfResponse
	res.Decode(t, &got)
	is.Equal(got.ID, created.ID)                                      // same workflow
	is.Equal(len(got.Steps), 9)                                       // steps kept
	is.Equal(got.Steps[8].Controls.Values["anything"], []any{"goes"}) // custom values kept

	res = srv.Dev.Do(t, "GET", "/v2/workflows/"+created.ID, "")
	is.Equal(res.Status, 200) // read by _id

	// Update: rename, reorder, drop a step, keep _ids of matched steps.
	body := `{"name":"Renamed","description":"d","tags":["a","b"],"active":false,"severity":"high",
	 "preferences":{"workflow":{"all":{"readOnly":true},"channels":{"sms":{"enabled":false}}},"user":{"channels":{"email":{"enabled":false}}}},
	 "steps":[{"_id":"` + created.Steps[1].ID + `","name":"Mail 2","type":"email","controlValues":{"subject":"S2","body":"B2"}},
	          {"stepId":"inbox","name":"Inbox","type":"in_app","controlValues":{"body":"b"}},
	          {"name":"Fresh","type":"sms","controlValues":{"body":"x"}}]}`
	res = srv.Dev.Do(t, "PUT", "/v2/workflows/every-kind", body)
	is.Equal(res.Status, 200) // updated
	var upd wfResponse
	res.Decode(t, &upd)
	is.Equal(upd.ID, created.ID)                                                         // same _id
	is.Equal(upd.WorkflowID, "every-kind")                                               // workflowId kept when absent
	is.Equal(upd.Name, "Renamed")                                                        // renamed
	is.Equal(upd.Description, "d")                                                       // description set
	is.Equal(upd.Tags, []string{"a", "b"})                                               // tags set
	is.Equal(upd.Status, "INACTIVE")                                                     // deactivated
	is.Equal(upd.Severity, "high")                                                       // severity set
	is.Equal(upd.Steps[0].ID, created.Steps[1].ID)                                       // matched by _id keeps _id
	is.Equal(upd.Steps[0].StepID, "mail")                                                // and its stepId
	is.Equal(upd.Steps[1].ID, created.Steps[0].ID)                                       // matched by stepId keeps _id
	is.Equal(upd.Steps[2].StepID, "fresh")                                               // new step gets a slug
	is.True(upd.Steps[2].ID != created.Steps[2].ID)                                      // and a new _id
	is.True(upd.Preferences.Default.All.ReadOnly)                                        // critical set
	is.True(!upd.Preferences.Default.Channels["sms"].Enabled)                            // channel off
	is.True(upd.Preferences.Default.Channels["email"].Enabled)                           // others stay on
	is.True(strings.Contains(string(upd.Preferences.User), `"email":{"enabled":false}`)) // user preferences kept
	is.Equal(upd.Steps[1].ControlValues["body"], "b")                                    // values replaced when given

	// A step sent without controlValues keeps its values; null clears them.
	res = srv.Dev.Do(t, "PUT", "/v2/workflows/every-kind", `{"name":"Renamed","steps":[
	 {"_id":"`+upd.Steps[0].ID+`","name":"Mail 2","type":"email"},{"stepId":"inbox","name":"Inbox","type":"in_app","controlValues":null}]}`)
	is.Equal(res.Status, 200) // updated again
	var kept wfResponse
	res.Decode(t, &kept)
	is.Equal(kept.Steps[0].ControlValues["subject"], "S2") // absent controlValues keep the old ones
	is.Equal(len(kept.Steps[1].ControlValues), 0)          // null clears them
	is.True(kept.Steps[1].Issues != nil)                   // an empty in_app step is an issue
	is.Equal(kept.Status, "INACTIVE")                      // but an inactive workflow is INACTIVE
	is.True(upd.UpdatedAt >= created.UpdatedAt)            // updatedAt moves

	res = srv.Dev.Do(t, "DELETE", "/v2/workflows/every-kind", "")
	is.Equal(res.Status, 204)  // deleted
	is.Equal(len(res.Body), 0) // with no body
	res = srv.Dev.Do(t, "GET", "/v2/workflows/every-kind", "")
	is.Equal(res.Status, 404) // gone from the API
	res = srv.Dev.Do(t, "DELETE", "/v2/workflows/every-kind", "")
	is.Equal(res.Status, 404) // deleting twice is not found
	res = srv.Dev.Do(t, "PUT", "/v2/workflows/every-kind", body)
	is.Equal(res.Status, 404) // updating a deleted workflow is not found
	again := mustCreate(t, srv.Dev, allKinds)
	is.True(again.ID != created.ID) // a deleted workflowId can be reused
}

func TestWorkflow_Identifiers(t *testing.T) {
	srv, _ := newServer(t, nil)
	t.Run("OK slug of the name", func(t *testing.T) {
		is := is.New(t)
		w := mustCreate(t, srv.Dev, `{"name":"Café Déjà  Vu!","steps":[{"name":"Send It","type":"sms"},{"name":"Send It","type":"sms"},{"name":"***","type":"chat"}]}`)
		is.True(!w.Active)                                                                  // inactive by default (docs/api.md, "Workflows")
		is.Equal(w.Status, "INACTIVE")                                                      // complete sms steps: no issues, so INACTIVE not ERROR
		is.Equal(w.WorkflowID, "cafe-deja-vu")                                              // accents folded, symbols dropped
		is.Equal(w.Steps[0].StepID, "send-it")                                              // step slug
		is.True(regexp.MustCompile(`^send-it-[a-z0-9]{6}$`).MatchString(w.Steps[1].StepID)) // collision suffixed
		is.Equal(w.Steps[2].StepID, "step")                                                 // nothing left: fallback
	})
	t.Run("OK generated collision gets a suffix", func(t *testing.T) {
		is := is.New(t)
		a := mustCreate(t, srv.Dev, `{"name":"Same Name","steps":[]}`)
		b := mustCreate(t, srv.Dev, `{"name":"Same Name","steps":[]}`)
		is.Equal(a.WorkflowID, "same-name")                                              // first gets the slug
		is.True(regexp.MustCompile(`^same-name-[a-z0-9]{6}$`).MatchString(b.WorkflowID)) // second is suffixed
	})
	t.Run("OK same workflowId in another environment", func(t *testing.T) {
		is := is.New(t)
		mustCreate(t, srv.Dev, `{"name":"x","workflowId":"shared","steps":[]}`)
		w := mustCreate(t, srv.Prod, `{"name":"x","workflowId":"shared","steps":[]}`)
		is.Equal(w.WorkflowID, "shared") // environments are separate
	})
	t.Run("ErrExplicitDuplicate", func(t *testing.T) {
		is := is.New(t)
		mustCreate(t, srv.Dev, `{"name":"x","workflowId":"taken","steps":[]}`)
		res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"y","workflowId":"taken","steps":[]}`)
		is.Equal(res.Status, 409) // explicit existing workflowId (docs/api.md, "The write side")
		mustCreate(t, srv.Dev, `{"name":"z","workflowId":"other","steps":[]}`)
		res = srv.Dev.Do(t, "PUT", "/v2/workflows/other", `{"name":"z","workflowId":"taken","steps":[]}`)
		is.Equal(res.Status, 409) // renaming onto a taken workflowId
	})
	for _, tc := range []struct {
		name, body, field string
	}{
		{"ErrBadWorkflowId", `{"name":"x","workflowId":"no spaces","steps":[]}`, "workflowId"},
		{"ErrBadWorkflowIdEdge", `{"name":"x","workflowId":"-lead","steps":[]}`, "workflowId"},
		{"ErrBadStepId", `{"name":"x","steps":[{"name":"a","type":"sms","stepId":"a..b"}]}`, "steps.0.stepId"},
		{"ErrDuplicateStepId", `{"name":"x","steps":[{"name":"a","type":"sms","stepId":"s"},{"name":"b","type":"sms","stepId":"s"}]}`, "steps.1.stepId"},
		{"ErrUnknownStepType", `{"name":"x","steps":[{"name":"a","type":"fax"}]}`, "steps.0.type"},
		{"ErrStepNameMissing", `{"name":"x","steps":[{"type":"sms"}]}`, "steps.0.name"},
		{"ErrNameMissing", `{"steps":[]}`, "name"},
		{"ErrStepsMissing", `{"name":"x"}`, "steps"},
		{"ErrSeverity", `{"name":"x","severity":"urgent","steps":[]}`, "severity"},
		{"ErrPayloadSchemaType", `{"name":"x","payloadSchema":"nope","steps":[]}`, "payloadSchema"},
		{"ErrPreferenceChannel", `{"name":"x","steps":[],"preferences":{"workflow":{"channels":{"fax":{"enabled":true}}}}}`, "preferences.workflow.channels.fax"},
		{"ErrControlValuesType", `{"name":"x","steps":[{"name":"a","type":"sms","controlValues":"body"}]}`, "steps.0.controlValues"},
		{"ErrTagsType", `{"name":"x","tags":"a","steps":[]}`, "tags"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v2/workflows", tc.body)
			is.Equal(res.Status, 422) // invalid body
			var e struct {
				Errors map[string]any `json:"errors"`
			}
			res.Decode(t, &e)
			_, ok := e.Errors[tc.field]
			is.True(ok) // the error names the field
		})
	}
	t.Run("ErrMalformedJSON", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":`)
		is.Equal(res.Status, 400) // not JSON
	})
}

func TestWorkflow_List(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	for i := range 12 {
		mustCreate(t, srv.Dev, fmt.Sprintf(`{"name":"Flow %02d","steps":[{"name":"s","type":"sms","controlValues":{"body":"x"}}]}`, i))
	}
	mustCreate(t, srv.Dev, `{"name":"Special","workflowId":"needle-id","tags":["vip"],"steps":[]}`)
	mustCreate(t, srv.Prod, `{"name":"Prod only","steps":[]}`)

	type page struct {
		Workflows  []wfResponse `json:"workflows"`
		TotalCount int          `json:"totalCount"`
	}
	get := func(q string) page {
		t.Helper()
		res := srv.Dev.Do(t, "GET", "/v2/workflows"+q, "")
		is.Equal(res.Status, 200) // list answered
		var p page
		res.Decode(t, &p)
		return p
	}
	p := get("")
	is.Equal(p.TotalCount, 13)               // every Dev workflow, not Prod's
	is.Equal(len(p.Workflows), 10)           // default limit 10
	is.Equal(p.Workflows[0].Name, "Special") // newest first
	is.Equal(p.Workflows[1].Name, "Flow 11") // then the one before

	p = get("?offset=10&limit=10")
	is.Equal(len(p.Workflows), 3)            // the rest
	is.Equal(p.Workflows[2].Name, "Flow 00") // oldest last
	p = get("?page=1&limit=5")
	is.Equal(p.Workflows[0].Name, "Flow 07") // page 1 of 5 starts at the sixth
	p = get("?query=NEEDLE")
	is.Equal(p.TotalCount, 1) // query matches workflowId, case-insensitively
	p = get("?query=flow%200")
	is.Equal(p.TotalCount, 10) // query matches names
	p = get("?tags=vip")
	is.Equal(p.TotalCount, 1) // tag filter
	p = get("?orderDirection=ASC&limit=1")
	is.Equal(p.Workflows[0].Name, "Flow 00") // ascending

	for _, q := range []string{"?limit=0", "?limit=101", "?offset=-1", "?orderBy=nope", "?orderDirection=up"} {
		res := srv.Dev.Do(t, "GET", "/v2/workflows"+q, "")
		is.Equal(res.Status, 422) // out-of-range list parameter
	}
	res := srv.Dev.Do(t, "GET", "/v2/workflows?limit=ten", "")
	is.Equal(res.Status, 400) // unparsable limit
}

func TestWorkflow_Tenancy(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	w := mustCreate(t, srv.Dev, `{"name":"Dev only","steps":[]}`)
	for _, path := range []string{"/v2/workflows/dev-only", "/v2/workflows/" + w.ID} {
		is.Equal(srv.Prod.Do(t, "GET", path, "").Status, 404)                        // Prod can't read Dev's
		is.Equal(srv.Prod.Do(t, "PUT", path, `{"name":"x","steps":[]}`).Status, 404) // nor update it
		is.Equal(srv.Prod.Do(t, "DELETE", path, "").Status, 404)                     // nor delete it
	}
	is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/dev-only", "").Status, 200)    // still there for Dev
	is.Equal(srv.Dev.WithKey("").Do(t, "GET", "/v2/workflows", "").Status, 401) // key required
}

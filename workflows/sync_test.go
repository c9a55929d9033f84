package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

func TestWorkflow_Sync(t *testing.T) {
	srv, _ := newServer(t, nil)
	prodID := srv.App.Production.ID
	src := mustCreate(t, srv.Dev, `{"name":"Promote Me","workflowId":"promote","description":"d","tags":["t"],"active":true,
		"severity":"low","validatePayload":true,"payloadSchema":{"type":"object","properties":{"x":{"type":"string"}}},
		"preferences":{"workflow":{"all":{"readOnly":true}}},
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{payload.x}}"}},{"name":"Wait","type":"delay","controlValues":{"amount":1,"unit":"hours"}}]}`)

	sync := func(key string) (int, wfResponse) {
		t.Helper()
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/"+key+"/sync", `{"targetEnvironmentId":"`+prodID+`"}`)
		var w wfResponse
		if res.Status == 200 {
			res.Decode(t, &w)
		}
		return res.Status, w
	}

	t.Run("OK creates in the target", func(t *testing.T) {
		is := is.New(t)
		status, tgt := sync("promote")
		is.Equal(status, 200)                                          // synced
		is.True(tgt.ID != src.ID)                                      // a new workflow in the target
		is.Equal(tgt.WorkflowID, "promote")                            // same workflowId
		is.Equal(tgt.Name, "Promote Me")                               // same name
		is.Equal(tgt.Description, "d")                                 // description copied
		is.Equal(tgt.Tags, []string{"t"})                              // tags copied
		is.Equal(tgt.Severity, "low")                                  // severity copied
		is.True(tgt.Active && tgt.ValidatePayload)                     // flags copied
		is.Equal(string(tgt.PayloadSchema), string(src.PayloadSchema)) // schema copied
		is.True(tgt.Preferences.Default.All.ReadOnly)                  // preferences copied
		is.Equal(len(tgt.Steps), 2)                                    // steps copied
		is.Equal(tgt.Steps[0].StepID, src.Steps[0].StepID)             // stepIds kept
		is.True(tgt.Steps[0].ID != src.Steps[0].ID)                    // target steps have their own _ids
		is.Equal(tgt.Steps[0].ControlValues["body"], "{{payload.x}}")  // control values copied

		res := srv.Prod.Do(t, "GET", "/v2/workflows/promote", "")
		is.Equal(res.Status, 200) // Prod now has it
	})

	t.Run("OK updates in place", func(t *testing.T) {
		is := is.New(t)
		_, first := sync("promote")
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/promote", `{"name":"Promoted","steps":[
			{"stepId":"wait","name":"Wait","type":"delay","controlValues":{"amount":2,"unit":"hours"}},
			{"stepId":"inbox","name":"Inbox","type":"in_app","controlValues":{"body":"v2"}},
			{"name":"Mail","type":"email","controlValues":{"subject":"s","body":"b"}}]}`)
		is.Equal(res.Status, 200) // source edited
		status, second := sync(src.ID)
		is.Equal(status, 200)                                 // synced again, by _id
		is.Equal(second.ID, first.ID)                         // same target _id
		is.Equal(second.Name, "Promoted")                     // updated
		is.Equal(len(second.Steps), 3)                        // steps follow the source
		is.Equal(second.Steps[0].ID, first.Steps[1].ID)       // matched by stepId: target _id kept
		is.Equal(second.Steps[1].ID, first.Steps[0].ID)       // same for the other
		is.Equal(second.Steps[1].ControlValues["body"], "v2") // new values
		is.Equal(second.Steps[2].StepID, "mail")              // new step added

		var list struct {
			TotalCount int `json:"totalCount"`
		}
		srv.Prod.Do(t, "GET", "/v2/workflows", "").Decode(t, &list)
		is.Equal(list.TotalCount, 1) // never duplicated
	})

	for _, tc := range []struct {
		name, key, body string
		status          int
	}{
		{"ErrSameEnvironment", "promote", `{"targetEnvironmentId":"` + srv.App.Development.ID + `"}`, 422},
		{"ErrUnknownEnvironment", "promote", `{"targetEnvironmentId":"0123456789abcdef01234567"}`, 404},
		{"ErrMalformedEnvironment", "promote", `{"targetEnvironmentId":"prod"}`, 422},
		{"ErrMissingEnvironment", "promote", `{}`, 422},
		{"ErrUnknownWorkflow", "nope", `{"targetEnvironmentId":"` + prodID + `"}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "PUT", "/v2/workflows/"+tc.key+"/sync", tc.body)
			is.Equal(res.Status, tc.status) // refused
		})
	}

	t.Run("ErrOtherOrganization", func(t *testing.T) {
		is := is.New(t)
		// An environment of another organization is invisible: 404.
		ctx := context.Background()
		_, err := srv.App.DB.ExecContext(ctx, `INSERT INTO organizations (id, name, created_at) VALUES ('aaaaaaaaaaaaaaaaaaaaaaaa', 'Other', '2026-01-01T00:00:00.000Z')`)
		is.NoErr(err) // other organization
		_, err = srv.App.DB.ExecContext(ctx, `INSERT INTO environments (id, organization_id, name, identifier, created_at)
			VALUES ('bbbbbbbbbbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaaaaaaaaaa', 'Development', 'other', '2026-01-01T00:00:00.000Z')`)
		is.NoErr(err) // its environment
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/promote/sync", `{"targetEnvironmentId":"bbbbbbbbbbbbbbbbbbbbbbbb"}`)
		is.Equal(res.Status, 404) // foreign environment
	})
}

func TestWorkflow_SummariesAndTrigger(t *testing.T) {
	is := is.New(t)
	srv, store := newServer(t, nil)
	ctx := context.Background()
	dev := srv.App.Development.ID
	w := mustCreate(t, srv.Dev, `{"name":"Summarised","workflowId":"sum","active":true,"tags":["news"],
		"payloadSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}},
		"preferences":{"workflow":{"all":{"readOnly":true},"channels":{"sms":{"enabled":false}}}},
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"x"}},
		         {"name":"Bundle","type":"digest","controlValues":{"amount":5,"unit":"minutes","digestKey":"payload.a"}}]}`)

	sums, err := summariesJSON(store, ctx, dev, []string{w.ID, "0123456789abcdef01234567"})
	is.NoErr(err)          // summaries read
	is.Equal(len(sums), 1) // unknown ids are absent
	var sum map[string]any
	is.NoErr(json.Unmarshal(sums[w.ID], &sum)) // summary is JSON
	for _, k := range []string{"_organizationId", "_creatorId", "_environmentId", "_notificationGroupId", "deletedAt", "deletedBy"} {
		_, isString := sum[k].(string)
		is.True(isString) // never null (docs/api.md, "What strict clients check")
	}
	is.Equal(sum["_id"], w.ID)                                          // summary id
	is.Equal(sum["critical"], true)                                     // critical is preferences.default.all.readOnly
	is.Equal(sum["deleted"], false)                                     // not deleted
	is.Equal(sum["draft"], false)                                       // never a draft
	is.Equal(sum["deletedAt"], "")                                      // empty when not deleted
	is.Equal(sum["preferenceSettings"].(map[string]any)["sms"], false)  // channel settings
	is.Equal(sum["preferenceSettings"].(map[string]any)["email"], true) // other channels stay on
	trig := sum["triggers"].([]any)[0].(map[string]any)
	is.Equal(trig["type"], "event")                                                              // trigger type
	is.Equal(trig["identifier"], "sum")                                                          // trigger identifier is the workflowId
	is.Equal(trig["variables"], []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}) // payload properties
	group := sum["notificationGroup"].(map[string]any)
	is.Equal(group["name"], "General")                  // the seeded default group
	is.Equal(group["_id"], sum["_notificationGroupId"]) // and its id
	steps := sum["steps"].([]any)
	is.Equal(len(steps), 2) // steps summarised
	for _, st := range steps {
		is.Equal(st.(map[string]any)["shouldStopOnFail"], true) // a failed step cancels the rest (docs/api.md, "Delivery")
	}
	md := steps[1].(map[string]any)["metadata"].(map[string]any)
	is.Equal(md["type"], "regular")        // digest metadata
	is.Equal(md["digestKey"], "payload.a") // with its digest key

	tw, err := store.TriggerWorkflow(ctx, dev, "sum")
	is.NoErr(err)                                      // trigger lookup
	is.Equal(tw.ID, w.ID)                              // same workflow
	is.Equal(tw.Steps[1].ControlValues["amount"], 5.0) // control values present
	is.True(tw.Preferences.Default.All.ReadOnly)       // preferences resolved
	// On a shared database the create's own notification may reach this
	// instance's listener after the first read and drop what it cached, so
	// the cache is checked once the notifications have settled.
	platformtest.Eventually(t, 5*time.Second, func() bool {
		first, err1 := store.TriggerWorkflow(ctx, dev, "sum")
		again, err2 := store.TriggerWorkflow(ctx, dev, "sum")
		return err1 == nil && err2 == nil && again == first
	}, "the cached answer, the same value until a write")
	_, err = store.TriggerWorkflow(ctx, srv.App.Production.ID, "sum")
	is.True(errors.Is(err, platform.ErrNotFound)) // other environment: not found

	res := srv.Dev.Do(t, "PUT", "/v2/workflows/sum", `{"name":"Summarised","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"x"}},
		         {"name":"Bundle","type":"digest","controlValues":{"amount":7,"unit":"minutes"}}]}`)
	is.Equal(res.Status, 200) // updated
	tw, err = store.TriggerWorkflow(ctx, dev, "sum")
	is.NoErr(err)                                      // trigger lookup after the update
	is.Equal(tw.Steps[1].ControlValues["amount"], 7.0) // the cached answer gave way to the update

	is.Equal(srv.Dev.Do(t, "DELETE", "/v2/workflows/sum", "").Status, 204) // deleted
	_, err = store.TriggerWorkflow(ctx, dev, "sum")
	is.True(errors.Is(err, platform.ErrNotFound)) // deleted workflows cannot be triggered
	sums, err = summariesJSON(store, ctx, dev, []string{w.ID})
	is.NoErr(err)                              // summaries of deleted workflows still resolve
	is.NoErr(json.Unmarshal(sums[w.ID], &sum)) // deleted summary is JSON
	is.Equal(sum["deleted"], true)             // marked deleted
	is.True(sum["deletedAt"].(string) != "")   // with a time
	is.Equal(sum["deletedBy"], w.UpdatedBy.ID) // and who
	sums, err = summariesJSON(store, ctx, srv.App.Production.ID, []string{w.ID})
	is.NoErr(err)          // summaries of the other environment read
	is.Equal(len(sums), 0) // summaries are per environment
}

func TestMigrations_UpDown(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldb.MemoryPath)
	is.NoErr(err) // open
	defer db.Close()
	is.NoErr(sqldb.Migrate(db, migrations.FS))     // up
	is.NoErr(sqldb.MigrateDown(db, migrations.FS)) // down undoes every table
	var n int
	is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'workflows%' OR name = 'notification_groups'`).Scan(&n)) // schema readable
	is.Equal(n, 0)                                                                                                                                // nothing of ours left
	is.NoErr(sqldb.Migrate(db, migrations.FS))                                                                                                    // and up again
}

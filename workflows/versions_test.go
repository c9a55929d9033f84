package workflows_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// versionAnswer is a version on the wire.
type versionAnswer struct {
	ID                 string `json:"_id"`
	WorkflowDatabaseID string `json:"_workflowId"`
	Version            int    `json:"version"`
	Note               string `json:"note"`
	CreatedBy          struct {
		ID string `json:"_id"`
	} `json:"createdBy"`
	CreatedAt string `json:"createdAt"`
	Workflow  *struct {
		Name       string `json:"name"`
		WorkflowID string `json:"workflowId"`
		Active     bool   `json:"active"`
		Steps      []struct {
			ID            string         `json:"_id"`
			StepID        string         `json:"stepId"`
			ControlValues map[string]any `json:"controlValues"`
		} `json:"steps"`
	} `json:"workflow"`
}

type changeAnswer struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	From any    `json:"from"`
	To   any    `json:"to"`
}

func TestVersions(t *testing.T) {
	srv, _ := newServer(t, nil)
	w := mustCreate(t, srv.Dev, `{"name":"Shipping","workflowId":"shipping","versionNote":"first draft","steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Shipped {{payload.order}}"}}]}`)
	list := func() (int, []versionAnswer) {
		t.Helper()
		res := srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions", "")
		var l struct {
			Versions   []versionAnswer `json:"versions"`
			TotalCount int             `json:"totalCount"`
		}
		if res.Status != 200 {
			t.Fatalf("list versions: %d %s", res.Status, res.Body)
		}
		res.Decode(t, &l)
		return l.TotalCount, l.Versions
	}
	get := func(n int) versionAnswer {
		t.Helper()
		res := srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/"+strconv.Itoa(n), "")
		if res.Status != 200 {
			t.Fatalf("version %d: %d %s", n, res.Status, res.Body)
		}
		var v versionAnswer
		res.Decode(t, &v)
		return v
	}

	t.Run("OK each save is a version", func(t *testing.T) {
		is := is.New(t)
		total, vs := list()
		is.Equal(total, 1)                       // the creation
		is.Equal(vs[0].Version, 1)               // numbered from 1
		is.Equal(vs[0].Note, "first draft")      // with its note
		is.True(vs[0].CreatedBy.ID != "")        // who saved it
		is.Equal(vs[0].WorkflowDatabaseID, w.ID) // of this workflow
		is.True(vs[0].Workflow == nil)           // the list leaves the workflow out

		res := srv.Dev.Do(t, "PUT", "/v2/workflows/shipping", `{"name":"Shipping","versionNote":"friendlier","steps":[
			{"_id":"`+w.Steps[0].ID+`","name":"Inbox","type":"in_app","controlValues":{"body":"On its way: {{payload.order}}"}},
			{"name":"Mail","type":"email","controlValues":{"subject":"Shipped","body":"<p>x</p>"}}]}`)
		is.Equal(res.Status, 200) // saved
		res = srv.Dev.Do(t, "PATCH", "/v2/workflows/shipping", `{"active":true}`)
		is.Equal(res.Status, 200) // changed
		total, vs = list()
		is.Equal(total, 3)                                                           // three saves
		is.Equal([]int{vs[0].Version, vs[1].Version, vs[2].Version}, []int{3, 2, 1}) // newest first
		is.Equal(vs[1].Note, "friendlier")                                           // each with its note
		is.Equal(vs[0].Note, "")                                                     // or none

		v1 := get(1)
		is.Equal(v1.Workflow.Steps[0].ControlValues["body"], "Shipped {{payload.order}}") // the workflow as it was
		is.Equal(len(v1.Workflow.Steps), 1)                                               // with its steps then
		v3 := get(3)
		is.True(v3.Workflow.Active)         // and as it is now
		is.Equal(len(v3.Workflow.Steps), 2) // two steps
	})

	t.Run("OK diff", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/2/diff", "")
		is.Equal(res.Status, 200) // compared with the one before
		var d struct {
			From, To int
			Changes  []changeAnswer `json:"changes"`
		}
		res.Decode(t, &d)
		is.Equal([]int{d.From, d.To}, []int{1, 2}) // from 1 to 2
		byPath := map[string]changeAnswer{}
		for _, c := range d.Changes {
			byPath[c.Path] = c
		}
		body := byPath["steps.inbox.controlValues.body"]
		is.Equal(body.Kind, "changed")                     // the body changed
		is.Equal(body.From, "Shipped {{payload.order}}")   // from
		is.Equal(body.To, "On its way: {{payload.order}}") // to
		is.Equal(byPath["steps.mail"].Kind, "added")       // a step added
		is.Equal(byPath["stepOrder"].Kind, "changed")      // the order changed
		_, same := byPath["name"]
		is.True(!same) // what did not change is not listed

		res = srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/2/diff?from=3", "")
		res.Decode(t, &d)
		is.Equal(res.Status, 200) // any two versions
		found := false
		for _, c := range d.Changes {
			found = found || c.Path == "active" && c.From == true && c.To == false
		}
		is.True(found) // active, from 3 back to 2
	})

	t.Run("OK restore is a new version", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v2/workflows/shipping/versions/1/restore", `{"versionNote":"back to the start"}`)
		is.Equal(res.Status, 200) // restored
		var now wfResponse
		res.Decode(t, &now)
		is.Equal(len(now.Steps), 1)                                               // the one step of version 1
		is.Equal(now.Steps[0].ID, w.Steps[0].ID)                                  // keeping its _id
		is.Equal(now.Steps[0].ControlValues["body"], "Shipped {{payload.order}}") // and its body
		is.True(!now.Active)                                                      // and its inactivity
		total, vs := list()
		is.Equal(total, 4)                        // the restore is a version
		is.Equal(vs[0].Note, "back to the start") // with its note
		v4 := get(4)
		is.Equal(v4.Workflow.Steps[0].ControlValues["body"], "Shipped {{payload.order}}") // holding version 1's state
		res = srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/4/diff?from=1", "")
		var d struct {
			Changes []changeAnswer `json:"changes"`
		}
		res.Decode(t, &d)
		is.Equal(len(d.Changes), 0) // no difference from version 1

		res = srv.Dev.Do(t, "POST", "/v2/workflows/shipping/versions/3/restore", ``)
		is.Equal(res.Status, 200) // restored without a body
		_, vs = list()
		is.Equal(vs[0].Note, "Restored version 3") // a note saying so
	})

	t.Run("OK sync diff before sync", func(t *testing.T) {
		is := is.New(t)
		prod := srv.App.Production.ID
		res := srv.Dev.Do(t, "POST", "/v2/workflows/shipping/sync/diff", `{"targetEnvironmentId":"`+prod+`"}`)
		is.Equal(res.Status, 200) // compared
		var d struct {
			Exists  bool           `json:"exists"`
			Changes []changeAnswer `json:"changes"`
		}
		res.Decode(t, &d)
		is.True(!d.Exists)                                                        // not in Production yet
		is.True(len(d.Changes) > 0)                                               // everything is new there
		is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/shipping", "").Status, 404) // and nothing was written

		is.Equal(srv.Dev.Do(t, "PUT", "/v2/workflows/shipping/sync", `{"targetEnvironmentId":"`+prod+`"}`).Status, 200) // synced
		res = srv.Dev.Do(t, "POST", "/v2/workflows/shipping/sync/diff", `{"targetEnvironmentId":"`+prod+`"}`)
		res.Decode(t, &d)
		is.True(d.Exists)           // there now
		is.Equal(len(d.Changes), 0) // and the same

		is.Equal(srv.Dev.Do(t, "PATCH", "/v2/workflows/shipping", `{"name":"Shipped"}`).Status, 200) // a change in Development
		res = srv.Dev.Do(t, "POST", "/v2/workflows/shipping/sync/diff", `{"targetEnvironmentId":"`+prod+`"}`)
		res.Decode(t, &d)
		is.Equal(len(d.Changes), 1)             // one difference
		is.Equal(d.Changes[0].Path, "name")     // the name
		is.Equal(d.Changes[0].From, "Shipping") // Production's
		is.Equal(d.Changes[0].To, "Shipped")    // what the sync would write

		res = srv.Prod.Do(t, "GET", "/v2/workflows/shipping/versions", "")
		var l struct {
			Versions []versionAnswer `json:"versions"`
		}
		res.Decode(t, &l)
		is.Equal(len(l.Versions), 1)                                        // the sync is the copy's first version
		is.Equal(l.Versions[0].Note, "Synced from "+srv.App.Development.ID) // saying from where
	})

	t.Run("Err", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/99", "").Status, 404)                                                    // no such version
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/x", "").Status, 404)                                                     // not a number
		is.Equal(srv.Dev.Do(t, "POST", "/v2/workflows/shipping/versions/99/restore", `{}`).Status, 404)                                         // nothing to restore
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/shipping/versions/2/diff?from=99", "").Status, 422)                                        // no version to compare with
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/nope/versions", "").Status, 404)                                                           // unknown workflow
		is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/"+w.ID+"/versions", "").Status, 404)                                                      // another environment's
		is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/"+w.ID+"/versions/1", "").Status, 404)                                                    // nor one of them
		is.Equal(srv.Dev.Do(t, "POST", "/v2/workflows/shipping/sync/diff", `{"targetEnvironmentId":"`+srv.App.Development.ID+`"}`).Status, 422) // not to itself
		is.Equal(srv.Dev.Do(t, "PATCH", "/v2/workflows/shipping", `{"versionNote":"`+strings.Repeat("n", 501)+`"}`).Status, 422)                // a note too long
	})
}

func TestVersions_KeepsTheStateBeforeTheFirstKeptSave(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	w := mustCreate(t, srv.Dev, `{"name":"Older","workflowId":"older","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"before"}}]}`)
	// A workflow saved before versions were kept has none.
	_, err := srv.App.DB.ExecContext(t.Context(), `DELETE FROM workflow_versions WHERE workflow_id = ?`, w.ID)
	is.NoErr(err) // its versions gone
	res := srv.Dev.Do(t, "PATCH", "/v2/workflows/older", `{"name":"Newer"}`)
	is.Equal(res.Status, 200) // saved
	res = srv.Dev.Do(t, "GET", "/v2/workflows/older/versions/1", "")
	is.Equal(res.Status, 200) // the state before the save is version 1
	var v versionAnswer
	res.Decode(t, &v)
	is.Equal(v.Workflow.Name, "Older") // as it was
	is.Equal(v.CreatedAt, w.UpdatedAt) // when it was saved
	res = srv.Dev.Do(t, "GET", "/v2/workflows/older/versions/2", "")
	res.Decode(t, &v)
	is.Equal(v.Workflow.Name, "Newer") // and the save is version 2
}

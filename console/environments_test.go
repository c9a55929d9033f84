package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

func TestConsole_CreatedEnvironments(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	seed(t, srv)
	var env struct {
		ID string `json:"_id"`
	}
	apptest.MustCreate(t, srv.Dev, "/v1/environments", `{"name":"Staging","color":"#3366ff"}`).Decode(t, &env)
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)

	res := ed.get(devURL(srv, "workflows"))
	is.Equal(res.status, http.StatusOK)                                                // a page of Development
	is.True(strings.Contains(res.body, `<option value="`+env.ID+`">Staging</option>`)) // the switcher offers the created environment

	staging := "/console/env/" + env.ID + "/workflows"
	res = ed.get(staging)
	is.Equal(res.status, http.StatusOK)                                                         // its pages open
	is.True(strings.Contains(res.body, `<option value="`+env.ID+`" selected>Staging</option>`)) // with it chosen

	res = ed.get(devURL(srv, "workflows", "welcome", "edit") + "?compare=" + env.ID)
	is.Equal(res.status, http.StatusOK)                    // compared with it
	is.True(strings.Contains(res.body, "Sync to Staging")) // the sync to it is offered
	res = ed.post(devURL(srv, "workflows", "welcome", "sync"), url.Values{"target": {env.ID}})
	is.Equal(res.status, http.StatusSeeOther) // synced
	res = ed.get(staging)
	is.True(strings.Contains(res.body, "welcome")) // the workflow is there

	res = ed.get("/console/env/" + env.ID + "/workflows/welcome/edit?compare=" + srv.App.Production.ID)
	is.True(strings.Contains(res.body, "Sync to Production")) // and from there on to Production
	res = ed.post("/console/env/"+env.ID+"/workflows/welcome/sync", url.Values{"target": {srv.App.Production.ID}})
	is.Equal(res.status, http.StatusSeeOther)                                          // synced
	is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/welcome", "").Status, http.StatusOK) // it arrived
}

package console_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

func TestContexts_Pages(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	for _, body := range []string{
		`{"type":"tenant","id":"acme","data":{"name":"Acme Inc"}}`,
		`{"type":"tenant","id":"globex","data":{"name":"Globex"}}`,
		`{"type":"region","id":"acme","data":{"zone":"eu"}}`,
	} {
		res := srv.Dev.Do(t, "POST", "/v2/contexts", body)
		is.Equal(res.Status, 201) // a context
	}
	b := member(t, srv, "editor@example.com", platform.RoleEditor)
	list := devURL(srv, "contexts")
	acme := devURL(srv, "contexts", "tenant", "acme")

	page := b.get(list).body
	is.True(strings.Contains(page, acme) && strings.Contains(page, devURL(srv, "contexts", "region", "acme"))) // every one listed
	page = b.get(list + "?type=tenant").body
	is.True(strings.Contains(page, acme))                                       // of the type
	is.True(!strings.Contains(page, devURL(srv, "contexts", "region", "acme"))) // and no other
	page = b.get(list + "?id=acme").body
	is.True(strings.Contains(page, acme) && !strings.Contains(page, devURL(srv, "contexts", "tenant", "globex"))) // of the id
	page = b.get(list + "?search=GLOB").body
	is.True(strings.Contains(page, devURL(srv, "contexts", "tenant", "globex")) && !strings.Contains(page, acme)) // a part of the key
	res := b.get(list + "?type=no+such+type!")
	is.Equal(res.status, 200)                                                        // a type no context may have
	is.True(strings.Contains(res.body, "must be 1 to 100"))                          // is a problem shown
	is.True(strings.Contains(b.get(list+"?after=bogus").body, "not a valid cursor")) // as is a forged cursor

	page = b.get(acme).body
	is.True(strings.Contains(page, "Acme Inc"))  // the data, shown
	is.True(strings.Contains(page, "Save data")) // to an editor, as a form

	for _, bad := range []string{`{"name":`, `["a"]`, `"text"`, ``, `{"big":"` + strings.Repeat("x", 70<<10) + `"}`} {
		res := b.post(acme, url.Values{"data": {bad}})
		is.Equal(res.status, 422)                                  // refused
		is.True(strings.Contains(res.body, `aria-invalid="true"`)) // on its field
	}
	var got struct {
		Data map[string]any `json:"data"`
	}
	api(t, srv.Dev, "/v2/contexts/tenant/acme", &got)
	is.Equal(got.Data["name"], "Acme Inc") // unchanged by the refusals

	res = b.post(acme, url.Values{"data": {`{"name": "Acme Corp", "plan": "pro"}`}})
	is.Equal(res.status, 303) // saved
	api(t, srv.Dev, "/v2/contexts/tenant/acme", &got)
	is.Equal(got.Data["name"], "Acme Corp") // as the API reads it
	is.Equal(got.Data["plan"], "pro")

	is.Equal(b.get(devURL(srv, "contexts", "tenant", "nobody")).status, 404)                              // an unknown context
	is.Equal(b.get(devURL(srv, "contexts", "ten ant", "acme")).status, 404)                               // a key no context may have
	is.Equal(b.post(devURL(srv, "contexts", "tenant", "nobody"), url.Values{"data": {`{}`}}).status, 404) // saved to nothing

	viewer := member(t, srv, "viewer@example.com", platform.RoleViewer)
	page = viewer.get(acme).body
	is.True(strings.Contains(page, "Acme Corp"))                                               // a viewer reads it
	is.True(!strings.Contains(page, "Save data") && !strings.Contains(page, "Delete context")) // with no control
	is.Equal(viewer.post(acme, url.Values{"data": {`{"name":"Hacked"}`}}).status, 403)         // and cannot save
	is.Equal(viewer.post(acme+"/delete", nil).status, 403)                                     // nor delete
	api(t, srv.Dev, "/v2/contexts/tenant/acme", &got)
	is.Equal(got.Data["name"], "Acme Corp") // unchanged

	is.Equal(b.post(acme+"/delete", nil).status, 303)                          // deleted
	is.Equal(b.get(acme).status, 404)                                          // gone
	is.Equal(srv.Dev.Do(t, "GET", "/v2/contexts/tenant/acme", "").Status, 404) // from the API too
	is.Equal(b.post(acme+"/delete", nil).status, 404)                          // and not twice
}

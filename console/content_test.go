package console_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

func TestLayouts_PageAndPreview(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`)
	apptest.MustStatus(t, srv.Dev, "PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"body":"<html><body><h1>Hi {{subscriber.firstName}}</h1>{{content}}</body></html>","editorType":"html"}}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Mail","workflowId":"mail","steps":[{"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>B</p>","layoutId":"brand"}}]}`)
	b := member(t, srv, "viewer@example.com", platform.RoleViewer)

	res := b.get(devURL(srv, "layouts") + "?layout=brand")
	is.Equal(res.status, 200)                                            // the page
	is.True(strings.Contains(res.body, "default-layout"))                // the default listed
	is.True(strings.Contains(res.body, `<span class="tag">mail</span>`)) // brand's workflow named
	is.True(strings.Contains(res.body, "layouts/brand/preview"))         // brand previewed
	res = b.get(devURL(srv, "layouts", "brand", "preview"))
	is.Equal(res.status, 200)                                              // the preview
	is.True(strings.HasPrefix(res.body, "<html><body><h1>Hi Ada</h1><p>")) // rendered around a stand-in
	is.Equal(b.get(devURL(srv, "layouts", "nope", "preview")).status, 404) // an unknown layout
}

func TestTranslations_Grid(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","isTranslationEnabled":true,"steps":[]}`)
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"en_US","content":{"hello":"Hello","bye":"Bye"}}`, 200)
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"fr_FR","content":{"hello":"Bonjour"}}`, 200)
	b := member(t, srv, "viewer@example.com", platform.RoleViewer)

	res := b.get(devURL(srv, "workflows", "welcome", "translations"))
	is.Equal(res.status, 200)                                                               // the grid
	is.True(strings.Contains(res.body, "<td>Bonjour</td>"))                                 // a cell
	is.Equal(strings.Count(res.body, `class="missing"`), 1)                                 // fr_FR lacks bye
	is.True(strings.Contains(res.body, "Translations are on"))                              // the workflow's setting
	is.Equal(b.get(devURL(srv, "workflows", "nope", "translations")).status, 404)           // an unknown workflow
	is.True(strings.Contains(b.get(devURL(srv, "workflows")).body, "welcome/translations")) // linked from the workflows page
}

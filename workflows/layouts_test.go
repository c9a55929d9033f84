package workflows_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// layoutBody is a layout as the wire shows it (docs/content.md, "Layouts").
type layoutBody struct {
	ID                   string `json:"_id"`
	LayoutID             string `json:"layoutId"`
	Slug                 string `json:"slug"`
	Name                 string `json:"name"`
	IsDefault            bool   `json:"isDefault"`
	IsTranslationEnabled bool   `json:"isTranslationEnabled"`
	CreatedAt            string `json:"createdAt"`
	UpdatedAt            string `json:"updatedAt"`
	Origin               string `json:"origin"`
	Type                 string `json:"type"`
	Controls             struct {
		Values struct {
			Email *struct {
				Body       string `json:"body"`
				EditorType string `json:"editorType"`
			} `json:"email"`
		} `json:"values"`
		UISchema struct {
			Group string `json:"group"`
		} `json:"uiSchema"`
	} `json:"controls"`
}

const brandPage = `<html><body><h1>{{ payload.brand }}</h1>{{ content }}</body></html>`

func createLayout(t *testing.T, c platformtest.Client, layoutID string) layoutBody {
	t.Helper()
	res := c.Do(t, "POST", "/v2/layouts", `{"layoutId":"`+layoutID+`","name":"Brand `+layoutID+`"}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("create layout: %d %s", res.Status, res.Body)
	}
	var l layoutBody
	res.Decode(t, &l)
	return l
}

func TestLayouts_CRUD(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev

	var list struct {
		Layouts    []layoutBody `json:"layouts"`
		TotalCount int          `json:"totalCount"`
	}
	c.Do(t, "GET", "/v2/layouts", "").Decode(t, &list)
	is.Equal(list.TotalCount, 1)                          // every environment starts with a layout
	is.True(list.Layouts[0].IsDefault)                    // its default
	is.Equal(list.Layouts[0].LayoutID, "default-layout")  // named default-layout
	is.True(list.Layouts[0].Controls.Values.Email != nil) // with a body

	l := createLayout(t, c, "brand")
	is.True(!l.IsDefault)                                 // the seeded layout stays the default
	is.Equal(l.Origin, "service-cloud")                   // origin
	is.Equal(l.Type, "REGULAR")                           // type
	is.Equal(l.Controls.UISchema.Group, "LAYOUT")         // ui group
	is.Equal(l.Controls.Values.Email.EditorType, "block") // starts as a block document
	var doc struct {
		Type    string `json:"type"`
		Content []struct {
			Content []struct {
				Type  string `json:"type"`
				Attrs struct {
					ID string `json:"id"`
				} `json:"attrs"`
			} `json:"content"`
		} `json:"content"`
	}
	is.NoErr(json.Unmarshal([]byte(l.Controls.Values.Email.Body), &doc)) // the document as a JSON string
	is.Equal(doc.Type, "doc")                                            // a block document
	is.Equal(len(doc.Content), 3)                                        // three paragraphs
	is.Equal(doc.Content[1].Content[0].Type, "variable")                 // the middle one the step's content
	is.Equal(doc.Content[1].Content[0].Attrs.ID, "content")              // named content
	is.True(strings.HasSuffix(l.Slug, "_ly_"+l.ID))                      // slug ends with the id

	quoted, _ := json.Marshal(brandPage)
	res := c.Do(t, "PUT", "/v2/layouts/brand", `{"name":"Brand","isTranslationEnabled":true,
		"controlValues":{"email":{"body":`+string(quoted)+`,"editorType":"html"}}}`)
	is.Equal(res.Status, http.StatusOK) // updated
	var got layoutBody
	res.Decode(t, &got)
	is.Equal(got.Name, "Brand")                             // renamed
	is.True(got.IsTranslationEnabled)                       // translations on
	is.Equal(got.Controls.Values.Email.Body, brandPage)     // new body
	c.Do(t, "GET", "/v2/layouts/"+l.ID, "").Decode(t, &got) // by _id
	is.Equal(got.LayoutID, "brand")                         // same layout

	res = c.Do(t, "POST", "/v2/layouts/brand/preview", `{"previewPayload":{"subscriber":{"firstName":"Ada"}}}`)
	is.Equal(res.Status, http.StatusCreated) // preview
	var preview struct {
		Result struct {
			Type    string `json:"type"`
			Preview struct {
				Body string `json:"body"`
			} `json:"preview"`
		} `json:"result"`
		PreviewPayloadExample struct {
			Subscriber map[string]any `json:"subscriber"`
		} `json:"previewPayloadExample"`
	}
	res.Decode(t, &preview)
	is.Equal(preview.Result.Type, "email")                                              // an email
	is.True(strings.HasPrefix(preview.Result.Preview.Body, "<html><body><h1></h1><p>")) // rendered around a stand-in body
	is.Equal(preview.PreviewPayloadExample.Subscriber["firstName"], "Ada")              // the subscriber used
	res = c.Do(t, "POST", "/v2/layouts/brand/preview", `{"controlValues":{"email":{"body":"<html><body>{{subscriber.firstName}}:{{content}}</body></html>","editorType":"html"}},"previewPayload":{"subscriber":{"firstName":"Ada"}}}`)
	res.Decode(t, &preview)
	is.True(strings.HasPrefix(preview.Result.Preview.Body, "<html><body>Ada:<p>")) // the body the request gives

	res = c.Do(t, "POST", "/v2/layouts/brand/duplicate", `{"name":"Brand copy"}`)
	is.Equal(res.Status, http.StatusCreated) // duplicated
	var dup layoutBody
	res.Decode(t, &dup)
	is.True(strings.HasPrefix(dup.LayoutID, "brand-copy-")) // layoutId from the name
	is.Equal(dup.Controls.Values.Email.Body, brandPage)     // the body copied
	is.True(!dup.IsDefault && dup.ID != got.ID)             // a new layout

	c.Do(t, "GET", "/v2/layouts?limit=2&orderBy=name&orderDirection=ASC", "").Decode(t, &list)
	is.Equal(list.TotalCount, 3)                 // every layout counted
	is.Equal(len(list.Layouts), 2)               // a page of two
	is.Equal(list.Layouts[0].Name, "Brand")      // by name
	is.Equal(list.Layouts[1].Name, "Brand copy") // ascending
	c.Do(t, "GET", "/v2/layouts?query=COPY", "").Decode(t, &list)
	is.Equal(list.TotalCount, 1) // searched by name

	res = c.Do(t, "PUT", "/v2/layouts/"+dup.LayoutID, `{"name":"Bare","controlValues":null}`)
	is.Equal(res.Status, http.StatusOK) // body cleared
	var bare layoutBody
	res.Decode(t, &bare)
	is.True(bare.Controls.Values.Email == nil) // no email values

	mustCreate(t, c, `{"name":"Uses","workflowId":"uses","steps":[{"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>B</p>","layoutId":"brand"}}]}`)
	var usage struct {
		Workflows []struct {
			Name       string `json:"name"`
			WorkflowID string `json:"workflowId"`
		} `json:"workflows"`
	}
	c.Do(t, "GET", "/v2/layouts/brand/usage", "").Decode(t, &usage)
	is.Equal(len(usage.Workflows), 1)               // one workflow uses it
	is.Equal(usage.Workflows[0].WorkflowID, "uses") // named

	res = c.Do(t, "DELETE", "/v2/layouts/brand", "")
	is.Equal(res.Status, http.StatusConflict)           // in use
	is.True(strings.Contains(string(res.Body), `uses`)) // naming the workflow
	res = c.Do(t, "DELETE", "/v2/layouts/default-layout", "")
	is.Equal(res.Status, http.StatusConflict)                                                 // the default cannot go
	is.Equal(c.Do(t, "DELETE", "/v2/layouts/"+dup.LayoutID, "").Status, http.StatusNoContent) // an unused one can
	is.Equal(c.Do(t, "GET", "/v2/layouts/"+dup.LayoutID, "").Status, http.StatusNotFound)     // and is gone

	is.Equal(srv.Prod.Do(t, "GET", "/v2/layouts/brand", "").Status, http.StatusNotFound) // layouts are per environment
}

func TestLayouts_Errors(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev
	createLayout(t, c, "brand")
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"ErrMissingLayoutId", "POST", "/v2/layouts", `{"name":"x"}`, 422, "layoutId"},
		{"ErrBadLayoutId", "POST", "/v2/layouts", `{"layoutId":"a b","name":"x"}`, 422, "layoutId"},
		{"ErrTaken", "POST", "/v2/layouts", `{"layoutId":"brand","name":"x"}`, 409, "brand"},
		{"ErrNotFound", "GET", "/v2/layouts/nope", "", 404, "nope"},
		{"ErrUpdateNotFound", "PUT", "/v2/layouts/nope", `{"name":"x"}`, 404, "nope"},
		{"ErrUpdateNoName", "PUT", "/v2/layouts/brand", `{}`, 422, "name"},
		{"ErrNoSlot", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":"<html><body>hi</body></html>","editorType":"html"}}}`, 400, "content"},
		{"ErrNotAPage", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":"{{content}}","editorType":"html"}}}`, 400, "HTML"},
		{"ErrNotBlocks", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":"<html>","editorType":"block"}}}`, 400, "Maily"},
		{"ErrEditorType", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":"x","editorType":"rich"}}}`, 422, "controlValues.email.editorType"},
		{"ErrLiquid", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":"<html><body>{{content}}{% if %}</body></html>","editorType":"html"}}}`, 422, "controlValues.email.body"},
		{"ErrEmailType", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":{"email":{"body":5,"editorType":"html"}}}`, 422, "controlValues"},
		{"ErrControlsType", "PUT", "/v2/layouts/brand", `{"name":"x","controlValues":"html"}`, 422, "controlValues"},
		{"ErrDuplicateNoName", "POST", "/v2/layouts/brand/duplicate", `{}`, 422, "name"},
		{"ErrDuplicateTaken", "POST", "/v2/layouts/brand/duplicate", `{"name":"x","layoutId":"default-layout"}`, 409, "default-layout"},
		{"ErrDuplicateNotFound", "POST", "/v2/layouts/nope/duplicate", `{"name":"x"}`, 404, "nope"},
		{"ErrPreviewNotFound", "POST", "/v2/layouts/nope/preview", `{}`, 404, "nope"},
		{"ErrPreviewNoSlot", "POST", "/v2/layouts/brand/preview", `{"controlValues":{"email":{"body":"<html><body></body></html>","editorType":"html"}}}`, 400, "content"},
		{"ErrUsageNotFound", "GET", "/v2/layouts/nope/usage", "", 404, "nope"},
		{"ErrDeleteNotFound", "DELETE", "/v2/layouts/nope", "", 404, "nope"},
		{"ErrListLimit", "GET", "/v2/layouts?limit=0", "", 422, "limit"},
		{"ErrListOrder", "GET", "/v2/layouts?orderBy=size", "", 422, "orderBy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status)                      // the status
			is.True(strings.Contains(string(res.Body), tc.want)) // the message names the problem
		})
	}
}

// Syncing a workflow carries the layouts its email steps name, and the
// translations of both.
func TestLayouts_Sync(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev
	createLayout(t, c, "brand")
	quoted, _ := json.Marshal(brandPage)
	c.Do(t, "PUT", "/v2/layouts/brand", `{"name":"Brand","isTranslationEnabled":true,"controlValues":{"email":{"body":`+string(quoted)+`,"editorType":"html"}}}`)
	mustCreate(t, c, `{"name":"Uses","workflowId":"uses","isTranslationEnabled":true,"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>B</p>","layoutId":"brand"}}]}`)
	c.Do(t, "POST", "/v2/translations", `{"resourceId":"uses","resourceType":"workflow","locale":"fr_FR","content":{"a":"b"}}`)
	c.Do(t, "POST", "/v2/translations", `{"resourceId":"brand","resourceType":"layout","locale":"fr_FR","content":{"f":"g"}}`)

	res := c.Do(t, "PUT", "/v2/workflows/uses/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, http.StatusOK) // synced
	var got layoutBody
	res = srv.Prod.Do(t, "GET", "/v2/layouts/brand", "")
	is.Equal(res.Status, http.StatusOK) // the layout came along
	res.Decode(t, &got)
	is.Equal(got.Controls.Values.Email.Body, brandPage)                                               // with its body
	is.True(got.IsTranslationEnabled && !got.IsDefault)                                               // its settings, not the default
	is.Equal(srv.Prod.Do(t, "GET", "/v2/translations/workflow/uses/fr_FR", "").Status, http.StatusOK) // the workflow's translations
	is.Equal(srv.Prod.Do(t, "GET", "/v2/translations/layout/brand/fr_FR", "").Status, http.StatusOK)  // and the layout's
	res = c.Do(t, "PUT", "/v2/workflows/uses/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, http.StatusOK) // a second sync overwrites
}

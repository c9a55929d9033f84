package console_test

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// offered is the list of variables the editor page's Liquid fields offer.
func offered(t *testing.T, page string) []string {
	t.Helper()
	m := regexp.MustCompile(`data-variables="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the editor offers no variables")
	}
	var vars []string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &vars); err != nil {
		t.Fatalf("the variables are not a JSON list: %v", err)
	}
	return vars
}

func TestConsole_EditorVariables(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)

	t.Run("OK from the payload schema, the digest steps and the contexts used", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Digest","workflowId":"digest-flow",
			"payloadSchema":{"type":"object","properties":{"order":{"type":"string"},"items":{"type":"object","properties":{"count":{"type":"number"}}}}},
			"steps":[{"name":"Collect","stepId":"collect","type":"digest","controlValues":{"amount":5,"unit":"minutes"}},
				{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ steps.collect.eventCount }} for {{ context.tenant.id }}"}}]}`)
		is.Equal(res.Status, http.StatusCreated) // the workflow
		page := ed.get(devURL(srv, "workflows", "digest-flow", "edit"))
		is.Equal(page.status, http.StatusOK)
		vars := offered(t, page.body)
		for _, want := range []string{"subscriber.firstName", "subscriber.data", "actor.email", "payload.order", "payload.items.count",
			"steps.collect.events", "steps.collect.eventCount", "context.tenant.id"} {
			is.True(slices.Contains(vars, want)) // offered
		}
		is.True(strings.Contains(page.body, `data-liquid`))                                 // the Liquid fields are marked for it
		is.True(regexp.MustCompile(`/console/assets/editor.js\?v=`).MatchString(page.body)) // by the editor's script
	})

	t.Run("OK without a schema, the payload variables the templates use", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/welcome", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
			{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ payload.order.id }} {{ payload.total }} {{ payload.lines[0].sku }} {{ payload.tags.size }}"}}]}`)
		is.Equal(res.Status, http.StatusOK) // the workflow changed
		vars := offered(t, ed.get(devURL(srv, "workflows", "welcome", "edit")).body)
		is.True(slices.Contains(vars, "payload.order.id")) // used
		is.True(slices.Contains(vars, "payload.total"))    // used
		is.True(slices.Contains(vars, "payload.lines"))    // a list, not one item of it
		is.True(slices.Contains(vars, "payload.tags"))     // nor its size
		is.True(!slices.ContainsFunc(vars, func(v string) bool { return strings.Contains(v, "sku") || strings.Contains(v, "size") }))
		is.True(slices.Contains(vars, "context")) // contexts, to name
	})

	t.Run("OK the editor's script is served", func(t *testing.T) {
		is := is.New(t)
		res := ed.get("/console/assets/editor.js")
		is.Equal(res.status, http.StatusOK)
		is.True(strings.Contains(res.body, "liquid-suggest")) // the suggestions
		is.True(strings.Contains(res.body, "data-rules"))     // the rules
	})
}

func TestConsole_EditorPreviewAs(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)
	preview := devURL(srv, "workflows", "welcome", "preview")

	t.Run("OK a subscriber of the environment", func(t *testing.T) {
		is := is.New(t)
		f := editorForm("Hello {{ subscriber.firstName }}")
		f.Set("previewSubscriber", "bob")
		res := ed.post(preview, f)
		is.Equal(res.status, http.StatusOK)
		is.True(strings.Contains(res.body, "Hello Bob"))                                                 // rendered for Bob
		is.True(strings.Contains(res.body, `<option value="ada">`))                                      // the subscribers to pick from
		is.True(strings.Contains(res.body, `list="subscriber-picks"`))                                   // offered by the field
		is.True(strings.Contains(ed.get(devURL(srv, "workflows", "welcome", "edit")).body, "Hello Ada")) // the sample without one
	})

	t.Run("OK an unknown subscriber is said, and the sample stands in", func(t *testing.T) {
		is := is.New(t)
		f := editorForm("Hello {{ subscriber.firstName }}")
		f.Set("previewSubscriber", "nobody")
		res := ed.post(preview, f)
		is.Equal(res.status, http.StatusOK)
		is.True(strings.Contains(res.body, "No subscriber has this subscriberId")) // said
		is.True(strings.Contains(res.body, "Hello Ada"))                           // the sample
	})

	t.Run("OK the in-app avatar as an image, from https only", func(t *testing.T) {
		is := is.New(t)
		f := editorForm("Hi")
		f.Set("previewSubscriber", "bob")
		f.Set("s.0.c.avatar", "https://cdn.example.com/{{ subscriber.firstName }}.png")
		res := ed.post(preview, f)
		is.True(strings.Contains(res.body, `<img class="pv-avatar" src="https://cdn.example.com/Bob.png"`))          // the image
		is.True(strings.Contains(res.header.Get("Content-Security-Policy"), "img-src 'self' data: https:;"))         // which the editor's policy allows
		is.True(!strings.Contains(ed.get(devURL(srv, "workflows")).header.Get("Content-Security-Policy"), "https:")) // and no other page's

		f.Set("s.0.c.avatar", "http://cdn.example.com/a.png")
		res = ed.post(preview, f)
		is.True(!strings.Contains(res.body, `<img class="pv-avatar"`))      // not over http
		is.True(strings.Contains(res.body, "http://cdn.example.com/a.png")) // shown as text
	})
}

func TestConsole_EditorVersionDiff(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)
	res := srv.Dev.Do(t, "PUT", "/v2/workflows/welcome", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"subject":"Welcome!","body":"Good day {{ subscriber.firstName }}"}}]}`)
	is.New(t).Equal(res.Status, http.StatusOK) // version 2
	edit := devURL(srv, "workflows", "welcome", "edit")

	t.Run("OK two versions side by side", func(t *testing.T) {
		is := is.New(t)
		res := ed.get(edit + "?diff=2&from=1")
		is.Equal(res.status, http.StatusOK)
		row := regexp.MustCompile(`(?s)<tr data-path="steps\.[a-z-]+\.controlValues\.body">.*?</tr>`).FindString(res.body)
		is.True(row != "")                                                                                                                             // the body changed
		is.True(strings.Contains(row, `<td class="diff-removed">Hello {{ subscriber.firstName }}</td>`))                                               // as it was
		is.True(strings.Contains(row, `<td class="diff-added">Good day {{ subscriber.firstName }}</td>`))                                              // as it is
		is.True(regexp.MustCompile(`data-path="steps\.[a-z-]+"><th scope="row"><code>[^<]+</code> <span class="muted">removed`).MatchString(res.body)) // the email step, removed
		is.True(strings.Contains(res.body, "Version 1</th>"))                                                                                          // the columns
	})

	t.Run("OK the same version twice, and none before the first", func(t *testing.T) {
		is := is.New(t)
		is.True(strings.Contains(ed.get(edit+"?diff=2&from=2").body, "are the same")) // nothing to show
		res := ed.get(edit + "?diff=1&from=0")
		is.True(strings.Contains(res.body, "Version (none)"))   // from nothing
		is.True(strings.Contains(res.body, `data-path="name"`)) // everything added
	})

	t.Run("Err no such version, or none named", func(t *testing.T) {
		is := is.New(t)
		res := ed.get(edit + "?diff=9")
		is.Equal(res.status, http.StatusOK)                          // the page
		is.True(strings.Contains(res.body, "Version 9 of workflow")) // says so
		res = ed.get(edit + "?diff=x")
		is.Equal(res.status, http.StatusOK)                        // the page
		is.True(strings.Contains(res.body, "Choose two versions")) // says so
	})
}

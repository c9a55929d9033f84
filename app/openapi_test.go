package app_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// fragmentFor is the openapi.yaml that describes the routes registered in file.
func fragmentFor(file string) string {
	dir := filepath.ToSlash(filepath.Dir(file))
	if dir == "." {
		dir = "platform" // the root package serves the platform's routes only (metrics on its own address)
	}
	return dir + "/openapi.yaml"
}

func TestOpenAPI_EveryRouteIsDescribedAndEveryDescribedRouteRegistered(t *testing.T) {
	spec, err := platformtest.LoadSpec()
	if err != nil {
		t.Fatalf("API description: %v", err)
	}
	routes := platformtest.RegisteredRoutes(t)
	if len(routes) < 30 {
		t.Fatalf("found only %d registered routes; the source scan is broken", len(routes))
	}
	for _, pattern := range slices.Sorted(func(yield func(string) bool) {
		for p := range routes {
			if !yield(p) {
				return
			}
		}
	}) {
		if _, ok := spec.Origins[pattern]; !ok {
			frag := fragmentFor(routes[pattern])
			method, path, _ := strings.Cut(pattern, " ")
			t.Errorf("route %q (registered in %s) is not described: add %s under paths: %s: in %s "+
				"(and, for a new package, list that file in OpenAPI in app/wire.go)",
				pattern, routes[pattern], strings.ToLower(method), path, frag)
		}
	}
	for op, frag := range spec.Origins {
		if _, ok := routes[op]; !ok {
			t.Errorf("%s is described in %s, but no routes.go registers it: register it or remove it from %s", op, frag, frag)
		}
	}
}

func TestOpenAPI_DocumentIsComplete(t *testing.T) {
	spec, err := platformtest.LoadSpec()
	if err != nil {
		t.Fatalf("API description: %v", err)
	}
	for _, err := range spec.CheckDocument() {
		t.Error(err)
	}
}

func TestOpenAPI_WireServesEveryFragmentOfTheSource(t *testing.T) {
	is := is.New(t)
	source, err := platformtest.SourceFragments()
	is.NoErr(err) // the source tree's fragments
	var names, wired []string
	for _, f := range source {
		names = append(names, f.Name)
	}
	for _, f := range app.OpenAPI {
		wired = append(wired, f.Name)
		i := slices.IndexFunc(source, func(s platform.Fragment) bool { return s.Name == f.Name })
		if i >= 0 && !bytes.Equal(source[i].YAML, f.YAML) {
			t.Errorf("%s: app/wire.go embeds another file than the source's", f.Name)
		}
	}
	slices.Sort(names)
	slices.Sort(wired)
	is.Equal(wired, names) // every package's openapi.yaml is listed in OpenAPI in app/wire.go
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestOpenAPI_DocumentedRoutesAnswer sends every described operation to a
// running Herald, with placeholder ids and an empty object for a body: each
// must reach a handler (no router 404 or 405), and each answer, mostly
// errors, must match the description (Client.Do checks).
func TestOpenAPI_DocumentedRoutesAnswer(t *testing.T) {
	spec, err := platformtest.LoadSpec()
	if err != nil {
		t.Fatalf("API description: %v", err)
	}
	c := apptest.NewServer(t).Dev
	for op := range spec.Origins {
		method, path, _ := strings.Cut(op, " ")
		path = pathParam.ReplaceAllString(path, "placeholder")
		body := ""
		if method == "POST" || method == "PUT" || method == "PATCH" {
			body = "{}"
		}
		res := c.Do(t, method, path, body)
		if res.Status == 405 {
			t.Errorf("%s: 405, the router does not serve this method", op)
		}
		var e struct {
			Message any `json:"message"`
		}
		if res.Status == 404 && json.Unmarshal(res.Body, &e) == nil && strings.HasPrefix(e.Message.(string), "Cannot ") {
			t.Errorf("%s: the router has no such route: %s", op, res.Body)
		}
	}
}

func TestOpenAPI_ServedAndShown(t *testing.T) {
	is := is.New(t)
	base := apptest.NewServer(t).URL
	status, body := call(t, "GET", base+"/openapi.json", "", "")
	is.Equal(status, 200) // served without a key
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	is.NoErr(json.Unmarshal(body, &doc))                    // JSON
	is.Equal(doc.OpenAPI, "3.1.0")                          // OpenAPI 3.1
	is.True(doc.Paths["/v1/events/trigger"]["post"] != nil) // with the domains' paths merged in
	spec, err := platformtest.LoadSpec()
	is.NoErr(err)                                          // the source's description
	is.True(bytes.Equal(bytes.TrimSpace(body), spec.JSON)) // the served document is the source's
	status, page := call(t, "GET", base+"/docs", "", "")
	is.Equal(status, 200)                                                    // the page, without a key
	is.True(bytes.Contains(page, []byte(`spec-url="/openapi.json"`)))        // reads the document from this origin
	is.True(bytes.Contains(page, []byte(`src="/docs/redoc.standalone.js"`))) // with the renderer of this origin
	is.True(!bytes.Contains(page, []byte("https://")))                       // and nothing from elsewhere
	status, _ = call(t, "GET", base+"/docs/redoc.standalone.js", "", "")
	is.Equal(status, 200) // the renderer, without a key
}

// TestOpenAPI_IdempotencyKeyOnlyWhereServed: the idempotency-key header is
// listed on the operations behind the API key, whose middleware acts on it,
// and not on those served outside it (the inbox's, with a subscriber token
// or none), which would ignore it.
func TestOpenAPI_IdempotencyKeyOnlyWhereServed(t *testing.T) {
	spec, err := platformtest.LoadSpec()
	if err != nil {
		t.Fatalf("API description: %v", err)
	}
	for _, tc := range []struct {
		path, method string
		listed       bool
	}{
		{"/v1/events/trigger", "post", true},
		{"/v1/subscribers/{subscriberId}", "delete", true},
		{"/healthz", "get", false},
		{"/v1/inbox/session", "post", false},
		{"/v1/inbox/notifications/{id}/read", "patch", false},
		{"/v1/inbox/notifications/read", "post", false},
		{"/socket.io/", "get", false},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			op, ok := spec.Doc["paths"].(map[string]any)[tc.path].(map[string]any)[tc.method].(map[string]any)
			is.True(ok) // the operation is described
			params, _ := op["parameters"].([]any)
			listed := slices.ContainsFunc(params, func(p any) bool {
				m, _ := p.(map[string]any)
				return m["$ref"] == "#/components/parameters/IdempotencyKey"
			})
			is.Equal(listed, tc.listed) // idempotency-key is listed exactly where the API key's middleware serves it
		})
	}
}

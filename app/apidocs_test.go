package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/net/html"

	"github.com/herald-notify/herald/app/apptest"
)

// TestOpenAPI_IsValidOpenAPI31 loads the document Herald serves with
// kin-openapi, a validator that reads OpenAPI 3.1, and fails on each error
// it finds: a client's generator or renderer reads the same document and
// stumbles on what this rejects (a stray key from an unquoted YAML comma,
// a field out of place, two paths that differ only by a parameter's name).
func TestOpenAPI_IsValidOpenAPI31(t *testing.T) {
	base := apptest.NewServer(t).URL
	status, body := call(t, "GET", base+"/openapi.json", "", "")
	if status != 200 {
		t.Fatalf("GET /openapi.json: %d", status)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatalf("the served document does not load as OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("the document says openapi %q, not 3.1.0", doc.OpenAPI)
	}
	err = doc.Validate(t.Context(), openapi3.EnableMultiError())
	var all openapi3.MultiError
	if !errors.As(err, &all) {
		all = openapi3.MultiError{err}
	}
	for _, e := range all {
		if e != nil {
			t.Errorf("the served document is not valid OpenAPI 3.1: %v", e)
		}
	}
}

// The /docs test opens the page in headless Chromium (Debian's chromium; no
// npm packages), lets Redoc render the served document, and reads the DOM
// Chromium dumps. Without Chromium it skips, unless HERALD_BROWSER_TEST=1
// (set by .ci/run) makes it mandatory. HERALD_CHROMIUM names another
// Chromium binary.
func TestBrowser_APIDocs(t *testing.T) {
	chromium := chromiumFor(t)
	base := apptest.NewServer(t).URL
	_, body := call(t, "GET", base+"/openapi.json", "", "")
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("/openapi.json: %v", err)
	}
	page, err := html.Parse(bytes.NewReader(dumpDOM(t, chromium, base+"/docs")))
	if err != nil {
		t.Fatalf("the page's DOM: %v", err)
	}
	if text := visibleText(page); strings.Contains(text, "undefined") {
		i := strings.Index(text, "undefined")
		t.Errorf("the page shows %q", text[max(0, i-80):min(len(text), i+40)])
	}
	sections := operationSections(page)
	paths, _ := doc["paths"].(map[string]any)
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[path].(map[string]any)
		for method, v := range item {
			op, ok := v.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			id, _ := op["operationId"].(string)
			shown, ok := sections[id]
			if !ok {
				t.Errorf("%s %s: the page has no section operation/%s", method, path, id)
				continue
			}
			for _, want := range shownOf(doc, item, op) {
				if !strings.Contains(shown, want) {
					t.Errorf("%s %s: the page does not show %q", method, path, want)
				}
			}
		}
	}
}

// chromiumFor finds Chromium, or skips (fails under HERALD_BROWSER_TEST=1).
func chromiumFor(t *testing.T) string {
	t.Helper()
	chromium := os.Getenv("HERALD_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("HERALD_BROWSER_TEST") == "1" {
			t.Fatalf("browser test: Chromium is missing at %s (apt-get install -y chromium)", chromium)
		}
		t.Skipf("browser test skipped: no Chromium at %s; apt-get install -y chromium, or set HERALD_BROWSER_TEST=1 to fail instead", chromium)
	}
	return chromium
}

// dumpDOM loads url in headless Chromium and returns the DOM once the page
// has loaded and its timers have run for the budget: Redoc renders in
// that time, and the budget is virtual, so a fast page takes less.
func dumpDOM(t *testing.T, chromium, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=30000", "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return out
}

// visibleText is the text of the page a reader sees: that of every element
// but scripts and styles, words joined by single spaces.
func visibleText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "noscript") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// operationSections maps each operationId to the text of the section Redoc
// renders for it (id "operation/<operationId>").
func operationSections(page *html.Node) map[string]string {
	out := map[string]string{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if id, ok := strings.CutPrefix(a.Val, "operation/"); ok && a.Key == "id" {
					out[id] = visibleText(n)
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(page)
	return out
}

// shownOf lists what the page must show of an operation: the name of each
// parameter, the request body's heading and fields, and each response's
// status and fields (the fields at the top of an object schema; a choice
// of schemas shows one at a time).
func shownOf(doc, item, op map[string]any) []string {
	var want []string
	params, _ := item["parameters"].([]any)
	more, _ := op["parameters"].([]any)
	for _, p := range append(params, more...) {
		want = append(want, fmt.Sprint(resolve(doc, p)["name"]))
	}
	if body, ok := op["requestBody"]; ok {
		want = append(want, "Request Body schema")
		want = append(want, fieldsOf(doc, resolve(doc, body))...)
	}
	responses, _ := op["responses"].(map[string]any)
	for status, r := range responses {
		want = append(want, status)
		want = append(want, fieldsOf(doc, resolve(doc, r))...)
	}
	return want
}

// fieldsOf names the top-level fields of a body's JSON schema.
func fieldsOf(doc, body map[string]any) []string {
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	props, _ := resolve(doc, media["schema"])["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// resolve follows a local $ref to what it names.
func resolve(doc map[string]any, v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var at any = doc
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			next, _ := at.(map[string]any)
			at = next[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
		}
		m, _ = at.(map[string]any)
	}
	return m
}

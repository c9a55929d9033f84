package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/herald-notify/herald/app/apptest"
)

// The pages a reader follows links between: the README and docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{"README.md"}, pages...)
}

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title").
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocs_LinksResolve follows every relative link of the README and
// docs/: the file it names must exist, and its #anchor, if any, must be a
// heading of the page it names, as GitHub makes anchors of headings.
func TestDocs_LinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // page → its headings' anchors
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(b))
		return anchors[page]
	}
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, "``"), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				}
				where := fmt.Sprintf("%s:%d: %s", page, n+1, m[0])
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: no file %s", where, path)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
					t.Errorf("%s: %s has no heading whose anchor is #%s", where, path, anchor)
				}
			}
		}
	}
}

// proseLines are a page's lines with those of fenced code blocks blanked,
// so that neither a link nor a heading shown as code counts; the numbering
// stays the page's.
func proseLines(page string) []string {
	lines := strings.Split(page, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// inlineCode is code within a line: a link in it is shown, not followed.
var inlineCode = regexp.MustCompile("`[^`]*`")

// headingAnchors are the anchors GitHub gives a page's headings: the text
// lowercased, with punctuation other than '-' and '_' dropped and spaces
// made hyphens, and -1, -2, … after a repeated one.
func headingAnchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(page) {
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func slugify(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// example is one request of docs/examples.md: the `METHOD /path` line and
// the JSON block after it.
type example struct {
	line         int
	method, path string
	body         string
}

var exampleRoute = regexp.MustCompile("^`(GET|POST|PUT|PATCH|DELETE) (/[^` ]*)`$")

// examplesOf reads every JSON block of a page with the request line before
// it; a JSON block without one is an error, so that no example goes unsent.
func examplesOf(page string) ([]example, error) {
	var out []example
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```json" {
			continue
		}
		prev := i - 1
		for prev >= 0 && strings.TrimSpace(lines[prev]) == "" {
			prev--
		}
		var m []string
		if prev >= 0 {
			m = exampleRoute.FindStringSubmatch(strings.TrimSpace(lines[prev]))
		}
		if m == nil {
			return nil, fmt.Errorf("line %d: a JSON block without a `METHOD /path` line before it", i+1)
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		out = append(out, example{line: i + 1, method: m[1], path: m[2], body: strings.Join(lines[i+1:end], "\n")})
		i = end
	}
	return out, nil
}

// TestDocs_ExamplesSucceed sends the requests of docs/examples.md, in the
// page's order, to a fresh Herald with the real wiring: each must succeed,
// a workflow must come back ACTIVE with no step issue, a trigger must be
// processed, and a GET must answer at least what its block shows.
func TestDocs_ExamplesSucceed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "examples.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := examplesOf(string(b))
	if err != nil {
		t.Fatalf("docs/examples.md: %v", err)
	}
	if len(examples) < 10 {
		t.Fatalf("docs/examples.md: only %d examples found; the page or its reading is broken", len(examples))
	}
	srv := apptest.NewServer(t)
	for _, ex := range examples {
		where := fmt.Sprintf("docs/examples.md:%d: %s %s", ex.line, ex.method, ex.path)
		var want any
		if err := json.Unmarshal([]byte(ex.body), &want); err != nil {
			t.Errorf("%s: the block is not JSON: %v", where, err)
			continue
		}
		body := ex.body
		if ex.method == "GET" {
			body = ""
		}
		res := srv.Dev.Do(t, ex.method, ex.path, body)
		if res.Status/100 != 2 {
			t.Errorf("%s: answered %d: %s", where, res.Status, res.Body)
			continue
		}
		var got any
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Errorf("%s: the answer is not JSON: %v", where, err)
			continue
		}
		for _, problem := range exampleProblems(ex, want, got) {
			t.Errorf("%s: %s", where, problem)
		}
	}
}

// exampleProblems says what is wrong with the answer to an example beyond
// its status.
func exampleProblems(ex example, want, got any) []string {
	answer, _ := got.(map[string]any)
	switch {
	case ex.method == "GET":
		if !contains(got, want) {
			return []string{fmt.Sprintf("the answer does not hold what the page shows; it is %v", got)}
		}
	case ex.path == "/v1/events/trigger":
		if answer["status"] != "processed" {
			return []string{fmt.Sprintf("the trigger answered status %v", answer["status"])}
		}
	case strings.HasPrefix(ex.path, "/v2/workflows"):
		var out []string
		if answer["status"] != "ACTIVE" {
			out = append(out, fmt.Sprintf("the workflow's status is %v", answer["status"]))
		}
		steps, _ := answer["steps"].([]any)
		for _, s := range steps {
			step, _ := s.(map[string]any)
			if issues, ok := step["issues"]; ok {
				out = append(out, fmt.Sprintf("step %v has issues: %v", step["name"], issues))
			}
		}
		return out
	}
	return nil
}

// contains reports whether got holds want: an object every key of want with
// a value that holds want's, an array an element holding each of want's,
// any other value an equal one.
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, v := range w {
			if !slices.ContainsFunc(g, func(e any) bool { return contains(e, v) }) {
				return false
			}
		}
		return true
	}
	return got == want
}

package platformtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/herald-notify/herald/platform"
)

// Every response a test reads through Client.Do is checked against the API
// description (docs/operations.md, "API description"): the operation its
// request matched must document its status, and its JSON body must validate
// against that response's schema. The description is merged from every
// package's openapi.yaml in the source tree, as a client reads
// /openapi.json.
//
// The schemas are checked with santhosh-tekuri/jsonschema, which Herald
// already uses for payload schemas: OpenAPI 3.1's schema objects are JSON
// Schema 2020-12, which it implements in full, so no OpenAPI library (and
// no 3.0-era subset of JSON Schema) stands between the document and the
// check.

// Spec is the API description, ready to check responses.
type Spec struct {
	Doc     map[string]any
	JSON    []byte
	Origins map[string]string // "METHOD /path" → the fragment describing it
	mux     *http.ServeMux    // the documented paths, to match requests as Herald's mux does

	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

var (
	specOnce sync.Once
	spec     *Spec
	specErr  error
)

// LoadSpec returns the description merged from the source tree's fragments.
func LoadSpec() (*Spec, error) {
	specOnce.Do(func() { spec, specErr = loadSpec() })
	return spec, specErr
}

// ModuleRoot is the directory of go.mod, found upwards from the working
// directory (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// SourceFragments reads every package's openapi.yaml from the source tree,
// the platform's (the document's head) first.
func SourceFragments() ([]platform.Fragment, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	nested, err := filepath.Glob(filepath.Join(root, "*", "*", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	files = append(files, nested...)
	slices.SortFunc(files, func(a, b string) int {
		pa, pb := filepath.Base(filepath.Dir(a)) == "platform", filepath.Base(filepath.Dir(b)) == "platform"
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []platform.Fragment
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		out = append(out, platform.Fragment{Name: filepath.ToSlash(rel), YAML: b})
	}
	return out, nil
}

func loadSpec() (*Spec, error) {
	fragments, err := SourceFragments()
	if err != nil {
		return nil, err
	}
	return NewSpec(fragments...)
}

// NewSpec merges fragments into a Spec.
func NewSpec(fragments ...platform.Fragment) (*Spec, error) {
	b, err := platform.MergeOpenAPI(fragments...)
	if err != nil {
		return nil, err
	}
	origins, err := platform.OpenAPIOrigins(fragments...)
	if err != nil {
		return nil, err
	}
	s := &Spec{JSON: b, Origins: origins, mux: http.NewServeMux(), schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(b, &s.Doc); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	s.compiler = jsonschema.NewCompiler()
	s.compiler.DefaultDraft(jsonschema.Draft2020)
	if err := s.compiler.AddResource(specURL, doc); err != nil {
		return nil, err
	}
	for op := range origins {
		pattern := op
		s.mux.Handle(pattern, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	}
	return s, nil
}

const specURL = "https://herald.invalid/openapi.json"

// Operation returns the documented operation ("METHOD /path") a request
// matches, or "" when none does.
func (s *Spec) Operation(method, path string) string {
	r, err := http.NewRequest(method, path, nil)
	if err != nil {
		return ""
	}
	_, pattern := s.mux.Handler(r)
	return pattern
}

// CheckResponse checks a response to method and path, escaped as sent (an
// id holding "?" or "/" would match another route unescaped). A request
// that matches no documented operation is not checked: the route tests
// catch undocumented routes.
func (s *Spec) CheckResponse(method, path string, status int, header http.Header, body []byte) error {
	op := s.Operation(method, path)
	if op == "" {
		return nil
	}
	m, p, _ := strings.Cut(op, " ")
	base := "/paths/" + pointerEscape(p) + "/" + strings.ToLower(m) + "/responses"
	responses, _ := s.at(base).(map[string]any)
	key := fmt.Sprint(status)
	if _, ok := responses[key]; !ok {
		key = fmt.Sprintf("%dXX", status/100)
		if _, ok := responses[key]; !ok {
			key = "default"
		}
	}
	res, ok := responses[key].(map[string]any)
	if !ok {
		return fmt.Errorf("%s answered %d, which %s does not document for it", op, status, s.Origins[op])
	}
	at := base + "/" + pointerEscape(key)
	if ref, ok := res["$ref"].(string); ok {
		at = strings.TrimPrefix(ref, "#")
		res, _ = s.at(at).(map[string]any)
	}
	content, _ := res["content"].(map[string]any)
	ctype, _, _ := strings.Cut(header.Get("Content-Type"), ";")
	if len(content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("%s answered %d with a body, which %s documents without one", op, status, s.Origins[op])
		}
		return nil
	}
	media, ok := content[ctype].(map[string]any)
	if !ok {
		return fmt.Errorf("%s answered %d as %q, which %s does not document for it", op, status, ctype, s.Origins[op])
	}
	if ctype != "application/json" || media["schema"] == nil {
		return nil
	}
	schema, err := s.schema(at + "/content/" + pointerEscape(ctype) + "/schema")
	if err != nil {
		return fmt.Errorf("%s: %v", s.Origins[op], err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s answered %d with a body that is not JSON: %v", op, status, err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Errorf("%s answered %d with a body that does not match %s: %v\nbody: %s", op, status, s.Origins[op], err, truncate(body, 2000))
	}
	return nil
}

func (s *Spec) schema(pointer string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[pointer]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(specURL + "#" + pointer)
	if err != nil {
		return nil, err
	}
	s.schemas[pointer] = sch
	return sch, nil
}

// at returns the document's value at a JSON pointer.
func (s *Spec) at(pointer string) any {
	var v any = s.Doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[tok]
	}
	return v
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// checkSpec fails the test when a response disagrees with the description.
func checkSpec(t testing.TB, req *http.Request, res *http.Response, body []byte, compat bool) {
	t.Helper()
	if compat && res.StatusCode < 300 && len(bytes.TrimSpace(body)) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		bare, err := platform.CompatUnwrap(body)
		if err != nil {
			t.Errorf("compat answer of %s %s: %v", req.Method, req.URL.Path, err)
			return
		}
		body = bare
	}
	s, err := LoadSpec()
	if err != nil {
		t.Errorf("API description: %v", err)
		return
	}
	if err := s.CheckResponse(req.Method, req.URL.EscapedPath(), res.StatusCode, res.Header, body); err != nil {
		t.Errorf("response of %s %s disagrees with the API description: %v", req.Method, req.URL.Path, err)
	}
}

// CheckDocument checks what a client's tooling needs of the document
// beyond what responses exercise: each operation has a unique operationId,
// a summary and responses, each response a description, and every schema of
// a request body or response compiles (so every $ref resolves).
func (s *Spec) CheckDocument() []error {
	var errs []error
	ids := map[string]string{}
	for op, frag := range s.Origins {
		m, p, _ := strings.Cut(op, " ")
		base := "/paths/" + pointerEscape(p) + "/" + strings.ToLower(m)
		o, _ := s.at(base).(map[string]any)
		id, _ := o["operationId"].(string)
		switch {
		case id == "":
			errs = append(errs, fmt.Errorf("%s in %s has no operationId", op, frag))
		case ids[id] != "":
			errs = append(errs, fmt.Errorf("%s in %s repeats the operationId %q of %s", op, frag, id, ids[id]))
		}
		ids[id] = op
		if o["summary"] == nil {
			errs = append(errs, fmt.Errorf("%s in %s has no summary", op, frag))
		}
		var pointers []string
		if body, ok := o["requestBody"].(map[string]any); ok && body["$ref"] == nil {
			pointers = append(pointers, base+"/requestBody/content/application~1json/schema")
		}
		responses, _ := o["responses"].(map[string]any)
		if len(responses) == 0 {
			errs = append(errs, fmt.Errorf("%s in %s has no responses", op, frag))
		}
		for status, r := range responses {
			at := base + "/responses/" + pointerEscape(status)
			res, _ := r.(map[string]any)
			if ref, ok := res["$ref"].(string); ok {
				at = strings.TrimPrefix(ref, "#")
				res, _ = s.at(at).(map[string]any)
			}
			if res == nil || res["description"] == nil {
				errs = append(errs, fmt.Errorf("%s in %s: response %s has no description", op, frag, status))
				continue
			}
			if s.at(at+"/content/application~1json/schema") != nil {
				pointers = append(pointers, at+"/content/application~1json/schema")
			}
		}
		for _, ptr := range pointers {
			if s.at(ptr) == nil {
				continue
			}
			if _, err := s.schema(ptr); err != nil {
				errs = append(errs, fmt.Errorf("%s in %s: %v", op, frag, err))
			}
		}
	}
	return errs
}

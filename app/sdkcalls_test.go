package app_test

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// sdkCall is one HTTP call a reference client makes: the client's name for
// it and its route, "METHOD /path" with each parameter written {name}.
type sdkCall struct {
	name, route string
}

// compatRow is one row of a table in docs/compatibility.md.
type compatRow struct {
	call, route string
	served      bool
	line        int
}

// nodeCallPattern finds the older Node client's HTTP calls in its compiled
// source: this.http.get("/path"…), this.http.post(…), and so on.
var nodeCallPattern = regexp.MustCompile(`this\.http\.(get|post|put|patch|delete)\(`)

// nodeMethodPattern finds where each of its methods begins.
var nodeMethodPattern = regexp.MustCompile(`(\w+)\.prototype\.(\w+) = function`)

// nodeCalls enumerates the HTTP calls of @novu/node's compiled library
// under lib (build/main/lib), spec files left out. Its base URL ends in
// /v1, so each path is put under it.
func nodeCalls(t *testing.T, lib string) []sdkCall {
	t.Helper()
	var out []sdkCall
	err := filepath.WalkDir(lib, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".spec.js") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(src)
		methods := nodeMethodPattern.FindAllStringSubmatchIndex(text, -1)
		for _, at := range nodeCallPattern.FindAllStringSubmatchIndex(text, -1) {
			verb := strings.ToUpper(text[at[2]:at[3]])
			name, start := "?", 0
			for _, m := range methods {
				if m[0] < at[0] {
					name, start = text[m[2]:m[3]]+"."+text[m[4]:m[5]], m[0]
				}
			}
			arg := firstArgument(text[at[1]:])
			path, ok := evalPath(arg, text, text[start:at[0]])
			if !ok {
				t.Errorf("%s: cannot read the path %q of %s", path, arg, name)
				continue
			}
			out = append(out, sdkCall{name: name, route: verb + " /v1/" + strings.TrimPrefix(path, "/")})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstArgument is the text of a call's first argument: up to the first
// comma or closing parenthesis outside strings and nested calls.
func firstArgument(s string) string {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth == 0, c == ',' && depth == 0:
			return strings.TrimSpace(s[:i])
		case c == ')':
			depth--
		}
	}
	return s
}

var (
	identPattern  = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*`)
	stringPattern = regexp.MustCompile(`^(?:"[^"]*"|'[^']*')`)
)

// evalPath evaluates a path expression of the compiled client: string
// literals joined by .concat(…), where a name is a constant of the file
// (BASE_PATH), a variable the method assigned before the call (url), or
// else a parameter, written {name}.
func evalPath(expr, file, method string) (string, bool) {
	p := &pathParser{src: expr, file: file, method: method}
	v, ok := p.expr()
	return v, ok && strings.TrimSpace(p.src) == ""
}

type pathParser struct {
	src, file, method string
	depth             int
}

func (p *pathParser) expr() (string, bool) {
	p.src = strings.TrimSpace(p.src)
	var v string
	if s := stringPattern.FindString(p.src); s != "" {
		v, p.src = s[1:len(s)-1], p.src[len(s):]
	} else if id := identPattern.FindString(p.src); id != "" {
		id = strings.TrimSuffix(id, ".concat")
		p.src = p.src[len(id):]
		v = p.resolve(id)
	} else {
		return "", false
	}
	for strings.HasPrefix(p.src, ".concat(") {
		p.src = p.src[len(".concat("):]
		for {
			arg, ok := p.expr()
			if !ok {
				return "", false
			}
			v += arg
			p.src = strings.TrimSpace(p.src)
			if strings.HasPrefix(p.src, ",") {
				p.src = p.src[1:]
				continue
			}
			if !strings.HasPrefix(p.src, ")") {
				return "", false
			}
			p.src = p.src[1:]
			break
		}
	}
	return v, true
}

// resolve is a name's value: the expression assigned to it in the method
// or the file, or {last part of the name} for a parameter.
func (p *pathParser) resolve(id string) string {
	if p.depth < 4 && !strings.Contains(id, ".") {
		for _, scope := range []string{p.method, p.file} {
			re := regexp.MustCompile(`(?:^|var |const |\s)` + regexp.QuoteMeta(id) + ` = ([^;]+);`)
			if m := re.FindStringSubmatch(scope); m != nil {
				inner := &pathParser{src: m[1], file: p.file, method: p.method, depth: p.depth + 1}
				if v, ok := inner.expr(); ok && strings.TrimSpace(inner.src) == "" {
					return v
				}
			}
		}
	}
	return "{" + id[strings.LastIndex(id, ".")+1:] + "}"
}

// apiOperationPattern reads an @novu/api operation's path and method from
// its source file (src/funcs/<operation>.ts).
var (
	apiPathPattern   = regexp.MustCompile(`pathToFunc\(\s*"([^"]+)"`)
	apiMethodPattern = regexp.MustCompile(`method: "([A-Z]+)"`)
)

// apiOperations enumerates @novu/api's operations from dir (its
// src/funcs): one file each, named for the operation.
func apiOperations(t *testing.T, dir string) []sdkCall {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.ts"))
	if err != nil {
		t.Fatal(err)
	}
	var out []sdkCall
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		path, method := apiPathPattern.FindSubmatch(src), apiMethodPattern.FindSubmatch(src)
		if path == nil || method == nil {
			continue // a helper, not an operation
		}
		out = append(out, sdkCall{name: strings.TrimSuffix(filepath.Base(f), ".ts"), route: string(method[1]) + " " + string(path[1])})
	}
	return out
}

// compatTable reads the table under the heading that starts with heading
// in docs/compatibility.md: | `call` | `METHOD /path` | yes or no | why |.
func compatTable(t *testing.T, heading string) []compatRow {
	t.Helper()
	root, err := platformtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []compatRow
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, heading)
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("docs/compatibility.md:%d: a row needs call, route, served and why", n)
		}
		served := strings.TrimSpace(cells[3])
		if served != "yes" && served != "no" {
			t.Fatalf("docs/compatibility.md:%d: served is yes or no, not %q", n, served)
		}
		rows = append(rows, compatRow{call: strings.Trim(strings.TrimSpace(cells[1]), "`"),
			route: strings.Trim(strings.TrimSpace(cells[2]), "`"), served: served == "yes", line: n})
	}
	return rows
}

// paramPattern matches a route's parameters, whatever their names.
var paramPattern = regexp.MustCompile(`\{[^}]*\}`)

// servedPattern is the pattern of srv's mux that serves route, a sample
// value in each parameter; "" when none does (a 404 or a 405).
func servedPattern(srv *apptest.Server, route string) string {
	method, path, _ := strings.Cut(route, " ")
	path = paramPattern.ReplaceAllString(path, "x1")
	_, pattern := srv.Mux.Handler(httptest.NewRequest(method, path, nil))
	return pattern
}

// suggestRows writes a table row for each call, served or not as srv's
// mux says, for a writer of docs/compatibility.md to complete.
func suggestRows(srv *apptest.Server, calls []sdkCall) string {
	var rows []string
	for _, c := range calls {
		served := "no"
		if servedPattern(srv, c.route) != "" {
			served = "yes"
		}
		rows = append(rows, fmt.Sprintf("| `%s` | `%s` | %s | |", c.name, c.route, served))
	}
	sort.Strings(rows)
	return strings.Join(rows, "\n")
}

// checkCompatTable fails when the table misses a call of the client, names
// one the client does not make, or says served for a route the mux does not
// serve, or not served for one it does.
func checkCompatTable(t *testing.T, calls []sdkCall, rows []compatRow) {
	t.Helper()
	srv := apptest.NewServer(t)
	norm := func(route string) string { return paramPattern.ReplaceAllString(route, "{}") }
	key := func(name, route string) string { return name + " " + norm(route) }
	documented := map[string]compatRow{}
	for _, r := range rows {
		documented[key(r.call, r.route)] = r
	}
	made := map[string]bool{}
	var missing []sdkCall
	for _, c := range calls {
		made[key(c.name, c.route)] = true
		if _, ok := documented[key(c.name, c.route)]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/compatibility.md has no row for these calls; add them, saying why where not served:\n%s", suggestRows(srv, missing))
	}
	for _, r := range rows {
		if !made[key(r.call, r.route)] {
			t.Errorf("docs/compatibility.md:%d: the client makes no call %s %s", r.line, r.call, r.route)
		}
		switch pattern := servedPattern(srv, r.route); {
		case r.served && pattern == "":
			t.Errorf("docs/compatibility.md:%d: says %s is served, but no route of Herald serves it", r.line, r.route)
		case !r.served && pattern != "":
			t.Errorf("docs/compatibility.md:%d: says %s is not served, but %q serves it: say yes", r.line, r.route, pattern)
		}
	}
}

// TestCompatibilityDoc_NovuNode checks the table of @novu/node 2.6.6's
// calls in docs/compatibility.md against the calls its compiled library
// makes (testdata/novu-node) and the routes Herald serves.
func TestCompatibilityDoc_NovuNode(t *testing.T) {
	lib := filepath.Join("testdata", "novu-node", "node_modules", "@novu", "node", "build", "main", "lib")
	if _, err := os.Stat(lib); err != nil {
		t.Skip("@novu/node is not installed; run: (cd app/testdata/novu-node && npm ci) && go test -run TestCompatibilityDoc ./app")
	}
	calls := nodeCalls(t, lib)
	if len(calls) < 90 {
		t.Fatalf("found only %d calls in %s: the enumeration is broken", len(calls), lib)
	}
	checkCompatTable(t, calls, compatTable(t, "## `@novu/node`"))
}

// TestCompatibilityDoc_NovuAPI does the same for @novu/api 3.19.1's
// operations (testdata/novu-api), once its section has a table.
func TestCompatibilityDoc_NovuAPI(t *testing.T) {
	dir := filepath.Join("testdata", "novu-api", "node_modules", "@novu", "api", "src", "funcs")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("@novu/api is not installed; run: (cd app/testdata/novu-api && npm ci) && go test -run TestCompatibilityDoc ./app")
	}
	ops := apiOperations(t, dir)
	if len(ops) < 100 {
		t.Fatalf("found only %d operations in %s: the enumeration is broken", len(ops), dir)
	}
	rows := compatTable(t, "## `@novu/api`")
	if len(rows) == 0 {
		t.Logf("rows to complete:\n%s", suggestRows(apptest.NewServer(t), ops))
		t.Skipf("docs/compatibility.md has no table of @novu/api's %d operations yet; the rows above are a start", len(ops))
	}
	checkCompatTable(t, ops, rows)
}

// TestCompatibilityDoc_ReadsNodePaths checks the path reader on the forms
// the compiled client writes.
func TestCompatibilityDoc_ReadsNodePaths(t *testing.T) {
	file := `var BASE_PATH = '/topics';`
	method := `url = "/subscribers/".concat(subscriberId, "/preferences");`
	for _, tc := range []struct{ expr, want string }{
		{`"/layouts"`, "/layouts"},
		{`'/integrations/active'`, "/integrations/active"},
		{`"/layouts/".concat(layoutId)`, "/layouts/{layoutId}"},
		{`"".concat(BASE_PATH, "/").concat(topicKey, "/subscribers")`, "/topics/{topicKey}/subscribers"},
		{`"/subscribers/".concat(subscriberId, "/preferences/").concat(shared_1.PreferenceLevelEnum.GLOBAL)`, "/subscribers/{subscriberId}/preferences/{GLOBAL}"},
		{`url`, "/subscribers/{subscriberId}/preferences"},
		{`BASE_PATH`, "/topics"},
	} {
		got, ok := evalPath(tc.expr, file, method)
		if !ok || got != tc.want {
			t.Errorf("evalPath(%s) = %q, %v; want %q", tc.expr, got, ok, tc.want)
		}
	}
	if _, ok := evalPath(`"/a" + b`, file, method); ok {
		t.Errorf("an expression it cannot read is read")
	}
	if got := firstArgument(`"/x/".concat(a, "/y"), { b: 1 })`); got != `"/x/".concat(a, "/y")` {
		t.Errorf("firstArgument = %q", got)
	}
}

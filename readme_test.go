package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReadme_ListsEveryRoute fails when a route registered on a mux is
// missing from the README's endpoint table, or the table lists a route no
// code registers. A new route needs one row: | METHOD | `/path` | what it does |.
func TestReadme_ListsEveryRoute(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := listedRoutes(string(readme))
	registered := registeredRoutes(t)
	if len(registered) == 0 {
		t.Fatal("no registered route found: the scan for mux.Handle calls is broken")
	}
	for _, r := range registered {
		if !slices.Contains(listed, r) {
			t.Errorf("route %q is registered but missing from the README's endpoint table", r)
		}
	}
	for _, r := range listed {
		if !slices.Contains(registered, r) {
			t.Errorf("the README lists %q, which no code registers", r)
		}
	}
}

// tableRow is one row of the endpoint table: | GET | `/v1/x` | … |.
var tableRow = regexp.MustCompile("^\\| *(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) *\\| *`([^`]+)` *\\|")

// listedRoutes returns "METHOD /path" for every row of the README's
// endpoint table.
func listedRoutes(readme string) []string {
	var out []string
	for _, line := range strings.Split(readme, "\n") {
		if m := tableRow.FindStringSubmatch(line); m != nil {
			out = append(out, m[1]+" "+m[2])
		}
	}
	return out
}

// registeredRoutes returns the pattern of every Handle or HandleFunc call
// with a method-and-path literal in the module's non-test code: what the
// server's muxes route. The benchmark's own servers are not Herald's.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "bench" || d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			pattern, err := strconv.Unquote(lit.Value)
			if err == nil && tableRow.MatchString("| "+strings.Replace(pattern, " ", " | `", 1)+"` |") {
				out = append(out, pattern)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

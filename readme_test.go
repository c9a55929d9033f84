package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herald-notify/herald/platform/platformtest"
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
	var registered []string
	for pattern := range platformtest.RegisteredRoutes(t) {
		registered = append(registered, pattern)
	}
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

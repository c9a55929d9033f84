package provider

import (
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestCatalog_Documented: docs/providers.md has a row for every provider.
func TestCatalog_Documented(t *testing.T) {
	is := is.New(t)
	doc, err := os.ReadFile("../../docs/providers.md")
	is.NoErr(err) // the page exists
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` |"); ok && strings.HasPrefix(line, "| `") {
			rows[id] = line
		}
	}
	for _, ch := range []string{"email", "sms", "push", "chat", "in_app"} {
		for _, id := range Supported(ch) {
			row, ok := rows[id]
			if !ok {
				t.Errorf("docs/providers.md has no row for %s", id)
				continue
			}
			info, _ := Lookup(id)
			if dials := !strings.HasSuffix(row, "| shape |"); dials != info.Dials {
				t.Errorf("docs/providers.md says %s's check dials: %v; it does: %v", id, dials, info.Dials)
			}
		}
	}
}

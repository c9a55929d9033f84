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
	for _, ch := range []string{"email", "sms", "push", "chat", "in_app"} {
		for _, id := range Supported(ch) {
			if !strings.Contains(string(doc), "| `"+id+"` |") {
				t.Errorf("docs/providers.md has no row for %s", id)
			}
		}
	}
}

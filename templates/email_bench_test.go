package templates_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herald-notify/herald/templates"
)

// longEmail is an email body of about size bytes using vars payload
// variables in turn, as an author writes a long email.
func longEmail(size, vars int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "<p>Line %d of the order mail for {{ payload.v%d }}: the parcel left the warehouse and is on its way to you.</p>\n",
			i, i%vars)
	}
	return b.String()
}

// BenchmarkRenderEmail50KB renders a 50 KB email body of 20 variables as
// the editor's preview does while the author types: each round a body
// that differs from the last, so no earlier parse is reused.
func BenchmarkRenderEmail50KB(b *testing.B) {
	body := longEmail(50<<10, 20)
	payload := map[string]any{}
	for i := range 20 {
		payload[fmt.Sprintf("v%d", i)] = fmt.Sprintf("value %d", i)
	}
	i := 0
	for b.Loop() {
		i++
		vars := map[string]any{"payload": payload}
		templates.ShareBudget(vars)
		out, _, err := templates.RenderEmail(body+fmt.Sprintf("<p>edit %d</p>", i), "html", vars, false)
		if err != nil || !strings.Contains(out, "value 19") {
			b.Fatalf("%v %.200s", err, out)
		}
	}
}

// BenchmarkRenderEmail50KBFresh is BenchmarkRenderEmail50KB with every
// line different each round, so that no part of any earlier parse is
// reused either: the cost of parsing a long body from nothing.
func BenchmarkRenderEmail50KBFresh(b *testing.B) {
	payload := map[string]any{}
	for i := range 20 {
		payload[fmt.Sprintf("v%d", i)] = fmt.Sprintf("value %d", i)
	}
	i := 0
	for b.Loop() {
		i++
		body := strings.ReplaceAll(longEmail(50<<10, 20), "<p>Line", fmt.Sprintf("<p>Round %d, line", i))
		vars := map[string]any{"payload": payload}
		templates.ShareBudget(vars)
		out, _, err := templates.RenderEmail(body, "html", vars, false)
		if err != nil || !strings.Contains(out, "value 19") {
			b.Fatalf("%v %.200s", err, out)
		}
	}
}

// BenchmarkRenderEmail50KBTyping is BenchmarkRenderEmail50KB with the
// author typing in the middle of the body: each round one more character
// there, which moves everything after it.
func BenchmarkRenderEmail50KBTyping(b *testing.B) {
	body := longEmail(50<<10, 20)
	mid := strings.Index(body[len(body)/2:], "parcel") + len(body)/2
	payload := map[string]any{}
	for i := range 20 {
		payload[fmt.Sprintf("v%d", i)] = fmt.Sprintf("value %d", i)
	}
	typed := ""
	for b.Loop() {
		typed += string(rune('a' + len(typed)%26))
		vars := map[string]any{"payload": payload}
		templates.ShareBudget(vars)
		out, _, err := templates.RenderEmail(body[:mid]+typed+" "+body[mid:], "html", vars, false)
		if err != nil || !strings.Contains(out, "value 19") {
			b.Fatalf("%v %.200s", err, out)
		}
	}
}

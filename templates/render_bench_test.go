package templates_test

import (
	"testing"

	"github.com/herald-notify/herald/templates"
)

// BenchmarkRender renders an email's HTML and an in-app body as one step
// of a delivery does, with a budget of their own: the same sources every
// time, so after the first round both come from the parse cache and what
// is measured is the render alone.
func BenchmarkRender(b *testing.B) {
	html := `<h1>Hi {{ payload.name | upcase }}</h1>{% for i in payload.items %}<p>{{ i.t }}</p>{% endfor %}<p>{{ payload.n | plus: 1 }}</p>`
	text := `{{ payload.name }} has {{ payload.items | size }} new items`
	payload := map[string]any{"name": "<b>Ada</b>", "items": []any{map[string]any{"t": "a"}, map[string]any{"t": "b"}}, "n": 3}
	for b.Loop() {
		vars := map[string]any{"payload": payload}
		templates.ShareBudget(vars)
		if _, err := templates.RenderHTML(html, vars, false); err != nil {
			b.Fatal(err)
		}
		if _, err := templates.RenderText(text, vars); err != nil {
			b.Fatal(err)
		}
	}
}

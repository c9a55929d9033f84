package templates_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/templates"
)

// A long template is parsed in parts (split.go); these check that it
// renders and fails exactly as the same template parsed whole would.

// repeated renders piece alone and n times over in one long template, and
// returns both: the long one must be the short one's output n times.
func repeated(t *testing.T, piece string, n int, vars map[string]any) (one, all string) {
	t.Helper()
	one, err := templates.RenderHTML(piece, vars, false)
	if err != nil {
		t.Fatalf("the piece: %v", err)
	}
	all, err = templates.RenderHTML(strings.Repeat(piece, n), vars, false)
	if err != nil {
		t.Fatalf("the long template: %v", err)
	}
	return one, all
}

func TestRender_LongTemplateInParts(t *testing.T) {
	vars := map[string]any{"payload": map[string]any{"name": "<b>Ada</b>", "n": 3, "items": []any{"a", "b"}, "kind": "x"}}

	t.Run("OK blocks, loops, case, filters and trims render as whole", func(t *testing.T) {
		is := is.New(t)
		piece := "<p>A plain line</p>\n<p>Hi {{ payload.name | upcase }},</p>\n" +
			"<p>{{ payload.n -}}\n\n<p>text after a trim</p>\n<p>more text</p>{{- payload.n }}\n" +
			"{% if payload.n > 2 %}<p>many</p>\n{% else %}<p>few</p>\n{% endif %}\n" +
			"<ul>{% for i in payload.items %}<li>{{ forloop.index }} {{ i }}</li>\n{% endfor %}</ul>\n" +
			"{% case payload.kind %}{% when 'x' %}<p>x kind</p>{% else %}<p>other</p>{% endcase %}\n" +
			"<p>{{ payload.n -}}\n   \n  {{- payload.n }}</p>\n" +
			"{%- unless payload.missing -%}\n  <p>kept</p>\n{%- endunless %}\n"
		one, all := repeated(t, piece, 120, vars) // well past the size a template is cut at
		is.True(len(piece)*120 > 32<<10)          // long
		is.Equal(all, strings.Repeat(one, 120))   // the same as each piece rendered alone
	})

	t.Run("OK a variable assigned early is seen late", func(t *testing.T) {
		is := is.New(t)
		filler := strings.Repeat("<p>a line of a long email, long enough to be cut somewhere</p>\n", 600)
		out, err := templates.RenderHTML("{% assign who = payload.name %}\n"+filler+"<p>{{ who }}</p>\n"+
			"{% capture c %}captured{% endcapture %}"+filler+"{{ c }}", vars, false)
		is.NoErr(err)
		is.True(strings.HasSuffix(out, "<p>&lt;b&gt;Ada&lt;/b&gt;</p>\n"+filler+"captured")) // state carried through the whole template
	})

	t.Run("OK a block open across the whole email", func(t *testing.T) {
		is := is.New(t)
		filler := strings.Repeat("<p>line {{ payload.n }}</p>\n", 800)
		out, err := templates.RenderHTML("{% if payload.n %}\n"+filler+"{% endif %}", vars, false)
		is.NoErr(err)
		is.Equal(out, "\n"+strings.Repeat("<p>line 3</p>\n", 800)) // rendered whole
	})

	t.Run("Err a failure deep in a long email says where it is", func(t *testing.T) {
		is := is.New(t)
		lines := strings.Repeat("<p>line {{ payload.n }}</p>\n", 700)
		for _, c := range []struct {
			bad, want string
			line      int // 0: the failure names no place
		}{
			{"<p>{{ payload.name | bogus }}</p>", "bogus", 701},   // a parse error
			{"<p>{{ payload.n | slice: 1, -1 }}</p>", "slice", 0}, // a filter that panics while rendering
			{"<p>{% if payload.n %}never closed</p>", "if", 0},    // a block left open
		} {
			src := lines + c.bad + "\n" + lines
			_, err := templates.RenderHTML(src, vars, false)
			is.True(err != nil) // fails
			pos, msg, ok := templates.Locate(src, err)
			is.True(strings.Contains(msg, c.want)) // says why
			if c.line > 0 {
				is.True(ok)                // and where
				is.Equal(pos.Line, c.line) // on its line
			}
		}
	})
}

package templates

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestRenderText(t *testing.T) {
	var vars map[string]any
	json.Unmarshal([]byte(`{"subscriber":{"firstName":"ada"},"payload":{"n":3,"price":2.5,"items":["a","b"],"user":{"name":"Bea"}},
		"steps":{"digest":{"eventCount":2,"events":[{"payload":{"x":1}},{"payload":{"x":2}}]}}}`), &vars)
	vars = Normalize(vars).(map[string]any)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"OK plain text untouched", "Hello", "Hello"},
		{"OK variable", "Hi {{ payload.user.name }}", "Hi Bea"},
		{"OK upcase filter", "{{ subscriber.firstName | upcase }}", "ADA"},
		{"OK missing variable renders empty", "[{{ payload.nope }}][{{ nothing.at.all }}]", "[][]"},
		{"OK default filter", `{{ payload.nope | default: "friend" }}`, "friend"},
		{"OK whole number", "{{ payload.n }}", "3"},
		{"OK fraction", "{{ payload.price }}", "2.5"},
		{"OK size", "{{ payload.items | size }}", "2"},
		{"OK loop over digest events", "{% for e in steps.digest.events %}{{ e.payload.x }}{% endfor %} of {{ steps.digest.eventCount }}", "12 of 2"},
		{"OK condition", "{% if payload.n > 2 %}many{% else %}few{% endif %}", "many"},
		{"OK object prints as JSON", "{{ payload.user }}", `{"name":"Bea"}`},
		{"OK objects in an array print as JSON", "{{ steps.digest.events }}", `{"payload":{"x":1}}{"payload":{"x":2}}`},
		{"OK assigned object keeps its fields", "{% assign u = payload.user %}{{ u.name }}", "Bea"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := RenderText(tc.src, vars)
			is.NoErr(err)          // renders
			is.Equal(got, tc.want) // as Liquid does
		})
	}
	t.Run("ErrSyntax", func(t *testing.T) {
		is := is.New(t)
		_, err := RenderText("{% if %}", vars)
		is.True(err != nil) // a broken tag is an error, not a silent empty string
	})
	for _, src := range []string{
		"x {{ payload.n | nosuchfilter }}",
		"{% assign a = payload.n | nosuchfilter %}",
		"{% for i in (1..payload.n) %}{{ i | nosuchfilter }}{% endfor %}",
		"{% for i in (1..3) | nosuchfilter %}{% endfor %}",
		"{% capture c %}{{ payload.n | nosuchfilter }}{% endcapture %}",
	} {
		t.Run("ErrNamesTheTemplateAsWritten "+src, func(t *testing.T) {
			is := is.New(t)
			_, err := RenderHTML(src, vars, false)
			is.True(err != nil)                                    // an unknown filter fails the step
			is.True(strings.Contains(err.Error(), "nosuchfilter")) // naming it
			is.True(!strings.Contains(err.Error(), "herald"))      // in the author's words, not the guards'
		})
	}
}

func TestRenderHTML(t *testing.T) {
	var vars map[string]any
	json.Unmarshal([]byte(`{"payload":{"name":"<script>alert('x')</script>","q":"a\"b","n":3,"items":["<b>","ok"],"html":"<b>hi</b>"}}`), &vars)
	vars = Normalize(vars).(map[string]any)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"OK text value escaped", "<p>{{ payload.name }}</p>", "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</p>"},
		{"OK attribute value escaped", `<a href="{{ payload.q }}">x</a>`, `<a href="a&#34;b">x</a>`},
		{"OK filters run before escaping", "{{ payload.name | upcase | truncate: 11 }}", "&lt;SCRIPT&gt;..."},
		{"OK an explicit escape is not doubled", "{{ payload.q | escape }} {{ payload.q | escape_once }}", "a&#34;b a&#34;b"},
		{"OK number untouched", "{{ payload.n | plus: 1 }}", "4"},
		{"OK array items escaped", "{{ payload.items }}", "&lt;b&gt;ok"},
		{"OK loop item escaped", "{% for i in payload.items %}[{{ i }}]{% endfor %}", "[&lt;b&gt;][ok]"},
		{"OK trim markers kept", "a {{- payload.n -}} b", "a3b"},
		{"OK filter argument with markup", `{{ payload.missing | default: "<i>" }}`, "&lt;i&gt;"},
		{"OK line break around the expression", "{{\n payload.n\n}}", "3"},
		{"OK line break inside the expression stays text", "{{ payload.n\n | plus: 1 }}", "{{ payload.n\n | plus: 1 }}"},
		{"OK empty braces stay text", "{{}}", "{{}}"},
		{"OK literal markup untouched", "<b>{{ payload.n }}</b>", "<b>3</b>"},
		{"OK raw block untouched", "{% raw %}{{ payload.name }}{% endraw %}", "{{ payload.name }}"},
		{"OK missing variable renders empty", "[{{ payload.nope }}]", "[]"},
		{"OK lone brace", "a { b {{ payload.n }}", "a { b 3"},
		{"OK object printed as escaped JSON", "{{ payload }}", "{&#34;html&#34;:&#34;&lt;b&gt;hi&lt;/b&gt;&#34;,&#34;items&#34;:[&#34;&lt;b&gt;&#34;,&#34;ok&#34;],&#34;n&#34;:3,&#34;name&#34;:&#34;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#34;,&#34;q&#34;:&#34;a\\&#34;b&#34;}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := RenderHTML(tc.src, vars, false)
			is.NoErr(err)          // renders
			is.Equal(got, tc.want) // values escaped, markup kept
		})
	}
	t.Run("OK disableOutputSanitization keeps values raw", func(t *testing.T) {
		is := is.New(t)
		got, err := RenderHTML("<p>{{ payload.html }}</p>", vars, true)
		is.NoErr(err)                     // renders
		is.Equal(got, "<p><b>hi</b></p>") // as written by the payload
	})
	t.Run("OK plain text is never escaped", func(t *testing.T) {
		is := is.New(t)
		got, err := RenderText("{{ payload.html }}", vars)
		is.NoErr(err)              // renders
		is.Equal(got, "<b>hi</b>") // text channels carry the value as it is
	})
}

func TestRenderLimits(t *testing.T) {
	var vars map[string]any
	json.Unmarshal([]byte(`{"payload":{"s":"hello","n":-1,"big":100000000,"three":3,"items":["a","b","c"],"holes":[null,"a"],"m":{"x":1,"y":2}}}`), &vars)
	vars = Normalize(vars).(map[string]any)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"OK loop over a range", "{% for i in (1..3) %}{{ i }}{% endfor %}", "123"},
		{"OK loop modifiers", "{% for i in payload.items reversed limit: 2 %}{{ i }}{% endfor %}", "cb"},
		{"OK loop offset with trim markers", "{%- for i in payload.items offset: 1 -%}{{ i }}{%- endfor -%}", "bc"},
		{"OK loop over a map", "{% for p in payload.m %}{{ p[0] }}={{ p[1] }};{% endfor %}", "x=1;y=2;"},
		{"OK loop bounded by the payload", "{% for i in (2..payload.three) %}{{ i }}{% endfor %}", "23"},
		{"OK forloop variables", "{% for i in payload.items %}{{ forloop.index }}/{{ forloop.length }} {% endfor %}", "1/3 2/3 3/3 "},
		{"OK tablerow", "{% tablerow i in (1..2) cols: 2 %}{{ i }}{% endtablerow %}", `<tr class="row1"><td class="col1">1</td><td class="col2">2</td></tr>`},
		{"OK capture", "{% capture greeting %}Hi {{ payload.s }}{% endcapture %}{{ greeting | upcase }}", "HI HELLO"},
		{"OK assign with filters", `{% assign x = payload.s | append: "!" | prepend: "<" %}{{ x }}`, "<hello!"},
		{"OK range through a filter", `{{ (1..3) | join: "," }} {% assign r = (2..payload.three) %}{{ r | join: "+" }}`, "1,2,3 2+3"},
		{"OK range text in a string is text", `{{ "(1..2)" }} {{ 'a(1..2)' | append: "(3..4)" }}`, "(1..2) a(1..2)(3..4)"},
		{"OK huge range in a loop still iterates lazily", "{% for i in (1..100000000000) limit: 2 %}{{ i }}{% endfor %}", "12"},
		{"OK replace and join", `{{ payload.s | replace: "l", "L" }} {{ payload.items | join: "-" }} {{ payload.items | concat: payload.items | size }}`, "heLLo a-b-c 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := RenderText(tc.src, vars)
			is.NoErr(err)          // renders
			is.Equal(got, tc.want) // as Liquid does, limits aside
		})
	}
	for _, tc := range []struct{ name, src, want string }{
		{"Err a loop that would never end", "{% for i in (1..100000000) %}{% for j in (1..100000000) %}{% endfor %}{% endfor %}", "iterations"},
		{"Err a loop bounded by the payload", "{% for i in (1..payload.big) %}{% endfor %}", "iterations"},
		{"Err a capture that doubles itself", "{% assign s = \"xxxxxxxxxxxxxxxx\" %}{% for i in (1..40) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}", "larger"},
		{"Err an append that doubles itself", "{% assign s = \"x\" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}", "larger"},
		{"Err a replace that squares", "{% assign s = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" %}{% for i in (1..10) %}{% assign s = s | replace: \"a\", s %}{% endfor %}", "larger"},
		{"Err output past the limit", `{% assign s = payload.s %}{% for i in (1..14) %}{% assign s = s | append: s %}{% endfor %}` +
			"{% for i in (1..100) %}{{ s }}{% endfor %}", "larger"}, // 80 KB a write, within the time limit even under -race
		{"Err a huge range made an array", "{{ (1..100000000000) | join }}", "template"},
		{"Err a huge assigned range made an array", "{% assign r = (1..payload.big) %}{{ r | concat: r | size }}", "template"},
		{"Err a filter that panics", "{{ payload.s | slice: 1, payload.n }}", "slice bounds"},
		{"Err a compact that panics", "{{ payload.holes | uniq | compact }}", "template"},
		{"Err an integer the parser panics on", "{{10000000000000000000}}", "out of range"},
		{"Err include reads no file", `{% include "/etc/hostname" %}`, "include is not supported"},
		{"Err a reassigned budget", "{% assign __herald_loop_budget = 5 %}{% for i in (1..2) %}{% endfor %}", "loops are not available"},
		// Within both limits above, but a 4 MB upcase on each of 100,000
		// iterations would run for minutes.
		{"Err a loop past the time limit", `{% assign s = "xxxxxxxxxxxxxxxx" %}{% for i in (1..18) %}{% assign s = s | append: s %}{% endfor %}` +
			`{% for i in (1..100000) %}{% assign y = s | upcase %}{% endfor %}`, "took longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			if tc.want != "took longer" {
				liftRenderTime(t)
			}
			_, err := RenderText(tc.src, vars)
			is.True(err != nil)                             // refused, quickly, without crashing the worker
			is.True(strings.Contains(err.Error(), tc.want)) // saying why
		})
	}
	t.Run("Err an array of objects printed past the limit", func(t *testing.T) {
		is := is.New(t)
		liftRenderTime(t)
		big := map[string]any{"payload": map[string]any{"ms": []any{map[string]any{"k": strings.Repeat("x", 1000)}}}}
		src := `{% assign a = payload.ms %}{% for i in (1..19) %}{% assign a = a | concat: a %}{% endfor %}`
		for _, out := range []string{"{{ a }}", "{{ a | size }}{{ a | first }}{{ a }}"} {
			_, err := RenderHTML(src+out, big, false)
			is.True(err != nil)                              // half a million 1 KB objects are never all printed
			is.True(strings.Contains(err.Error(), "larger")) // saying why
		}
	})
}

// A step's templates share one budget (ShareBudget), and once its time is
// spent every way a template can go on doing work fails.
func TestRenderTimeLimit(t *testing.T) {
	spent := func() map[string]any {
		return map[string]any{"payload": map[string]any{"s": "hi"},
			loopBudgetVar: &renderBudget{left: maxLoopIterations, deadline: time.Now().Add(-time.Millisecond)}}
	}
	for _, tc := range []struct{ name, src string }{
		{"a loop", "{% for i in (1..2) %}{% endfor %}"},
		{"an assign", "{% assign x = payload.s %}"},
		{"a capture", "{% capture x %}{{ payload.s }}{% endcapture %}"},
		{"an output", "{{ payload.s }}"},
		{"an output that renders empty", "{{ payload.s | slice: 0, 0 }}"}, // writes nothing
		{"a case", "{% case payload.s | upcase %}{% endcase %}"},
		{"a loop over nothing", "{% for c in payload.s | split: ',' | slice: 0, 0 %}{% endfor %}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := RenderText(tc.src, spent())
			is.True(err != nil)                                        // refused
			is.True(strings.Contains(err.Error(), ErrTooSlow.Error())) // for the time
		})
	}
	t.Run("plain text needs no time", func(t *testing.T) {
		is := is.New(t)
		out, err := RenderText("no Liquid here", spent())
		is.NoErr(err)
		is.Equal(out, "no Liquid here")
	})
	t.Run("a step's templates share it", func(t *testing.T) {
		is := is.New(t)
		vars := map[string]any{"payload": map[string]any{"s": "hi"}}
		ShareBudget(vars)
		_, err := RenderText("{{ payload.s }}", vars)
		is.NoErr(err) // in time
		vars[loopBudgetVar].(*renderBudget).deadline = time.Now().Add(-time.Millisecond)
		_, err = RenderText("{{ payload.s }}", vars)
		is.True(err != nil && strings.Contains(err.Error(), ErrTooSlow.Error())) // the next template draws on the same budget
	})
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		ok        bool
	}{
		{"OK plain text", "no Liquid here", true},
		{"OK output and tag", "{% if payload.x %}{{ payload.x | upcase }}{% endif %}", true},
		{"OK the largest integer", "{{9223372036854775807}}", true},
		{"Err an unclosed block", "{% if payload.x %} open", false},
		{"Err an unknown tag", "{% foo %}", false},
		{"Err an unclosed output", "Hi {{ payload.x ", false},
		{"Err an unclosed raw block", "{% raw %}{{ x }}", false},
		{"Err an integer past int64", "{{10000000000000000000}}", false}, // Liquid's parser panics on it
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := Parse(tc.src)
			is.Equal(err == nil, tc.ok) // parses, or says why not
		})
	}
}

// FuzzParse checks that no template makes Parse panic: workflow handlers
// call it on every control value a client sends.
func FuzzParse(f *testing.F) {
	for _, src := range []string{"{{ payload.x }}", "{% for i in (1..3) %}{{ i }}{% endfor %}",
		"{% case a %}{% when 1 %}x{% endcase %}", "{% raw %}{{ x }}{% endraw %}", "{{10000000000000000000}}",
		"{% assign x = a | split: ',' %}", "{% cycle 'a', 'b' %}", "{{ a[0].b | default: 'c' }}"} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_ = Parse(src)
	})
}

// liftRenderTime lets a test of the loop and size limits meet them before
// the time limit, which a loaded machine can reach first.
func liftRenderTime(t *testing.T) {
	old := maxRenderTime
	maxRenderTime = time.Minute
	t.Cleanup(func() { maxRenderTime = old })
}

func TestTranslate(t *testing.T) {
	is := is.New(t)
	keys := FlattenKeys(map[string]any{"hello": "Bonjour {{ subscriber.firstName }}", "cta": map[string]any{"open": "Ouvrir"}, "n": 3})
	missing := map[string]bool{}
	out := Translate(`{{t.hello}} · {{ t.cta.open }} · {{T.gone}} · {{ payload.t }}`, keys, missing)
	is.Equal(out, `Bonjour {{ subscriber.firstName }} · Ouvrir · gone · {{ payload.t }}`) // references replaced, others kept
	is.Equal(SortedKeys(missing), []string{"gone"})                                       // the missing key noted
	v := TranslateValue(map[string]any{"a": []any{"{{t.cta.open}}", 1}}, keys, nil)
	is.Equal(v, map[string]any{"a": []any{"Ouvrir", 1}}) // inside objects and arrays
}

package templates_test

import (
	"testing"

	"github.com/herald-notify/herald/templates"
	"github.com/matryer/is"
)

func TestCheck(t *testing.T) {
	payloadOnly := func(path []string) bool { return path[0] == "payload" }
	for _, tc := range []struct {
		name, src string
		want      []templates.Problem
	}{
		{"OK plain text", "no Liquid here", nil},
		{"OK an allowed variable with filters", `{{ payload.name | upcase | default: "x" }}`, nil},
		{"OK variables the template defines", "{% for i in payload.items %}{{ i.x }}{{ forloop.index }}{% endfor %}" +
			"{% assign a = payload.a %}{{ a }}{% capture c %}x{% endcapture %}{{ c }}", nil},
		{"OK a raw block is text", "{% raw %}{{ nope }}{% endraw %}", nil},
		{"Err an unknown variable, named once", "{{ user.name }} {% if user.name %}{% endif %}", []templates.Problem{
			{Variable: "user.name", Message: "Variable user.name is not supported"}}},
		{"Err a string where a number belongs", `{{ payload.n | plus: "a" }}`, []templates.Problem{
			{Variable: "payload.n", BadFilter: true, Message: `filter "plus" of payload.n needs a number as argument 1`}}},
		{"Err a missing argument", "{{ payload.s | truncate }}", []templates.Problem{
			{Variable: "payload.s", BadFilter: true, Message: `filter "truncate" of payload.s needs 1 argument(s), got 0`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(templates.Check(tc.src, payloadOnly), tc.want) // the template's problems, each once
		})
	}
	t.Run("OK paths reach allowed as segments", func(t *testing.T) {
		is := is.New(t)
		var paths [][]string
		templates.Check("{{ payload.items[0].x }}{{ payload.m[k] }}", func(path []string) bool {
			paths = append(paths, path)
			return true
		})
		is.Equal(paths, [][]string{{"payload", "items", "0", "x"}, {"k"}, {"payload", "m", "*"}}) // a variable key is checked itself, and any key allowed
	})
}

package templates

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name, src    string
		render       bool
		line, column int
		message      string
	}{
		{name: "unclosed output", src: "Hello\n  {{ payload.order", line: 2, column: 3, message: "a {{ or {% is never closed"},
		{name: "unterminated block", src: "a\nb {% if x %}c", line: 2, column: 3, message: `unterminated "if" block in {% if x %}`},
		{name: "unknown filter", src: "line1\nline2 {{ x | bogus }}", render: true, line: 2, column: 7, message: `undefined filter "bogus" in {{ x | bogus }}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var err error
			if tc.render {
				_, err = RenderText(tc.src, map[string]any{"x": 1})
			} else {
				err = Parse(tc.src)
			}
			is.True(err != nil) // the template fails
			pos, msg, ok := Locate(tc.src, err)
			is.True(ok)                                                      // a place is found
			is.Equal([]int{pos.Line, pos.Column}, []int{tc.line, tc.column}) // where the fault is
			is.True(len(msg) > 0 && msg[0] != 't')                           // the message does not repeat the template
			is.True(strings.Contains(msg, tc.message))                       // the cause is kept
			is.True(!strings.Contains(msg, "Liquid error"))                  // without Liquid's own, wrong, place
		})
	}
	t.Run("NoPlace", func(t *testing.T) {
		is := is.New(t)
		_, err := RenderText("{{ x | slice: 1, -1 }}", map[string]any{"x": 5})
		is.True(err != nil) // the filter panics
		_, msg, _ := Locate("{{ x | slice: 1, -1 }}", err)
		is.True(msg != "") // a message all the same
	})
}

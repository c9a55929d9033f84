package templates

import (
	"fmt"
	"html"
	"reflect"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// htmlEscapeFilter is the filter prepareTemplate appends to every output of an
// email's HTML: it escapes strings (and the strings inside arrays) and leaves
// numbers, booleans and nil alone.
const htmlEscapeFilter = "herald_html_escape"

func init() { liquidEngine.RegisterFilter(htmlEscapeFilter, escapeHTMLValue) }

// escapeHTMLValue is the value of an output made safe to place in HTML text
// or a quoted attribute.
func escapeHTMLValue(v any) (any, error) {
	v, err := printable(v)
	if err != nil || v == nil {
		return nil, err
	}
	return escapeHTML(v), nil
}

func escapeHTML(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return html.EscapeString(rv.String())
	case reflect.Slice, reflect.Array:
		if b, ok := v.([]byte); ok {
			return html.EscapeString(string(b))
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = escapeHTML(rv.Index(i).Interface())
		}
		return out
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return v
	}
	return html.EscapeString(fmt.Sprint(v))
}

// prepareTemplate rewrites a template before Liquid parses it: every tag
// and output keeps to the limits of guard.go (guardTag, guardOutput) and,
// when escape is set, every {{ expression }} becomes {{ expression | herald_html_escape }},
// so interpolated values cannot inject markup into HTML (a step opts out
// with disableOutputSanitization, false by default). Literal text is left
// as it is; raw and comment bodies are copied untouched. The template is
// cut as Check cuts it (scan), so a {{ or {% that never closes is an error
// here too rather than text in a message.
func prepareTemplate(src string, escape bool) (string, error) {
	segs, err := scan(src)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, seg := range segs {
		switch seg.kind {
		case segTag:
			b.WriteString("{%" + guardTag(seg.body) + "%}")
		case segOutput:
			b.WriteString(guardOutput(guardRanges(seg.body), escape))
		default:
			b.WriteString(seg.src)
		}
	}
	return b.String(), nil
}

// alreadyEscaped matches an output whose last filter escapes it already, as
// templates written for unescaped output do: escaping twice would show
// entities to the reader.
var alreadyEscaped = regexp.MustCompile(`\|\s*(?:escape|escape_once)$`)

// guardOutput is the output tag holding expr, with the escape filter when
// escape is set (unless expr escapes itself) and then the limit filter of
// guard.go, which also times the output: an output that renders empty
// writes nothing, so the writer's own check never sees it. Whitespace-trim
// markers are kept in place.
func guardOutput(expr string, escape bool) string {
	left, right := "", ""
	if strings.HasPrefix(expr, "-") {
		left, expr = "-", expr[1:]
	}
	if strings.HasSuffix(expr, "-") {
		right, expr = "-", expr[:len(expr)-1]
	}
	core := strings.TrimSpace(expr)
	if core == "" || strings.Contains(core, "\n") {
		// Liquid reads these as text, not outputs.
		return "{{" + left + expr + right + "}}"
	}
	filters := ""
	if escape && !alreadyEscaped.MatchString(core) {
		filters = " | " + htmlEscapeFilter
	}
	filters += outputCall
	trimmed := strings.TrimRight(expr, " \t\r\n")
	return "{{" + left + trimmed + filters + expr[len(trimmed):] + right + "}}"
}

// inAppPolicy sanitizes in-app text that holds markup, unless the step
// sets disableOutputSanitization, as the reference platform sanitizes
// in-app output: an inbox may render it as HTML, and a payload must not
// put a script there. Formatting, links and images stay; scripts,
// event handlers and javascript: URLs go. bluemonday's policies may be
// used from many goroutines.
var inAppPolicy = bluemonday.UGCPolicy()

// markupStart is where HTML markup begins: a tag, an end tag, a comment or
// a declaration.
var markupStart = regexp.MustCompile(`<[a-zA-Z!/?]`)

// SanitizeInApp is in-app text s with its markup sanitized. Text without
// markup is left as written, so "Tom & Jerry <3" stays as it is rather
// than become entities that an inbox showing text would print.
func SanitizeInApp(s string) string {
	if !markupStart.MatchString(s) {
		return s
	}
	return inAppPolicy.Sanitize(s)
}

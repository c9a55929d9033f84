package messaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/osteele/liquid"
	liquidexpr "github.com/osteele/liquid/expressions"
)

// liquidEngine renders every template. Liquid is what the reference platform
// and its users write ({{ payload.name | upcase }}, docs/api.md,
// "Delivery"); a missing variable renders empty rather than failing, as in
// liquidjs.
var liquidEngine = liquid.NewEngine()

// renderText renders one Liquid template against vars.
func renderText(src string, vars map[string]any) (string, error) {
	return render(src, vars, false)
}

// renderHTML renders one Liquid template of HTML against vars: unless raw,
// every interpolated value is HTML-escaped, so a payload cannot inject markup.
func renderHTML(src string, vars map[string]any, raw bool) (string, error) {
	return render(src, vars, !raw)
}

// render renders src within the limits of guard.go, drawing on the budget
// vars carries (a step's templates share one: bindings), or on one of its
// own. Liquid's filters can panic on odd arguments ({{ s | slice: 1, -1 }});
// a panic, like a spent budget, becomes an error, since deliveries run
// outside any HTTP recovery.
func render(src string, vars map[string]any, escape bool) (out string, err error) {
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") {
		return src, nil
	}
	budget, ok := vars[loopBudgetVar].(*renderBudget)
	if !ok {
		budget = newRenderBudget()
	}
	bindings := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		bindings[k] = v
	}
	bindings[loopBudgetVar] = budget
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("template %q: %v", truncate(src, 80), renderCause(r))
		}
	}()
	prepared, perr := prepareTemplate(src, escape)
	if perr != nil {
		return "", fmt.Errorf("template %q: %v", truncate(src, 80), perr)
	}
	tpl, perr := parseCached(prepared)
	if perr != nil {
		return "", fmt.Errorf("template %q: %s", truncate(src, 80), unguard(perr.Error()))
	}
	w := cappedWriter{budget: budget}
	if err := tpl.FRender(&w, bindings); err != nil {
		return "", fmt.Errorf("template %q: %v", truncate(src, 80), renderCause(err))
	}
	return w.b.String(), nil
}

// ParseTemplate reports whether src parses as a template deliveries can
// render (the same engine, filters and tags), without rendering it: a
// workflow's templates are checked when it is written, so a step that
// could never render is an issue to fix rather than a failure at every
// trigger (workflows.TemplateParser).
func ParseTemplate(src string) error {
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") {
		return nil
	}
	prepared, err := prepareTemplate(src, false)
	if err != nil {
		return err
	}
	if _, err := parseTemplate(prepared); err != nil {
		return errors.New(unguard(err.Error()))
	}
	return nil
}

// parseTemplate parses src with the engine deliveries render with. Liquid's
// parser panics on some input ({{10000000000000000000}}, an integer past
// int64): that template cannot be parsed either. Workflow handlers parse
// outside any render's recover, and a panic there was a 500 for a workflow
// already stored, and for every later read of it.
func parseTemplate(src string) (tpl *liquid.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			tpl, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return liquidEngine.ParseTemplate([]byte(src))
}

// Parsed templates, by source: every delivery of a step renders the same
// controls, and parsing cost more than rendering. A parsed template is only
// read while rendering, so renders share it.
var (
	parsedMu sync.Mutex
	parsed   = map[string]*liquid.Template{}
)

// maxParsed bounds the parsed-template cache; past it, it starts over.
// Only sources up to maxParsedSource bytes are kept, so the cache stays
// within a few tens of megabytes.
const (
	maxParsed       = 1024
	maxParsedSource = 16 << 10
)

// parseCached parses src, or returns its earlier parse. Failures are not
// cached.
func parseCached(src string) (*liquid.Template, error) {
	parsedMu.Lock()
	tpl := parsed[src]
	parsedMu.Unlock()
	if tpl != nil {
		return tpl, nil
	}
	tpl, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	if len(src) > maxParsedSource {
		return tpl, nil
	}
	parsedMu.Lock()
	if len(parsed) >= maxParsed {
		parsed = map[string]*liquid.Template{}
	}
	parsed[src] = tpl
	parsedMu.Unlock()
	return tpl, nil
}

// renderCause is the limit a render ran into, r being what it panicked
// with or the error it returned, else r's first line (Liquid appends a
// stack trace). A limit a filter or tag reports reaches here inside
// Liquid's wrappers, which name the guard's own filters.
func renderCause(r any) any {
	for e, depth := r, 0; e != nil && depth < 10; depth++ {
		err, ok := e.(error)
		if !ok {
			break
		}
		for _, limit := range []error{errLoopBudget, errTooLarge, errTooSlow} {
			if errors.Is(err, limit) {
				return limit
			}
		}
		var filter liquidexpr.FilterError
		if c, ok := err.(interface{ Cause() error }); ok {
			e = c.Cause()
		} else if errors.As(err, &filter) {
			e = filter.Err
		} else {
			e = errors.Unwrap(err)
		}
	}
	first, _, _ := strings.Cut(fmt.Sprint(r), "\n")
	return unguard(first)
}

// unguard takes guard.go's rewrites back out of a message of Liquid's,
// which quotes the tag it failed on as rewritten: the reason a step failed
// should show the template its author wrote.
func unguard(msg string) string {
	return guardText.Replace(guardedRange.ReplaceAllString(msg, "$1"))
}

var (
	guardedRange = regexp.MustCompile(`\((\([^()]*\)) \| ` + rangeFilter + `\)`)
	guardText    = strings.NewReplacer(capCall, "", outputCall, "", " | "+loopFilter+": "+loopBudgetVar, "",
		" | "+htmlEscapeFilter, "", captureBlock, "capture")
)

// renderAny renders every string inside v (objects and arrays included) and
// returns the rendered copy.
func renderAny(v any, vars map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return renderText(t, vars)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := renderAny(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := renderAny(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// normalize turns the float64 that encoding/json gives every number into an
// int when it is whole, so {{ payload.count }} renders "3", not "3.0", and
// a range such as (1..payload.count) works (Liquid converts int, not int64).
func normalize(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int(t)
		}
		return t
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	default:
		return v
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// obj returns m[key] when it is an object.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// emailBody turns an email step's body control into HTML that still holds
// its Liquid: an HTML string as it is, a block-editor (Maily/TipTap) document
// converted, or an EmailBlock array (the older editor) as blocks. blocks is
// non-nil only for the EmailBlock form, which messages store as content.
func emailBody(body any, editorType string) (htmlSrc string, blocks []emailBlock, err error) {
	switch b := body.(type) {
	case nil:
		return "", nil, nil
	case map[string]any:
		return mailyHTML(b), nil, nil
	case []any:
		raw, _ := json.Marshal(b)
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return "", nil, fmt.Errorf("body: an array must hold email blocks: %v", err)
		}
		for i := range blocks {
			if blocks[i].Type != "button" {
				blocks[i].Type = "text" // docs/api.md, "Messages": an EmailBlock is a button or text
			}
		}
		return "", blocks, nil
	case string:
		// A body that is not a JSON object is HTML, whatever editorType
		// says: clients send "block" by default, also with an HTML body.
		trimmed := strings.TrimSpace(b)
		if strings.HasPrefix(trimmed, "{") {
			var doc map[string]any
			if err := json.Unmarshal([]byte(trimmed), &doc); err == nil && str(doc, "type") == "doc" {
				return mailyHTML(doc), nil, nil
			} else if editorType == "block" {
				return "", nil, fmt.Errorf("body: the block editor needs a JSON document")
			}
		}
		return b, nil, nil
	default:
		return "", nil, fmt.Errorf("body must be a string or a block-editor document")
	}
}

// emailBlock is the EmailBlock (docs/api.md, "Messages").
type emailBlock struct {
	Type    string `json:"type"`
	Content string `json:"content"`
	URL     string `json:"url,omitempty"`
	Styles  *struct {
		TextAlign string `json:"textAlign,omitempty"`
	} `json:"styles,omitempty"`
}

// blocksHTML renders already rendered EmailBlocks as HTML.
func blocksHTML(blocks []emailBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		align := ""
		if bl.Styles != nil && bl.Styles.TextAlign != "" {
			align = ` style="text-align:` + html.EscapeString(bl.Styles.TextAlign) + `"`
		}
		switch bl.Type {
		case "button":
			fmt.Fprintf(&b, `<p%s><a href="%s" style="%s">%s</a></p>`, align, html.EscapeString(bl.URL), buttonStyle, html.EscapeString(bl.Content))
		default:
			fmt.Fprintf(&b, `<p%s>%s</p>`, align, bl.Content)
		}
	}
	return b.String()
}

// useLayout reports whether the default layout wraps the email: always,
// unless layoutId is explicitly null in the step's controls or in the
// trigger's overrides (docs/api.md, "Step controls": null means no layout).
func useLayout(controls map[string]any, overrides map[string]any, stepID string) bool {
	if v, ok := controls["layoutId"]; ok && v == nil {
		return false
	}
	if step := obj(obj(overrides, "steps"), stepID); step != nil {
		if v, ok := step["layoutId"]; ok && v == nil {
			return false
		}
	}
	if email := obj(obj(overrides, "channels"), "email"); email != nil {
		if v, ok := email["layoutId"]; ok && v == nil {
			return false
		}
	}
	return true
}

// withLayout wraps an email body in Herald's default layout: a plain,
// centred, mobile-friendly page.
func withLayout(subject, body string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1">` +
		`<title>` + html.EscapeString(subject) + `</title></head>` +
		`<body style="margin:0;padding:0;background-color:#f4f4f5;">` +
		`<div style="max-width:600px;margin:0 auto;padding:24px;background-color:#ffffff;` +
		`font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;` +
		`font-size:16px;line-height:1.5;color:#18181b;">` + body + `</div></body></html>`
}

// htmlToText is a plain-text alternative of an HTML body: tags dropped,
// block ends turned into line breaks, entities decoded.
func htmlToText(h string) string {
	var b strings.Builder
	inTag, inStyle := false, false
	var tag strings.Builder
	for _, r := range h {
		switch {
		case r == '<':
			inTag = true
			tag.Reset()
		case r == '>' && inTag:
			inTag = false
			name := ""
			if fields := strings.Fields(tag.String()); len(fields) > 0 {
				name = strings.ToLower(fields[0])
			}
			switch name {
			case "style", "title":
				inStyle = true
			case "/style", "/title":
				inStyle = false
			case "/p", "br", "br/", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "/li", "/div", "hr", "hr/", "/tr":
				b.WriteByte('\n')
			}
		case inTag:
			tag.WriteRune(r)
		case !inStyle:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(html.UnescapeString(b.String()), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

package templates

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/osteele/liquid"
	liquidexpr "github.com/osteele/liquid/expressions"
)

// liquidEngine renders every template. Liquid is what the reference platform
// and its users write ({{ payload.name | upcase }}); a missing variable
// renders empty rather than failing, as in liquidjs.
var liquidEngine = liquid.NewEngine()

// RenderText renders one Liquid template against vars.
func RenderText(src string, vars map[string]any) (string, error) {
	return render(src, vars, false)
}

// RenderHTML renders one Liquid template of HTML against vars: unless raw,
// every interpolated value is HTML-escaped, so a payload cannot inject markup.
func RenderHTML(src string, vars map[string]any, raw bool) (string, error) {
	return render(src, vars, !raw)
}

// render renders src within the limits of guard.go, drawing on the budget
// vars carries (a step's templates share one: ShareBudget), or on one of
// its own. Liquid's filters can panic on odd arguments ({{ s | slice: 1, -1 }});
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
			err = fmt.Errorf("template %q: %w", truncate(src, 80), renderCause(r))
		}
	}()
	prepared, perr := prepareTemplate(src, escape)
	if perr != nil {
		return "", fmt.Errorf("template %q: %v", truncate(src, 80), perr)
	}
	tpls, perr := parseParts(prepared)
	if perr != nil {
		return "", fmt.Errorf("template %q: %s", truncate(src, 80), unguard(perr.Error()))
	}
	w := cappedWriter{budget: budget}
	for _, tpl := range tpls {
		if err := tpl.FRender(&w, bindings); err != nil {
			return "", fmt.Errorf("template %q: %w", truncate(src, 80), renderCause(err))
		}
	}
	return w.b.String(), nil
}

// Parse reports whether src parses as a template RenderText and RenderHTML
// can render (the same engine, filters and tags), without rendering it: a
// workflow's templates are checked when it is written, so a step that
// could never render is an issue to fix rather than a failure at every
// trigger.
func Parse(src string) error {
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
func renderCause(r any) error {
	for e, depth := r, 0; e != nil && depth < 10; depth++ {
		err, ok := e.(error)
		if !ok {
			break
		}
		for _, limit := range []error{errLoopBudget, errTooLarge, ErrTooSlow} {
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
	return errors.New(unguard(first))
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

// RenderValue renders every string inside v (objects and arrays included)
// as RenderText does and returns the rendered copy.
func RenderValue(v any, vars map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return RenderText(t, vars)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := RenderValue(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := RenderValue(e, vars)
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

// Normalize turns the float64 that encoding/json gives every number into an
// int when it is whole, so {{ payload.count }} renders "3", not "3.0", and
// a range such as (1..payload.count) works (Liquid converts int, not int64).
// It changes v's objects and arrays in place and returns v.
func Normalize(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int(t)
		}
		return t
	case map[string]any:
		for k, e := range t {
			t[k] = Normalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = Normalize(e)
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

package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	liquidrender "github.com/osteele/liquid/render"
)

// Limits of rendering one step. Templates come from workflow authors and
// loop over payloads from whoever triggers, so without them a template such
// as {% for i in (1..100000000) %}{% for j in (1..100000000) %}{% endfor %}{% endfor %},
// or a capture that doubles itself, would hang or exhaust the worker. The
// time limit is for what the other two let through: a filter over a string
// of megabytes, repeated on each of 100,000 iterations, ran for minutes.
const (
	maxLoopIterations = 100_000 // loop iterations across the step's templates
	maxRenderedBytes  = 4 << 20 // bytes of output, and of any captured or appended string
)

// maxRenderTime bounds all of a step's templates. It is a variable only so
// that tests of the other two limits can lift it: on a loaded machine
// (the race detector on two cores) the time limit can trip first.
var maxRenderTime = time.Second

var (
	errLoopBudget = fmt.Errorf("loops ran more than %d iterations", maxLoopIterations)
	errTooLarge   = fmt.Errorf("output is larger than %d bytes", maxRenderedBytes)
	// ErrTooSlow is the one limit a render can meet for want of CPU rather
	// than because of its template, so a caller may try it again later.
	ErrTooSlow = fmt.Errorf("rendering took longer than %s", maxRenderTime)
)

// The loop filter and the binding that carries the render's budget.
const (
	loopFilter    = "herald_loop_budget"
	loopBudgetVar = "__herald_loop_budget"
)

// Filters and blocks that keep strings and arrays within the limits. Liquid
// has no memory limit of its own, and a value that doubles on every pass of
// a loop outgrows any machine in a few dozen passes, so everything that can
// grow by more than a constant factor is checked before it is built, and
// every assigned or captured value after.
const (
	rangeFilter    = "herald_range"
	capFilter      = "herald_cap"
	outputFilter   = "herald_output"
	captureBlock   = "herald_capture"
	maxArrayLength = 1_000_000

	// capCall is capFilter as appended to a value, with the render's budget,
	// and outputCall the same for the value of an output.
	capCall    = " | " + capFilter + ": " + loopBudgetVar
	outputCall = " | " + outputFilter + ": " + loopBudgetVar
)

func init() {
	// include reads a file from the server's disk: a template must never reach it.
	liquidEngine.RegisterTag("include", func(liquidrender.Context) (string, error) {
		return "", errors.New("include is not supported")
	})
	liquidEngine.RegisterFilter(loopFilter, budgetLoop)
	liquidEngine.RegisterFilter(rangeFilter, boundRange)
	liquidEngine.RegisterFilter(capFilter, capValue)
	liquidEngine.RegisterFilter(outputFilter, func(v, budget any) (any, error) {
		v, err := capValue(v, budget)
		if err != nil {
			return nil, err
		}
		return printable(v)
	})
	liquidEngine.RegisterBlock(captureBlock, captureCapped)
	liquidEngine.RegisterFilter("append", func(s, suffix string) (string, error) { return joinCapped(s, suffix) })
	liquidEngine.RegisterFilter("prepend", func(s, prefix string) (string, error) { return joinCapped(prefix, s) })
	liquidEngine.RegisterFilter("replace", func(s, old, repl string) (string, error) {
		n := strings.Count(s, old)
		if len(s)+n*(len(repl)-len(old)) > maxRenderedBytes {
			return "", errTooLarge
		}
		return strings.ReplaceAll(s, old, repl), nil
	})
	liquidEngine.RegisterFilter("replace_first", func(s, old, repl string) (string, error) {
		if len(s)+len(repl) > maxRenderedBytes {
			return "", errTooLarge
		}
		return strings.Replace(s, old, repl, 1), nil
	})
	liquidEngine.RegisterFilter("concat", func(a, b []any) ([]any, error) {
		if len(a)+len(b) > maxArrayLength {
			return nil, errTooLarge
		}
		return append(append(make([]any, 0, len(a)+len(b)), a...), b...), nil
	})
	liquidEngine.RegisterFilter("join", func(a []any, sep func(string) string) (any, error) {
		s := sep(" ")
		var b strings.Builder
		first := true
		for _, v := range a {
			if v == nil {
				continue
			}
			if !first {
				b.WriteString(s)
			}
			first = false
			b.WriteString(fmt.Sprint(v))
			if b.Len() > maxRenderedBytes {
				return nil, errTooLarge
			}
		}
		return b.String(), nil
	})
}

func joinCapped(a, b string) (string, error) {
	if len(a)+len(b) > maxRenderedBytes {
		return "", errTooLarge
	}
	return a + b, nil
}

// capValue is the filter put on every assign, output and case: the value,
// unless it is a string or array past the limits, or the render is out of
// time.
func capValue(v any, budget any) (any, error) {
	if b, ok := budget.(*renderBudget); ok && b.late() {
		return nil, ErrTooSlow
	}
	switch t := v.(type) {
	case string:
		if len(t) > maxRenderedBytes {
			return nil, errTooLarge
		}
	case []any:
		if len(t) > maxArrayLength {
			return nil, errTooLarge
		}
	}
	return v, nil
}

// printable is a value as an output shows it. Liquid prints an object with
// Go's fmt ("map[k:1]"), which no template author means; it prints as JSON,
// inside an array too. Everything else prints as Liquid prints it. The JSON
// is built before the writer sees it, so it counts against the output limit
// here: an array may hold the same large object a million times.
func printable(v any) (any, error) {
	left := maxRenderedBytes
	return printableWithin(v, &left)
}

func printableWithin(v any, left *int) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // an HTML template escapes the result itself
		if enc.Encode(t) != nil {
			return v, nil
		}
		if *left -= b.Len(); *left < 0 {
			return nil, errTooLarge
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			p, err := printableWithin(e, left)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	}
	return v, nil
}

// captureCapped is Liquid's capture block, rendering its body into a capped
// writer instead of an unbounded buffer.
func captureCapped(ctx liquidrender.Context) (string, error) {
	name := strings.TrimSpace(ctx.TagArgs())
	b, _ := ctx.Get(loopBudgetVar).(*renderBudget)
	w := cappedWriter{budget: b}
	if err := ctx.RenderChildren(&w); err != nil {
		return "", err
	}
	ctx.Set(name, w.b.String())
	return "", nil
}

// renderBudget is what the templates of one step may still spend: loop
// iterations, and time. Time is checked on every loop and iteration, and
// after every assign, output, case and capture, the places where filters
// run. The conditions of if, unless and when take no filters and are not
// timed: each is one comparison, and the template's size bounds how many
// there are, so their time is bounded with it.
type renderBudget struct {
	left     int
	deadline time.Time
}

func newRenderBudget() *renderBudget {
	return &renderBudget{left: maxLoopIterations, deadline: time.Now().Add(maxRenderTime)}
}

func (b *renderBudget) late() bool { return time.Now().After(b.deadline) }

// ShareBudget gives vars a budget of its own, which every template rendered
// with vars then draws on, so that many templates (a step's data object of
// a thousand strings, say) are held to the limits of one.
func ShareBudget(vars map[string]any) {
	vars[loopBudgetVar] = newRenderBudget()
}

// iterable is what Liquid's for and tablerow tags iterate over.
type iterable interface {
	Len() int
	Index(int) any
}

// budgeted spends one unit of the budget on every iteration.
type budgeted struct {
	items  iterable
	budget *renderBudget
}

func (b budgeted) Len() int { return b.items.Len() }

func (b budgeted) Index(i int) any {
	if b.budget.left <= 0 {
		panic(errLoopBudget) // the only way out of a Liquid loop; render recovers it
	}
	if b.budget.late() {
		panic(ErrTooSlow)
	}
	b.budget.left--
	return b.items.Index(i)
}

type sliceItems reflect.Value

func (s sliceItems) Len() int        { return reflect.Value(s).Len() }
func (s sliceItems) Index(i int) any { return reflect.Value(s).Index(i).Interface() }

// budgetLoop is the filter guardTag puts on every loop's collection: it
// iterates as Liquid would (a map as [key, value] pairs), drawing on budget.
func budgetLoop(v any, budget any) (any, error) {
	b, ok := budget.(*renderBudget)
	if !ok {
		return nil, errors.New("loops are not available here")
	}
	if b.late() { // the collection's filters ran, and it may be empty
		return nil, ErrTooSlow
	}
	if it, ok := v.(iterable); ok {
		return budgeted{it, b}, nil
	}
	if v == nil {
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return budgeted{sliceItems(rv), b}, nil
	case reflect.Map:
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		pairs := make([]any, len(keys))
		for i, k := range keys {
			pairs[i] = []any{k.Interface(), rv.MapIndex(k).Interface()}
		}
		return budgeted{sliceItems(reflect.ValueOf(pairs)), b}, nil
	}
	return v, nil
}

// lazyRange is a range too long to become an array: loops still iterate it
// (through budgetLoop), but a filter that wants an array gets an error
// instead of billions of elements.
type lazyRange struct{ items iterable }

func (r lazyRange) Len() int        { return r.items.Len() }
func (r lazyRange) Index(i int) any { return r.items.Index(i) }

// boundRange is the filter guardRanges puts on every range literal.
func boundRange(v any) any {
	if it, ok := v.(iterable); ok && it.Len() > maxArrayLength {
		return lazyRange{it}
	}
	return v
}

// rangeLiteral matches a range expression (a..b) at the start of a string.
var rangeLiteral = regexp.MustCompile(`^\(\s*[^()"']+?\s*\.\.\s*[^()"']+?\s*\)`)

// guardRanges wraps every range literal of a tag or output, outside quoted
// strings, as ((a..b) | herald_range).
func guardRanges(s string) string {
	if !strings.Contains(s, "..") {
		return s
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			if m := rangeLiteral.FindString(s[i:]); m != "" {
				b.WriteString("(" + m + " | " + rangeFilter + ")")
				i += len(m) - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

var (
	// loopTag splits a for or tablerow tag: everything up to the
	// collection, the collection with its modifiers, and the trim marker.
	loopTag      = regexp.MustCompile(`(?s)^(-?\s*(?:for|tablerow)\s+\w+\s+in\s+)(.*?)(\s*-?)$`)
	loopModifier = regexp.MustCompile(`\s+(?:reversed\b|limit\s*:|offset\s*:|cols\s*:)`)
	// assignTag, caseTag and captureTag split assign, case and capture
	// tags likewise.
	assignTag  = regexp.MustCompile(`(?s)^(-?\s*assign\s+[\w-]+\s*=\s*)(.*?)(\s*-?)$`)
	caseTag    = regexp.MustCompile(`(?s)^(-?\s*case\s+)(.*?)(\s*-?)$`)
	captureTag = regexp.MustCompile(`^(-?\s*)(end)?capture\b(.*)$`)
)

// guardTag rewrites the inside of a {% … %} tag so that it keeps to the
// render's limits: range literals pass through boundRange, a for or
// tablerow loop iterates its collection through budgetLoop, an assign's
// value and a case's subject pass through capValue, and capture becomes
// captureCapped. Other tags are returned as they are.
func guardTag(tag string) string {
	tag = guardRanges(tag)
	if m := loopTag.FindStringSubmatch(tag); m != nil {
		coll, mods := m[2], ""
		if loc := loopModifier.FindStringIndex(coll); loc != nil {
			coll, mods = coll[:loc[0]], coll[loc[0]:]
		}
		if strings.TrimSpace(coll) == "" {
			return tag
		}
		return m[1] + coll + " | " + loopFilter + ": " + loopBudgetVar + mods + m[3]
	}
	for _, valued := range []*regexp.Regexp{assignTag, caseTag} {
		if m := valued.FindStringSubmatch(tag); m != nil && strings.TrimSpace(m[2]) != "" {
			return m[1] + m[2] + capCall + m[3]
		}
	}
	if m := captureTag.FindStringSubmatch(tag); m != nil {
		return m[1] + m[2] + captureBlock + m[3]
	}
	return tag
}

// cappedWriter collects output up to maxRenderedBytes, and while budget has
// time left, then fails the render.
type cappedWriter struct {
	b      strings.Builder
	budget *renderBudget // nil: untimed
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > maxRenderedBytes {
		return 0, errTooLarge
	}
	if w.budget != nil && w.budget.late() {
		return 0, ErrTooSlow
	}
	return w.b.Write(p)
}

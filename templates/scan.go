package templates

import (
	"errors"
	"regexp"
	"strings"
)

// LiquidKind is what a LiquidSegment of a template is.
type LiquidKind int

const (
	LiquidText     LiquidKind = iota // plain text
	LiquidOutput                     // {{ … }}
	LiquidTag                        // {% … %}
	LiquidVerbatim                   // a raw or comment block, from its tag to its end tag
)

// LiquidSegment is one piece of a Liquid template. Src is the piece as
// written; for an output or a tag, Body is the inside of its delimiters, as
// written (whitespace-trim markers included).
type LiquidSegment struct {
	Kind LiquidKind
	Src  string
	Body string
}

// ErrUnclosedLiquid is ScanLiquid's error for an output or tag that never
// closes, or a raw or comment block that never ends.
var ErrUnclosedLiquid = errors.New("a {{ or {% is never closed")

// verbatimStart matches the tag that opens a raw or comment block.
var verbatimStart = regexp.MustCompile(`^\{%-?\s*(raw|comment)\s*-?%\}`)

// ScanLiquid cuts a template into text, outputs, tags and raw or comment
// blocks. It is the one Liquid scanner of Herald: workflows reads the
// variables and filters of each output and tag from it, and messaging
// rewrites each to keep the render within its limits. An output or tag ends
// at the first closing delimiter, quotes or not, as Liquid's own scanner
// ends it. An output or tag that never closes is ErrUnclosedLiquid, with
// the segments before it: Liquid would print it as text, which no author
// means.
func ScanLiquid(src string) ([]LiquidSegment, error) {
	var out []LiquidSegment
	text := func(s string) {
		if s != "" {
			out = append(out, LiquidSegment{Kind: LiquidText, Src: s})
		}
	}
	for {
		i := strings.Index(src, "{")
		for i >= 0 && i+1 < len(src) && src[i+1] != '{' && src[i+1] != '%' {
			next := strings.Index(src[i+1:], "{")
			if next < 0 {
				i = -1
				break
			}
			i += 1 + next
		}
		if i < 0 || i+1 >= len(src) {
			text(src)
			return out, nil
		}
		text(src[:i])
		src = src[i:]
		if m := verbatimStart.FindStringSubmatch(src); m != nil {
			end := regexp.MustCompile(`\{%-?\s*end` + m[1] + `\s*-?%\}`).FindStringIndex(src)
			if end == nil {
				return out, ErrUnclosedLiquid
			}
			out = append(out, LiquidSegment{Kind: LiquidVerbatim, Src: src[:end[1]]})
			src = src[end[1]:]
			continue
		}
		kind, closing := LiquidOutput, "}}"
		if src[1] == '%' {
			kind, closing = LiquidTag, "%}"
		}
		end := strings.Index(src[2:], closing)
		if end < 0 {
			return out, ErrUnclosedLiquid
		}
		out = append(out, LiquidSegment{Kind: kind, Src: src[:2+end+2], Body: src[2 : 2+end]})
		src = src[2+end+2:]
	}
}

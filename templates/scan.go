package templates

import (
	"errors"
	"regexp"
	"strings"
)

// segmentKind is what a segment of a template is.
type segmentKind int

const (
	segText     segmentKind = iota // plain text
	segOutput                      // {{ … }}
	segTag                         // {% … %}
	segVerbatim                    // a raw or comment block, from its tag to its end tag
)

// segment is one piece of a Liquid template. src is the piece as written;
// for an output or a tag, body is the inside of its delimiters, as written
// (whitespace-trim markers included).
type segment struct {
	kind segmentKind
	src  string
	body string
}

// errUnclosed is scan's error for an output or tag that never closes, or a
// raw or comment block that never ends.
var errUnclosed = errors.New("a {{ or {% is never closed")

// verbatimStart matches the tag that opens a raw or comment block.
var verbatimStart = regexp.MustCompile(`^\{%-?\s*(raw|comment)\s*-?%\}`)

// scan cuts a template into text, outputs, tags and raw or comment blocks.
// It is the one Liquid scanner of Herald: Check reads the variables and
// filters of each output and tag from it, and prepareTemplate rewrites each
// to keep the render within its limits. An output or tag ends at the first
// closing delimiter, quotes or not, as Liquid's own scanner ends it. An
// output or tag that never closes is errUnclosed, with the segments before
// it: Liquid would print it as text, which no author means.
func scan(src string) ([]segment, error) {
	var out []segment
	text := func(s string) {
		if s != "" {
			out = append(out, segment{kind: segText, src: s})
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
				return out, errUnclosed
			}
			out = append(out, segment{kind: segVerbatim, src: src[:end[1]]})
			src = src[end[1]:]
			continue
		}
		kind, closing := segOutput, "}}"
		if src[1] == '%' {
			kind, closing = segTag, "%}"
		}
		end := strings.Index(src[2:], closing)
		if end < 0 {
			return out, errUnclosed
		}
		out = append(out, segment{kind: kind, src: src[:2+end+2], body: src[2 : 2+end]})
		src = src[2+end+2:]
	}
}

package templates

import (
	"strings"

	"github.com/osteele/liquid"
)

// A long template (an email body of tens of kilobytes) is parsed in parts:
// Liquid's scanner runs a regular expression over the whole source, whose
// cost grows faster than the source past a few kilobytes, and a whole
// long source is never cached (maxParsedSource). Cut where no block is
// open, its parts parse faster, and each is cached on its own, so an edit
// to one place of a long email (the editor's preview as the author types)
// parses that part again and reuses the others. Rendering the parts in
// order into one writer gives what rendering the whole gives, because a
// template is only cut when nothing in it carries state from one part to
// the next: no assign, capture, increment, decrement or cycle, and no
// include, raw, comment or liquid tag. Anything else, and any part that
// does not parse, falls back to the whole template.

// partSize is the length past which a part is cut at the next safe place.
const partSize = 2 << 10

// statelessTags are the tags a template may hold and still be cut: they
// open, continue and close blocks, and set no variable.
var statelessTags = map[string]int{
	"if": 1, "unless": 1, "case": 1, "for": 1, "tablerow": 1,
	"endif": -1, "endunless": -1, "endcase": -1, "endfor": -1, "endtablerow": -1,
	"elsif": 0, "else": 0, "when": 0, "break": 0, "continue": 0,
}

// parseParts parses src, a prepared template, as one template or, when it
// is long, as parts rendered one after the other (see above).
func parseParts(src string) ([]*liquid.Template, error) {
	if len(src) > maxParsedSource {
		if parts := splitTemplate(src); len(parts) > 1 {
			tpls := make([]*liquid.Template, 0, len(parts))
			for _, p := range parts {
				tpl, err := parseCached(p)
				if err != nil {
					break // the whole template says what is wrong, and where
				}
				tpls = append(tpls, tpl)
			}
			if len(tpls) == len(parts) {
				return tpls, nil
			}
		}
	}
	tpl, err := parseCached(src)
	if err != nil {
		return nil, err
	}
	return []*liquid.Template{tpl}, nil
}

// splitTemplate cuts src into parts of at least partSize where no block is
// open (cutPoint), or returns nil when it must not be cut. A cut is made
// only at a line break inside text that has more than spaces on both sides
// of it, so that no whitespace-trimming marker ({{- or -}}) reaches across
// it.
// Its outputs and tags are read as Liquid's scanner reads them: an output
// is {{ to the first }} on one line, a tag {% to the first %}.
func splitTemplate(src string) []string {
	var parts []string
	start, depth, pos := 0, 0, 0
	for pos < len(src) {
		open := indexMarkup(src, pos)
		end := len(src)
		if open >= 0 {
			end = open
		}
		if depth == 0 && end-start >= partSize {
			if cut := cutPoint(src, pos, end, start); cut > 0 {
				parts = append(parts, src[start:cut])
				start = cut
			}
		}
		if open < 0 {
			break
		}
		next, delta, ok := readMarkup(src, open)
		if !ok {
			return nil
		}
		if depth += delta; depth < 0 {
			return nil
		}
		pos = next
	}
	if depth != 0 || len(parts) == 0 {
		return nil
	}
	return append(parts, src[start:])
}

// indexMarkup is the index of the next {{ or {% at or after from, or -1.
func indexMarkup(src string, from int) int {
	for i := from; i < len(src)-1; i++ {
		if src[i] == '{' && (src[i+1] == '{' || src[i+1] == '%') {
			return i
		}
	}
	return -1
}

// readMarkup reads the output or tag at open: where it ends, how it
// changes the depth of open blocks, and false when the template must not
// be cut (a tag that keeps state or is unknown, an output across lines).
func readMarkup(src string, open int) (next, delta int, ok bool) {
	if src[open+1] == '{' {
		n := strings.Index(src[open+2:], "}}")
		if n < 0 {
			return 0, 0, false
		}
		body := src[open+2 : open+2+n]
		if strings.ContainsAny(body, "\n{") || strings.Trim(body, "- \t\r") == "" {
			return 0, 0, false
		}
		return open + 2 + n + 2, 0, true
	}
	n := strings.Index(src[open+2:], "%}")
	if n < 0 {
		return 0, 0, false
	}
	body := strings.TrimLeft(src[open+2:open+2+n], "- \t\r\n")
	name := body
	if i := strings.IndexAny(body, " \t\r\n-"); i >= 0 {
		name = body[:i]
	}
	delta, known := statelessTags[name]
	if !known || strings.Contains(body, "{") {
		return 0, 0, false
	}
	return open + 2 + n + 2, delta, true
}

// cutPoint is where to cut the text src[from:to] after a part that began
// at start: just past a line break with more than spaces on both sides
// within that text, at least partSize into the part, and chosen by the
// line it ends (one line in eight), so that the cuts after an edit fall
// where they fell before it and the parts after it are reused; past
// 4×partSize, the first such line break. 0 when there is none.
func cutPoint(src string, from, to, start int) int {
	text := src[from:to]
	for i := max(start+partSize-from, 0); i < len(text); i++ {
		if text[i] != '\n' {
			continue
		}
		before, after := text[:i+1], text[i+1:]
		if strings.TrimSpace(before) == "" || strings.TrimSpace(after) == "" {
			continue
		}
		at := from + i
		if at-start >= 4*partSize || lineHash(src, at)%8 == 0 {
			return at + 1
		}
	}
	return 0
}

// lineHash is an FNV-1a hash of the line of src that ends at the line
// break at end.
func lineHash(src string, end int) uint32 {
	begin := strings.LastIndexByte(src[:end], '\n') + 1
	h := uint32(2166136261)
	for i := begin; i < end; i++ {
		h = (h ^ uint32(src[i])) * 16777619
	}
	return h
}

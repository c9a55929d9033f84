package templates

import (
	"fmt"
	"strings"
)

// This file finds the variables and filter arguments of Liquid templates so
// that a workflow's issues can name what a template uses wrongly. It reads
// the template itself rather than Liquid's parse of it: what it needs, each
// variable path and each filter's arguments, is not exposed by the parsed
// template of osteele/liquid, which keeps its AST internal.

// Problem is one thing wrong with a template, as Check finds it.
type Problem struct {
	// Variable is what the problem is about: a variable that is not
	// allowed, or the value a filter is misused on ("" for none).
	Variable string
	// BadFilter is set when a filter's arguments are wrong; otherwise the
	// variable is not allowed.
	BadFilter bool
	Message   string
}

// liquidBlock is the inside of one {{ … }} (output) or {% … %} (tag).
type liquidBlock struct {
	tag  bool
	body string
}

// liquidBlocks returns the output and tag blocks of s, their bodies trimmed
// of whitespace and trim markers. A block that never closes ends the list:
// the template parser reports it.
func liquidBlocks(s string) []liquidBlock {
	segs, _ := scan(s)
	var out []liquidBlock
	for _, seg := range segs {
		if seg.kind == segOutput || seg.kind == segTag {
			body := strings.TrimSpace(strings.Trim(strings.TrimSpace(seg.body), "-"))
			out = append(out, liquidBlock{tag: seg.kind == segTag, body: body})
		}
	}
	return out
}

// Token kinds of a Liquid expression.
const (
	tIdent = iota
	tString
	tNumber
	tPunct // . [ ] | : , ( ) .. and comparison operators
	tBad   // an unterminated string or a stray character
)

type token struct {
	kind int
	text string
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || '0' <= c && c <= '9' || c == '-' || c == '?' }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }

func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				out = append(out, token{tBad, s[i:]})
				return out
			}
			out = append(out, token{tString, s[i+1 : i+1+j]})
			i += j + 2
		case isDigit(c) || c == '-' && i+1 < len(s) && isDigit(s[i+1]):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' && j+1 < len(s) && isDigit(s[j+1])) {
				j++
			}
			out = append(out, token{tNumber, s[i:j]})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, token{tIdent, s[i:j]})
			i = j
		case strings.HasPrefix(s[i:], ".."):
			out = append(out, token{tPunct, ".."})
			i += 2
		case strings.ContainsRune(".[]|:,()", rune(c)):
			out = append(out, token{tPunct, string(c)})
			i++
		case strings.ContainsRune("=!<>", rune(c)):
			j := i + 1
			for j < len(s) && strings.ContainsRune("=<>", rune(s[j])) {
				j++
			}
			out = append(out, token{tPunct, s[i:j]})
			i = j
		default:
			out = append(out, token{tBad, string(c)})
			i++
		}
	}
	return out
}

// literals are identifiers that are values, not variables.
var literals = map[string]bool{"true": true, "false": true, "nil": true, "null": true, "empty": true, "blank": true}

// exprParser reads one Liquid expression from tokens, collecting issues.
type exprParser struct {
	toks    []token
	pos     int
	check   func(path []string, raw string)
	issues  []Problem
	subject string // the output's leading variable, named in filter issues
}

func (p *exprParser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *exprParser) isPunct(text string) bool {
	t := p.peek()
	return t != nil && t.kind == tPunct && t.text == text
}

// value reads a literal, a variable path or a range and reports whether one
// was there; numeric is true for a number literal, str for a string literal.
func (p *exprParser) value() (ok, numeric, str bool) {
	t := p.peek()
	if t == nil {
		return false, false, false
	}
	switch {
	case t.kind == tString:
		p.pos++
		return true, false, true
	case t.kind == tNumber:
		p.pos++
		return true, true, false
	case t.kind == tIdent && literals[t.text]:
		p.pos++
		return true, false, false
	case t.kind == tIdent:
		p.path()
		return true, false, false
	case t.kind == tPunct && t.text == "(":
		p.pos++
		a, _, _ := p.value()
		if !a || !p.isPunct("..") {
			return false, false, false
		}
		p.pos++
		b, _, _ := p.value()
		if !b || !p.isPunct(")") {
			return false, false, false
		}
		p.pos++
		return true, false, false
	}
	return false, false, false
}

// path reads ident(.ident | [value])* and checks it.
func (p *exprParser) path() {
	first := p.toks[p.pos]
	p.pos++
	path := []string{first.text}
	raw := first.text
	for {
		switch {
		case p.isPunct(".") && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tIdent:
			path = append(path, p.toks[p.pos+1].text)
			raw += "." + p.toks[p.pos+1].text
			p.pos += 2
		case p.isPunct("["):
			p.pos++
			t := p.peek()
			seg := "*"
			if t != nil && (t.kind == tString || t.kind == tNumber) {
				seg = t.text
				p.pos++
			} else if t != nil && t.kind == tIdent {
				p.path() // a variable key: checked on its own, any key allowed here
			}
			if !p.isPunct("]") {
				p.check(path, raw)
				return
			}
			p.pos++
			path = append(path, seg)
			raw += "[" + seg + "]"
		default:
			p.check(path, raw)
			return
		}
	}
}

// filters reads (| name [: arg, …])* to the end of the tokens.
func (p *exprParser) filters() {
	for p.pos < len(p.toks) {
		if !p.isPunct("|") {
			p.fail("unexpected %q after %s", p.toks[p.pos].text, p.subjectName())
			return
		}
		p.pos++
		t := p.peek()
		if t == nil || t.kind != tIdent {
			p.fail("a filter name is missing after | in %s", p.subjectName())
			return
		}
		name := t.text
		p.pos++
		var args []argInfo
		if p.isPunct(":") {
			p.pos++
			for {
				// keyword argument: name: value
				if t := p.peek(); t != nil && t.kind == tIdent && p.pos+1 < len(p.toks) &&
					p.toks[p.pos+1].kind == tPunct && p.toks[p.pos+1].text == ":" {
					p.pos += 2
				}
				ok, numeric, str := p.value()
				if !ok {
					p.fail("filter %q of %s has a missing or malformed argument", name, p.subjectName())
					return
				}
				args = append(args, argInfo{numeric: numeric, str: str})
				if !p.isPunct(",") {
					break
				}
				p.pos++
			}
		}
		if msg := checkFilterArgs(name, args); msg != "" {
			p.fail("filter %q of %s %s", name, p.subjectName(), msg)
			return
		}
	}
}

func (p *exprParser) subjectName() string {
	if p.subject == "" {
		return "the expression"
	}
	return p.subject
}

func (p *exprParser) fail(format string, args ...any) {
	p.issues = append(p.issues, Problem{
		Variable:  p.subject,
		BadFilter: true,
		Message:   fmt.Sprintf(format, args...),
	})
}

type argInfo struct{ numeric, str bool }

// filterArity lists the standard Liquid filters (and the platform's own
// digest and pluralize helpers): how many arguments each takes and which
// must be numbers.
var filterArity = map[string]struct {
	min, max int
	numeric  []int
}{
	"abs": {0, 0, nil}, "append": {1, 1, nil}, "at_least": {1, 1, []int{0}}, "at_most": {1, 1, []int{0}},
	"capitalize": {0, 0, nil}, "ceil": {0, 0, nil}, "compact": {0, 1, nil}, "concat": {1, 1, nil},
	"date": {1, 2, nil}, "default": {1, 2, nil}, "divided_by": {1, 1, []int{0}}, "downcase": {0, 0, nil},
	"escape": {0, 0, nil}, "escape_once": {0, 0, nil}, "first": {0, 0, nil}, "floor": {0, 0, nil},
	"join": {0, 1, nil}, "json": {0, 1, nil}, "last": {0, 0, nil}, "lstrip": {0, 0, nil}, "map": {1, 1, nil},
	"minus": {1, 1, []int{0}}, "modulo": {1, 1, []int{0}}, "newline_to_br": {0, 0, nil},
	"plus": {1, 1, []int{0}}, "prepend": {1, 1, nil}, "remove": {1, 1, nil}, "remove_first": {1, 1, nil},
	"remove_last": {1, 1, nil}, "replace": {2, 2, nil}, "replace_first": {2, 2, nil}, "replace_last": {2, 2, nil},
	"reverse": {0, 0, nil}, "round": {0, 1, []int{0}}, "rstrip": {0, 0, nil}, "size": {0, 0, nil},
	"slice": {1, 2, []int{0, 1}}, "sort": {0, 1, nil}, "sort_natural": {0, 1, nil}, "split": {1, 1, nil},
	"strip": {0, 0, nil}, "strip_html": {0, 0, nil}, "strip_newlines": {0, 0, nil}, "sum": {0, 1, nil},
	"times": {1, 1, []int{0}}, "truncate": {1, 2, []int{0}}, "truncatewords": {1, 2, []int{0}},
	"uniq": {0, 1, nil}, "upcase": {0, 0, nil}, "url_decode": {0, 0, nil}, "url_encode": {0, 0, nil},
	"where": {1, 2, nil}, "digest": {1, 3, []int{0}}, "pluralize": {0, 2, nil},
}

// checkFilterArgs returns what is wrong with a known filter's arguments, or "".
func checkFilterArgs(name string, args []argInfo) string {
	a, ok := filterArity[name]
	if !ok {
		return ""
	}
	if len(args) < a.min {
		return fmt.Sprintf("needs %d argument(s), got %d", a.min, len(args))
	}
	if len(args) > a.max {
		return fmt.Sprintf("takes at most %d argument(s), got %d", a.max, len(args))
	}
	for _, i := range a.numeric {
		if i < len(args) && args[i].str {
			return fmt.Sprintf("needs a number as argument %d", i+1)
		}
	}
	return ""
}

// tagKeywords are the words of tag expressions that are not variables.
var tagKeywords = map[string]bool{
	"and": true, "or": true, "not": true, "contains": true, "in": true, "reversed": true,
	"limit": true, "offset": true, "with": true, "as": true, "by": true, "cols": true,
}

// Check returns the problems of template s: variables that allowed rejects
// (each path as its segments, an index or a key in brackets as "*" unless
// it is a literal), and malformed filter arguments. Variables the template
// defines itself (loop variables, assigns, captures) are allowed.
func Check(s string, allowed func(path []string) bool) []Problem {
	if !strings.Contains(s, "{") {
		return nil
	}
	blocks := liquidBlocks(s)
	locals := map[string]bool{"forloop": true, "tablerowloop": true}
	for _, b := range blocks {
		if !b.tag {
			continue
		}
		f := strings.Fields(b.body)
		if len(f) >= 2 {
			switch f[0] {
			case "for", "tablerow", "assign", "capture", "increment", "decrement":
				locals[strings.TrimSuffix(f[1], "=")] = true
			}
		}
	}
	var issues []Problem
	seen := map[string]bool{}
	check := func(path []string, raw string) {
		if locals[path[0]] || allowed(path) || seen[raw] {
			return
		}
		seen[raw] = true
		issues = append(issues, Problem{
			Variable: raw,
			Message:  fmt.Sprintf("Variable %s is not supported", raw),
		})
	}
	for _, b := range blocks {
		if !b.tag {
			issues = append(issues, checkOutput(b.body, check)...)
			continue
		}
		name, rest, _ := strings.Cut(b.body, " ")
		switch name {
		case "echo":
			issues = append(issues, checkOutput(rest, check)...)
		case "assign":
			if _, expr, ok := strings.Cut(rest, "="); ok {
				issues = append(issues, checkOutput(expr, check)...)
			}
		case "if", "elsif", "unless", "case", "when", "for", "tablerow", "cycle":
			if name == "for" || name == "tablerow" {
				if _, coll, ok := strings.Cut(rest, " in "); ok {
					rest = coll
				}
			}
			p := &exprParser{toks: tokenize(rest), check: check}
			for p.pos < len(p.toks) {
				t := p.toks[p.pos]
				if t.kind == tIdent && !literals[t.text] && !tagKeywords[t.text] &&
					!(p.pos+1 < len(p.toks) && p.toks[p.pos+1].text == ":" && (t.text == "limit" || t.text == "offset")) {
					p.path()
					continue
				}
				p.pos++
			}
		}
	}
	return issues
}

// checkOutput checks one output expression: value (| filter[: args])*.
func checkOutput(expr string, check func(path []string, raw string)) []Problem {
	p := &exprParser{toks: tokenize(expr), check: check}
	if t := p.peek(); t != nil && t.kind == tIdent && !literals[t.text] {
		end := p.pos + 1
		for end < len(p.toks) && !(p.toks[end].kind == tPunct && p.toks[end].text == "|") {
			end++
		}
		var parts []string
		for _, t := range p.toks[p.pos:end] {
			parts = append(parts, t.text)
		}
		p.subject = strings.Join(parts, "")
	}
	for _, t := range p.toks {
		if t.kind == tBad && (t.text[0] == '\'' || t.text[0] == '"') {
			p.fail("an unterminated string in %s", p.subjectName())
			return p.issues
		}
	}
	if ok, _, _ := p.value(); !ok && p.pos < len(p.toks) && !p.isPunct("|") {
		return p.issues
	}
	p.filters()
	return p.issues
}

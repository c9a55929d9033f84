package templates

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// Position is a place in a template: 1-based line and column (in
// characters), and the byte offset.
type Position struct {
	Line, Column, Offset int
}

// Locate returns where in src the error err of Parse, RenderText or
// RenderHTML points, and err's message without the template it quotes.
// Liquid's own line numbers count from the rewritten template (guard.go)
// and are often wrong, so Locate finds the output or tag the message
// quotes ("… in {{ x | bogus }}") in the source instead; a template that
// never closes points at the {{ or {% left open. ok is false when the
// message names no place.
func Locate(src string, err error) (pos Position, message string, ok bool) {
	message = Message(err)
	segs, serr := scan(src)
	if errors.Is(serr, errUnclosed) {
		off := 0
		for _, s := range segs {
			off += len(s.src)
		}
		return positionAt(src, off), message, true
	}
	if i := strings.LastIndex(message, " in {"); i >= 0 {
		quoted := message[i+len(" in "):]
		if off := strings.Index(src, quoted); off >= 0 {
			return positionAt(src, off), message, true
		}
		// Liquid quotes a tag or output trimmed of its spacing: find the
		// segment whose body matches.
		off := 0
		want := compact(quoted)
		for _, s := range segs {
			if (s.kind == segOutput || s.kind == segTag) && compact(s.src) == want {
				return positionAt(src, off), message, true
			}
			off += len(s.src)
		}
	}
	return Position{}, message, false
}

// Message is err's message without the "template "…": " prefix a render
// error carries, which repeats the template the author is looking at.
func Message(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "template "); ok {
		if q, qerr := strconv.QuotedPrefix(rest); qerr == nil {
			msg = strings.TrimPrefix(rest[len(q):], ": ")
		}
	}
	// Liquid's "(line N)" counts lines of the guarded rewrite, not of the
	// author's template: Locate says where instead.
	return liquidPrefix.ReplaceAllString(msg, "")
}

var liquidPrefix = regexp.MustCompile(`^Liquid error(?: \(line \d+\))?: `)

// compact is s without spaces, so two spellings of one tag compare equal.
func compact(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// positionAt is the line and column of byte offset off in src.
func positionAt(src string, off int) Position {
	before := src[:min(off, len(src))]
	line := strings.Count(before, "\n") + 1
	col := len([]rune(before[strings.LastIndex(before, "\n")+1:])) + 1
	return Position{Line: line, Column: col, Offset: off}
}

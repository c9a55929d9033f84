package platform

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text that PostgreSQL cannot hold is refused at the edge, on every store,
// so that both answer a request alike and nothing stored can fail a later
// read: a TEXT column refuses a NUL character and invalid UTF-8, and a
// JSON column read as jsonb also refuses the escapes \u0000 and an unpaired
// UTF-16 surrogate (encoding/json keeps those as written in a
// json.RawMessage). A JSON body holding such text is a 422 naming the
// string's JSON path (checkBodyText); a path or query value, a 400 naming
// the parameter (checkRequestText).
const (
	nulProblem       = "must not contain a NUL character (\\u0000)"
	utf8Problem      = "must be valid UTF-8"
	surrogateProblem = "must not contain an unpaired UTF-16 surrogate escape"
)

// textProblem says what is wrong with s as stored text, or "".
func textProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return nulProblem
	case !utf8.ValidString(s):
		return utf8Problem
	}
	return ""
}

// checkRequestText refuses a path or query value that is not storable
// text, naming the parameter: a path wildcard of the route's pattern by
// its name, a query parameter by its key. A query pair that is not valid
// URL encoding is left to NewQuery, which says so.
func checkRequestText(r *http.Request, pattern string) error {
	fields := map[string]FieldError{}
	for name, value := range pathValues(r, pattern) {
		if p := textProblem(value); p != "" {
			fields[name] = FieldError{Messages: []string{p}, Value: strings.ToValidUTF8(value, "\uFFFD")}
		}
	}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, errK := url.QueryUnescape(k)
		value, errV := url.QueryUnescape(v)
		if errK != nil || errV != nil {
			continue
		}
		name := strings.ToValidUTF8(key, "\uFFFD")
		if p := textProblem(key); p != "" {
			fields[name] = FieldError{Messages: []string{"name " + p}, Value: nil}
		} else if p := queryValueProblem(value); p != "" {
			fields[name] = FieldError{Messages: []string{p}, Value: strings.ToValidUTF8(value, "\uFFFD")}
		}
	}
	if len(fields) == 0 {
		return nil
	}
	e := Invalid(fields)
	e.Status = http.StatusBadRequest
	return e
}

// queryValueProblem says what is wrong with a query value as text, or "".
// A value that is JSON (the inbox's filters, say) is read as JSON, so an
// escape in it counts as the character it stands for.
func queryValueProblem(v string) string {
	if p := textProblem(v); p != "" {
		return p
	}
	if t := strings.TrimSpace(v); t == "" || (t[0] != '{' && t[0] != '[') || !json.Valid([]byte(t)) {
		return ""
	}
	path, p := jsonTextProblem([]byte(v))
	if p == "" {
		return ""
	}
	return "holds JSON whose " + cmp.Or(path, "value") + " " + p
}

// pathValues returns each segment of r's path, unescaped, by the name its
// wildcard has in pattern ("GET /v1/subscribers/{subscriberId}"); what a
// pattern's trailing slash matches is named "path".
func pathValues(r *http.Request, pattern string) map[string]string {
	_, route, _ := strings.Cut(pattern, "/")
	want := strings.Split(route, "/")
	values := map[string]string{}
	for i, seg := range strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/") {
		name := "path"
		if i < len(want) && want[i] != "" {
			if !strings.HasPrefix(want[i], "{") {
				continue // a literal segment, matched as written
			}
			name = strings.Trim(want[i], "{}.")
		}
		v, err := url.PathUnescape(seg)
		if err != nil {
			continue
		}
		if prev, ok := values[name]; ok {
			v = prev + "/" + v
		}
		values[name] = v
	}
	return values
}

// checkBodyText returns a 422 naming the first string of the JSON text
// body, a key or a value, that is not storable text; body has already
// parsed as one JSON value.
func checkBodyText(body []byte) error {
	if path, problem := jsonTextProblem(body); problem != "" {
		return InvalidField(cmp.Or(path, "body"), nil, "%s", problem)
	}
	return nil
}

// jsonTextProblem returns the JSON path of the first string of the JSON
// text b that is not storable text, and what is wrong with it, or "".
func jsonTextProblem(body []byte) (path, problem string) {
	var stack []*textFrame
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '{', '[':
			stack = append(stack, &textFrame{array: c == '[', wantKey: c == '{'})
		case '}', ']':
			stack = stack[:len(stack)-1]
			advanceFrame(stack)
		case '"':
			end, bad := scanString(body, i)
			var top *textFrame
			if n := len(stack); n > 0 {
				top = stack[n-1]
			}
			isKey := top != nil && !top.array && top.wantKey
			if isKey {
				top.key, top.wantKey = body[i:end+1], false
			}
			if bad != "" {
				if isKey {
					bad = "key " + bad
				}
				return framePath(stack), bad
			}
			if !isKey {
				advanceFrame(stack)
			}
			i = end
		case 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			for i+1 < len(body) && !strings.ContainsRune(",}] \t\r\n", rune(body[i+1])) {
				i++
			}
			advanceFrame(stack)
		}
	}
	return "", ""
}

// textFrame is an object or array jsonTextProblem is inside.
type textFrame struct {
	array   bool
	index   int    // arrays: index of the current element
	key     []byte // objects: the current member's key, as quoted JSON
	wantKey bool   // objects: the next string is a key
}

// advanceFrame moves the innermost container past the value just read.
func advanceFrame(stack []*textFrame) {
	if n := len(stack); n > 0 {
		if top := stack[n-1]; top.array {
			top.index++
		} else {
			top.wantKey = true
		}
	}
}

// framePath is the dotted JSON path ("steps.0.name") of the value or key
// being read.
func framePath(stack []*textFrame) string {
	parts := make([]string, len(stack))
	for i, f := range stack {
		if f.array {
			parts[i] = strconv.Itoa(f.index)
			continue
		}
		var key string
		json.Unmarshal(f.key, &key) // a key already parsed; a bad one reads with U+FFFD
		parts[i] = key
	}
	return strings.Join(parts, ".")
}

// scanString reads the JSON string whose opening quote is at body[start],
// returning the index of its closing quote and what makes it unstorable,
// or "".
func scanString(body []byte, start int) (end int, problem string) {
	for i := start + 1; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			return i, problem
		case c == '\\' && i+1 < len(body) && body[i+1] == 'u':
			bad, n := unicodeEscape(body[i:])
			if problem == "" {
				problem = bad
			}
			i += n
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 && problem == "" {
				problem = utf8Problem
			}
			i += size
		}
	}
	return len(body) - 1, problem
}

// unicodeEscape reads the \uXXXX escape (and the low half of a surrogate
// pair after it) at the start of b, returning what makes it unstorable,
// or "", and how many bytes it spans.
func unicodeEscape(b []byte) (problem string, n int) {
	r := hexRune(b)
	switch {
	case r == 0:
		return nulProblem, 6
	case r >= 0xD800 && r < 0xDC00:
		if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if low := hexRune(b[6:]); low >= 0xDC00 && low < 0xE000 {
				return "", 12
			}
		}
		return surrogateProblem, 6
	case r >= 0xDC00 && r < 0xE000:
		return surrogateProblem, 6
	}
	return "", 6
}

// hexRune is the code unit of the \uXXXX escape at the start of b, or -1.
func hexRune(b []byte) rune {
	if len(b) < 6 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

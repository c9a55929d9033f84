package templates

import (
	"sort"
	"strings"
)

// Translate replaces every {{t.key}} in src with the key's value in keys,
// before src renders: a value may hold Liquid of its own, which then renders
// with the rest. A reference is {{, optional spaces, t (in either case, so a
// reference an editor capitalised still resolves), a dot, a key of letters,
// digits, _ and - in segments joined by dots, optional spaces and }}. A key
// keys lacks is replaced by the key itself and added to missing.
func Translate(src string, keys map[string]string, missing map[string]bool) string {
	var b strings.Builder
	done := 0 // src up to here is in b
	for i := 0; ; {
		at := strings.Index(src[i:], "{{")
		if at < 0 {
			break
		}
		start := i + at
		key, end, ok := translationRef(src, start)
		if !ok {
			i = start + 1
			continue
		}
		v, found := keys[key]
		if !found {
			v = key
			if missing != nil {
				missing[key] = true
			}
		}
		b.WriteString(src[done:start])
		b.WriteString(v)
		done, i = end, end
	}
	if done == 0 {
		return src
	}
	b.WriteString(src[done:])
	return b.String()
}

// translationRef reads the reference that may open src at start, "{{"
// being there, and returns its key and where it ends.
func translationRef(src string, start int) (key string, end int, ok bool) {
	i := skipSpaces(src, start+2)
	if i+1 >= len(src) || src[i] != 't' && src[i] != 'T' || src[i+1] != '.' {
		return "", 0, false
	}
	keyStart := i + 2
	i = keyStart
	for {
		segment := i
		for i < len(src) && isKeyByte(src[i]) {
			i++
		}
		if i == segment {
			return "", 0, false // an empty segment
		}
		if i+1 < len(src) && src[i] == '.' && isKeyByte(src[i+1]) {
			i++
			continue
		}
		break
	}
	key = src[keyStart:i]
	i = skipSpaces(src, i)
	if !strings.HasPrefix(src[i:], "}}") {
		return "", 0, false
	}
	return key, i + 2, true
}

// skipSpaces skips the white space a reference may hold around its key:
// space, tab, newline, carriage return and form feed.
func skipSpaces(src string, i int) int {
	for i < len(src) && strings.IndexByte(" \t\n\r\f", src[i]) >= 0 {
		i++
	}
	return i
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// TranslateValue is Translate on every string inside v, a control value
// decoded from JSON; what holds no reference is returned as it is.
func TranslateValue(v any, keys map[string]string, missing map[string]bool) any {
	switch t := v.(type) {
	case string:
		return Translate(t, keys, missing)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = TranslateValue(e, keys, missing)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = TranslateValue(e, keys, missing)
		}
		return out
	}
	return v
}

// FlattenKeys turns a locale's JSON object into keys joined by dots:
// {"a":{"b":"x"}} gives a.b = x. Values that are neither strings nor
// objects are left out.
func FlattenKeys(content map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch t := v.(type) {
			case string:
				out[prefix+k] = t
			case map[string]any:
				walk(prefix+k+".", t)
			}
		}
	}
	walk("", content)
	return out
}

// SortedKeys are m's keys in order.
func SortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

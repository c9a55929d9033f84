package templates

import (
	"regexp"
	"sort"
	"strings"
)

// translationRef matches a translation reference, {{t.key}} with optional
// spaces and dotted keys; the t is matched in any case, so a reference an
// editor capitalised still resolves.
var translationRef = regexp.MustCompile(`\{\{\s*[tT]\.([A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*)\s*\}\}`)

// Translate replaces every {{t.key}} in src with the key's value in keys,
// before src renders: a value may hold Liquid of its own, which then renders
// with the rest. A key keys lacks is replaced by the key itself and added
// to missing.
func Translate(src string, keys map[string]string, missing map[string]bool) string {
	if !strings.Contains(src, ".") || !translationRef.MatchString(src) {
		return src
	}
	return translationRef.ReplaceAllStringFunc(src, func(ref string) string {
		key := translationRef.FindStringSubmatch(ref)[1]
		if v, ok := keys[key]; ok {
			return v
		}
		if missing != nil {
			missing[key] = true
		}
		return key
	})
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

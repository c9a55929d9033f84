package messaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// An inbox opened with a context shows only the messages of triggers sent
// with exactly that context (docs/content.md, "The inbox in a context").
// A message keeps its trigger's context as one string, its sorted type:id
// keys joined by commas ("" for none), so that the inbox's exact match is
// one comparison: types and ids hold no commas.

// contextColumn is a message's context_keys for keys.
func contextColumn(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	return strings.Join(sorted, ",")
}

// canonicalJSON is raw in the canonical form of OLPC's canonical JSON, the
// form a team's backend signs a session's context in (contextHash): object
// keys sorted by UTF-16 code units as JavaScript sorts them, no
// whitespace, strings escaping only '"' and '\', and integers only.
func canonicalJSON(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var errNotCanonical = errors.New("canonical JSON holds integers only")

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeCanonicalString(b, v)
	case json.Number:
		f, err := v.Float64()
		if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return errNotCanonical
		}
		b.WriteString(jsInteger(f))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

func writeCanonicalString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

// jsInteger writes an integral number as JavaScript's JSON.stringify does.
func jsInteger(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// compareUTF16 orders strings as JavaScript's default sort does: by UTF-16
// code units, which differs from byte order only past the Basic
// Multilingual Plane.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

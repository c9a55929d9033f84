package app_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// A fuzzCase is one seed of FuzzAPI: a route's request made from a path
// id (all of the route's ids when set), a query and a body.
type fuzzCase struct{ id, query, body string }

// mutations are the seeds FuzzAPI derives from a route's own: the kinds of
// input that can make a route answer 500 on one store or the other (text
// PostgreSQL cannot hold, numbers past float64, nesting past the limit,
// strings past every limit, wrong types, duplicate keys), in its ids, its
// query and, when it takes one, at every string and number of its body.
func mutations(method, path, seed string) []fuzzCase {
	var out []fuzzCase
	if strings.Contains(path, "{") {
		for _, id := range mutatedIDs {
			out = append(out, fuzzCase{id, "", seed})
		}
	}
	for _, q := range mutatedQueries {
		out = append(out, fuzzCase{"", q, seed})
	}
	if seed == "" || method == "GET" {
		return out
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(seed))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return out
	}
	for _, m := range bodyMutations {
		var b strings.Builder
		writeMutated(&b, doc, m)
		out = append(out, fuzzCase{"", "", b.String()})
	}
	for _, whole := range []string{`{}`, `[]`, `null`, `"x"`, seed[:len(seed)/2], seed + `x`} {
		out = append(out, fuzzCase{"", "", whole})
	}
	return out
}

// mutatedIDs stand for every id of a route's path; FuzzAPI escapes them.
var mutatedIDs = []string{
	"a\x00b", "\xff", "\xed\xa0\x80", // a NUL, a stray byte, a surrogate encoded in UTF-8
	strings.Repeat("é", 5000), "😀\u2028\ufeff", "..", "%25%00", "a/b", " ",
}

var mutatedQueries = []string{
	"limit=%00", "tags=a%00b&tags[]=%ff", "q=%ed%a0%80",
	"limit=99999999999999999999&page=1e400&offset=-1", "limit=1&limit=2",
	"filters=" + url.QueryEscape(`[{"tags":["a\u0000b"],"data":{"k\ud800":1}}]`),
	"data=" + url.QueryEscape(`{"k":"\u0000"}`) + "&payload=" + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(`{"k":"\u0000"}`))),
	"tags=" + url.QueryEscape(strings.Repeat("😀", 3000)),
}

// A bodyMutation rewrites the JSON text of each scalar of a body (raw, as
// json.Marshal writes it; key tells a member's name from a value), and
// with dup writes each member of an object twice, first with a value of
// another type.
type bodyMutation struct {
	leaf func(raw string, key bool) string
	dup  bool
}

var bodyMutations = []bodyMutation{
	{leaf: inString(func(s string) string { return s + `\u0000` })},
	{leaf: inString(func(s string) string { return "\xff" + s + "\xc3" })},
	{leaf: inString(func(s string) string { return s + `\ud800` })},
	{leaf: inString(func(s string) string { return `\udc00\ud83d` + s })},
	{leaf: inString(func(s string) string { return `\u00e9\ud83d\ude00\u2028\u0001\uffff\"\\%_` + s })},
	{leaf: valuesOnly(func(string) string { return `"` + strings.Repeat("x", 70_000) + `"` })},
	{leaf: valuesOnly(func(raw string) string {
		if raw[0] == '"' {
			return `{"a":[1]}`
		}
		return `"x"`
	})},
	{leaf: valuesOnly(func(raw string) string {
		if raw[0] == '"' {
			return `123456789012345678901234567890`
		}
		return `1e400`
	})},
	{leaf: valuesOnly(func(raw string) string { return `-0.0000000000000000000000000001` })},
	{leaf: valuesOnly(func(string) string { return `null` })},
	{leaf: valuesOnly(func(string) string { return `""` })},
	{leaf: valuesOnly(func(raw string) string { return nestedIn(raw, 60) })},
	{leaf: valuesOnly(func(raw string) string { return nestedIn(raw, 150) })},
	{leaf: func(raw string, _ bool) string { return raw }, dup: true},
}

// inString applies f to the inside of every string, keys too.
func inString(f func(s string) string) func(raw string, key bool) string {
	return func(raw string, _ bool) string {
		if raw[0] != '"' {
			return raw
		}
		return `"` + f(raw[1:len(raw)-1]) + `"`
	}
}

// valuesOnly applies f to every scalar value, leaving keys as they are.
func valuesOnly(f func(raw string) string) func(raw string, key bool) string {
	return func(raw string, key bool) string {
		if key {
			return raw
		}
		return f(raw)
	}
}

// nestedIn is raw inside depth arrays.
func nestedIn(raw string, depth int) string {
	return strings.Repeat("[", depth) + raw + strings.Repeat("]", depth)
}

// writeMutated writes v, as decoded with UseNumber, as JSON text through m.
func writeMutated(b *strings.Builder, v any, m bodyMutation) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			name := m.leaf(marshal(k), true)
			if m.dup {
				b.WriteString(name + `:[true,{}],`)
			}
			b.WriteString(name + ":")
			writeMutated(b, x[k], m)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeMutated(b, e, m)
		}
		b.WriteByte(']')
	default:
		b.WriteString(m.leaf(marshal(x), false))
	}
}

// marshal is v's JSON text, without the HTML escaping that json.Marshal
// adds, so that a mutation sees the text a client would send.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

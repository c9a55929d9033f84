package platform

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		query  string
		status int // 0 when valid
		limit  int
	}{
		{"OKDefault", "", 0, 10},
		{"OK", "limit=50", 0, 50},
		{"ErrRange", "limit=101", 422, 10},
		{"ErrZero", "limit=0", 422, 10},
		{"ErrUnparsable", "limit=ten", 400, 10},
		{"ErrBadEscape", "limit=%zz", 400, 10},       // dropped by url.Values, so never a default
		{"ErrSemicolon", "limit=50;drop=1", 400, 10}, // nor split where net/url will not
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			q := NewQuery(httptest.NewRequest("GET", "/?"+tc.query, nil))
			is.Equal(q.Int("limit", 10, 1, 100), tc.limit) // parsed or default
			err := q.Err()
			if tc.status == 0 {
				is.NoErr(err) // valid
				return
			}
			e, ok := err.(*Error)
			is.True(ok)                   // a client error
			is.Equal(e.Status, tc.status) // with the right status
			_, named := e.Fields["limit"]
			is.True(named) // naming the parameter
		})
	}
	is := is.New(t)
	q := NewQuery(httptest.NewRequest("GET", "/?t=a&t=b&t[]=c&t=a&e=x", nil))
	is.Equal(q.Strings("t"), []string{"a", "b", "c"}) // repeated and bracketed forms, each once
	is.Equal(q.Enum("e", "", "y", "z"), "")           // unknown enum falls back
	is.True(q.Err() != nil)                           // and is reported
}

// A parameter that takes one value, given twice, is a 422 naming it: the
// first value alone would narrow the answer without saying so.
func TestQuery_RepeatedSingleValue(t *testing.T) {
	for name, read := range map[string]func(q *Query){
		"String": func(q *Query) { q.String("p") },
		"Int":    func(q *Query) { q.Int("p", 10, 1, 100) },
		"Bool":   func(q *Query) { q.Bool("p") },
		"Enum":   func(q *Query) { q.Enum("p", "", "1", "2") },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			q := NewQuery(httptest.NewRequest("GET", "/?p=1&p=2", nil))
			read(q)
			e, ok := q.Err().(*Error)
			is.True(ok)             // a client error
			is.Equal(e.Status, 422) // that parsed but breaks a rule
			_, named := e.Fields["p"]
			is.True(named) // naming the parameter
		})
	}
}

// Each value of a list becomes a term of an SQL query: past SQLite's limits
// a long list was a 500, so more than maxListValues distinct values is a 422.
func TestQuery_ListBound(t *testing.T) {
	query := func(n int, distinct bool) string {
		var b strings.Builder
		for i := range n {
			if !distinct {
				i = 0
			}
			fmt.Fprintf(&b, "t=v%d&", i)
		}
		return b.String()
	}
	is := is.New(t)
	q := NewQuery(httptest.NewRequest("GET", "/?"+query(maxListValues, true), nil))
	is.Equal(len(q.Strings("t")), maxListValues) // at the bound: every value
	is.NoErr(q.Err())

	q = NewQuery(httptest.NewRequest("GET", "/?"+query(40_000, false), nil))
	is.Equal(q.Strings("t"), []string{"v0"}) // one value, however often repeated
	is.NoErr(q.Err())

	q = NewQuery(httptest.NewRequest("GET", "/?"+query(maxListValues+1, true), nil))
	q.Strings("t")
	e, ok := q.Err().(*Error)
	is.True(ok)             // past it, a client error
	is.Equal(e.Status, 422) // that names the parameter
	_, named := e.Fields["t"]
	is.True(named)
}

func TestDecodeJSON_TypeErrorPaths(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	type body struct {
		Tags     []string `json:"tags"`
		Steps    []item   `json:"steps"`
		Settings struct {
			Limit int `json:"limit"`
		} `json:"settings"`
		Matrix [][]int `json:"matrix"`
	}
	for _, tc := range []struct {
		json string
		path string
	}{
		{`{"tags":["a",1]}`, "tags.1"},
		{`{"steps":[{"name":"a"},{"name":5}]}`, "steps.1.name"},
		{`{"tags":["x"],"settings":{"limit":"x"}}`, "settings.limit"},
		{`{"matrix":[[1],[2,"x"]]}`, "matrix.1.1"},
		{`{"steps":[{"name":"a"}, {"name":[1]}]}`, "steps.1.name"},
		{`{"settings":[]}`, "settings"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			is := is.New(t)
			var v body
			err := decodeJSON([]byte(tc.json), &v)
			e, ok := err.(*Error)
			is.True(ok)             // a client error
			is.Equal(e.Status, 422) // wrong type is a validation failure
			_, named := e.Fields[tc.path]
			is.True(named) // named by its full path, indexes included
		})
	}
}

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		json  string
		depth int
	}{
		{`1`, 0},
		{`"[{"`, 0},
		{`{"a":1}`, 1},
		{`[[],[[]]]`, 3},
		{`{"a":{"b":[1,{"c":2}]},"d":[]}`, 4},
		{`{"a":"]]}}","b":[["x\"[["]]}`, 3},
		{`["\\",[1]]`, 2},
	} {
		t.Run(tc.json, func(t *testing.T) {
			is := is.New(t)
			is.Equal(JSONDepth([]byte(tc.json)), tc.depth) // brackets in strings do not count
		})
	}
}

// encoding/json would keep invalid UTF-8 inside a json.RawMessage byte for
// byte, and every later answer holding it would be invalid JSON: a 422
// naming where it is.
func TestDecodeJSON_InvalidUTF8(t *testing.T) {
	is := is.New(t)
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	err := decodeJSON([]byte("{\"data\":{\"k\":\"a\xffb\"}}"), &v)
	e, ok := err.(*Error)
	is.True(ok)             // a client error
	is.Equal(e.Status, 422) // a validation error
	_, named := e.Fields["data.k"]
	is.True(named)                                             // naming the string by its path
	is.NoErr(decodeJSON([]byte(`{"data":{"k":"añb ✓"}}`), &v)) // valid UTF-8 still is
}

// A path value is named by its wildcard in the route's pattern, so a 400
// says which parameter holds the text no store can hold.
func TestPathValues(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          map[string]string
	}{
		{"GET /v1/subscribers/{subscriberId}", "/v1/subscribers/a%00b", map[string]string{"subscriberId": "a\x00b"}},
		{"GET /v2/topics/{topicKey}/subscriptions/{identifier}", "/v2/topics/t/subscriptions/%ff", map[string]string{"topicKey": "t", "identifier": "\xff"}},
		{"GET /socket.io/", "/socket.io/x/%ff", map[string]string{"path": "x/\xff"}},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			is := is.New(t)
			got := pathValues(httptest.NewRequest("GET", tc.path, nil), tc.pattern)
			is.Equal(got, tc.want) // each segment under its wildcard's name
		})
	}
}

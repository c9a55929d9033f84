package platform_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A string PostgreSQL cannot store is refused on every store, at any depth
// of the body, with a 422 naming its JSON path.
func TestDecode_UnstorableText(t *testing.T) {
	srv, _ := newNotesServer(t)
	for _, tc := range []struct {
		name  string
		body  string
		field string // expected key in errors; "" when the body is accepted
	}{
		{"OK unicode, emoji, a surrogate pair, quotes", `{"title":"é ✓ 😀 \ud83d\ude00 \"'\\","extra":{"k":"%_"}}`, ""},
		{"OK an escaped backslash before u0000", `{"title":"\\u0000"}`, ""},
		{"ErrNUL", `{"title":"a\u0000b"}`, "title"},
		{"ErrNULInArray", `{"title":"a","tags":["t","a\u0000b"]}`, "tags.1"},
		{"ErrNULDeep", `{"title":"a","extra":[{"x":[1,true,null,{"y":"\u0000"}]}]}`, "extra.0.x.3.y"},
		{"ErrNULInKey", `{"title":"a","extra":{"k\u0000":1}}`, "extra.k\x00"},
		{"ErrInvalidUTF8", "{\"title\":\"a\xffb\"}", "title"},
		{"ErrInvalidUTF8InKey", "{\"title\":\"a\",\"extra\":{\"\xfe\":1}}", "extra.\uFFFD"},
		{"ErrLoneHighSurrogate", `{"title":"a","extra":{"x":"\ud800x"}}`, "extra.x"},
		{"ErrLoneLowSurrogate", `{"title":"a","extra":{"x":"\udc00"}}`, "extra.x"},
		{"ErrSurrogatesReversed", `{"title":"a","extra":["\udc00\ud800"]}`, "extra.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v1/notes", tc.body)
			if tc.field == "" {
				is.Equal(res.Status, 201) // storable text is accepted
				return
			}
			is.Equal(res.Status, 422) // a validation error, like any other
			var body errorBody
			res.Decode(t, &body)
			f, ok := body.Errors[tc.field]
			is.True(ok)                  // named by its JSON path
			is.Equal(len(f.Messages), 1) // with what is wrong
		})
	}
}

// A path or query value PostgreSQL cannot store is a 400 naming the
// parameter, before the handler runs.
func TestRouting_UnstorableText(t *testing.T) {
	srv, n := newNotesServer(t)
	for _, tc := range []struct {
		name, method, path, field string
	}{
		{"ErrPathNUL", "GET", "/v1/notes/a%00b", "id"},
		{"ErrPathInvalidUTF8", "GET", "/v1/notes/%ff", "id"},
		{"ErrQueryNUL", "GET", "/v1/notes/x?tags=a%00b", "tags"},
		{"ErrQueryInvalidUTF8", "POST", "/v1/notes?q=%ff", "q"},
		{"ErrQueryJSON", "GET", "/v1/notes/x?filters=" + url.QueryEscape(`[{"tags":["a\u0000b"]}]`), "filters"},
		{"ErrQueryJSONSurrogate", "GET", "/v1/notes/x?data=" + url.QueryEscape(`{"k":"\udc00"}`), "data"},
		{"ErrQueryName", "GET", "/v2/nowhere?a%00=1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, `{"title":"t"}`)
			if tc.field == "" {
				is.Equal(res.Status, 404) // an unknown route stays unknown
				return
			}
			is.Equal(res.Status, 400) // refused at the edge
			var body errorBody
			res.Decode(t, &body)
			_, ok := body.Errors[tc.field]
			is.True(ok) // naming the parameter
		})
	}
	is := is.New(t)
	is.Equal(n.runs.Load(), int32(0))                                                                                      // no handler ran
	is.Equal(srv.Dev.Do(t, "GET", "/v1/notes/%F0%9F%98%80?q=%25_%27&j=%7B%22k%22%3A%22%5C%5Cu0000%22%7D", "").Status, 404) // valid text goes through
	res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"t"}`, "Idempotency-Key", "k\xff")
	is.Equal(res.Status, 400)                                          // an idempotency key is stored, so it is text too
	is.True(strings.Contains(string(res.Body), "idempotencyKey must")) // saying which
}

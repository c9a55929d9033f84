package platform

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Query reads query-string parameters, collecting every problem so one
// response can name them all. A value that cannot be parsed at all makes the
// answer a 400; one that parses but breaks a rule (a limit out of range, an
// unknown enum value) makes it a 422 (docs/api.md, "Errors").
type Query struct {
	values   url.Values
	fields   map[string]FieldError
	unparsed bool
}

// NewQuery reads r's query string. A pair that is not valid URL encoding
// (a bad %-escape, or a ';' separator) is a 400: r.URL.Query() drops such a
// pair, and a dropped filter would widen the answer to everything.
func NewQuery(r *http.Request) *Query {
	q := &Query{values: url.Values{}}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, errK := url.QueryUnescape(k)
		value, errV := url.QueryUnescape(v)
		if errK != nil || errV != nil || strings.Contains(pair, ";") {
			q.Malformed(cmp.Or(key, k, "query"), v, "is not a valid URL-encoded query parameter")
			continue
		}
		q.values[key] = append(q.values[key], value)
	}
	return q
}

// maxListValues bounds the distinct values of a repeatable parameter. Each
// becomes a term of an SQL query, and past SQLite's limits a long enough
// list was a 500; no list endpoint needs more to filter a page.
const maxListValues = 100

// String returns the parameter, or "" when absent.
func (q *Query) String(name string) string { return q.one(name) }

// one returns the value of a parameter that takes one, or "" when absent.
// Given more than once it is a 422: answering with the first value alone
// would narrow the answer without saying so.
func (q *Query) one(name string) string {
	vals := q.values[name]
	if len(vals) > 1 {
		q.add(name, vals, "must be given once")
	}
	if len(vals) == 0 {
		return ""
	}
	return vals[0]
}

// Strings returns the distinct values of a repeatable parameter, in the
// order given, accepting both name=a&name=b and the name[]=a form that
// JavaScript clients send. More than maxListValues is a 422.
func (q *Query) Strings(name string) []string {
	var out []string
	for _, key := range []string{name, name + "[]"} {
		for _, v := range q.values[key] {
			if v == "" || slices.Contains(out, v) {
				continue
			}
			if len(out) == maxListValues {
				q.add(name, nil, "must list at most "+strconv.Itoa(maxListValues)+" values")
				return out
			}
			out = append(out, v)
		}
	}
	return out
}

// Int returns the parameter as an integer in [min, max], or def when absent.
func (q *Query) Int(name string, def, min, max int) int {
	s := q.one(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		q.Malformed(name, s, "must be an integer")
		return def
	}
	if n < min || n > max {
		q.add(name, n, "must be between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
		return def
	}
	return n
}

// Bool returns the parameter as a boolean, or nil when absent.
func (q *Query) Bool(name string) *bool {
	s := q.one(name)
	if s == "" {
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.Malformed(name, s, "must be true or false")
		return nil
	}
	return &b
}

// Enum returns the parameter when it is one of allowed, or def when absent.
func (q *Query) Enum(name, def string, allowed ...string) string {
	s := q.one(name)
	if s == "" {
		return def
	}
	if !slices.Contains(allowed, s) {
		q.add(name, s, "must be one of: "+strings.Join(allowed, ", "))
		return def
	}
	return s
}

// Fail records a problem found by the caller's own check.
func (q *Query) Fail(name string, value any, message string) { q.add(name, value, message) }

// Malformed records a value the caller could not parse at all, which makes
// the answer a 400.
func (q *Query) Malformed(name string, value any, message string) {
	q.unparsed = true
	q.add(name, value, message)
}

// Err returns the problems found so far, or nil.
func (q *Query) Err() error {
	if len(q.fields) == 0 {
		return nil
	}
	e := Invalid(q.fields)
	if q.unparsed {
		e.Status = http.StatusBadRequest
	}
	return e
}

func (q *Query) add(name string, value any, message string) {
	if q.fields == nil {
		q.fields = map[string]FieldError{}
	}
	f := q.fields[name]
	f.Messages = append(f.Messages, message)
	f.Value = value
	q.fields[name] = f
}

// QueryOf reads values as NewQuery reads a request's query string, for a
// caller that holds the parameters already (the console's filters, which
// are the API's).
func QueryOf(values url.Values) *Query {
	return &Query{values: values}
}

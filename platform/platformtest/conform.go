package platformtest

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"github.com/herald-notify/herald/sqldb"
)

// These helpers check responses the way a strict client does: each
// package's conformance test lists the spec's fields for its resources, and
// Conform fails on anything missing, null, mistyped or misspelled.

// ErrorFields are the fields every error body has (docs/api.md, "Errors").
var ErrorFields = []Field{
	{Name: "statusCode", Kind: "number", Required: true},
	{Name: "timestamp", Kind: "time", Required: true},
	{Name: "path", Kind: "string", Required: true},
	{Name: "message", Kind: "string", Required: true},
}

// Field is one property of a response object as the spec types it.
type Field struct {
	Name     string
	Kind     string // string, id, time, bool, number, object, array, any
	Required bool
	Nullable bool
	Enum     []string
}

// TimeFormat is the timestamp format (docs/api.md,
// "Identifiers and timestamps").
var TimeFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// Conform checks obj against fields as a client validating the spec's schema
// would: required keys present, types and nulls as allowed, enums exact,
// timestamps in the format (docs/api.md, "Identifiers and timestamps"), ids
// 24 lowercase hex.
func Conform(t testing.TB, where string, obj any, fields []Field) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T %v", where, obj, obj)
	}
	for _, f := range fields {
		v, present := m[f.Name]
		at := where + "." + f.Name
		if !present {
			if f.Required {
				t.Errorf("%s: required, missing", at)
			}
			continue
		}
		if v == nil {
			if !f.Nullable {
				t.Errorf("%s: null, spec allows no null", at)
			}
			continue
		}
		bad := false
		switch f.Kind {
		case "string":
			_, ok := v.(string)
			bad = !ok
		case "id":
			s, ok := v.(string)
			bad = !ok || !sqldb.IsID(s)
		case "time":
			s, ok := v.(string)
			bad = !ok || !TimeFormat.MatchString(s)
		case "bool":
			_, ok := v.(bool)
			bad = !ok
		case "number":
			_, ok := v.(float64)
			bad = !ok
		case "object":
			_, ok := v.(map[string]any)
			bad = !ok
		case "array":
			_, ok := v.([]any)
			bad = !ok
		}
		if bad {
			t.Errorf("%s: want %s, got %T %v", at, f.Kind, v, v)
			continue
		}
		if f.Enum != nil {
			if s, _ := v.(string); !slices.Contains(f.Enum, s) {
				t.Errorf("%s: %v is not one of %v", at, v, f.Enum)
			}
		}
	}
	return m
}

// DecodeAny unmarshals a response body into generic JSON.
func DecodeAny(t testing.TB, res *Response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatalf("body %s: %v", res.Body, err)
	}
	return v
}

// Items returns v as an array, failing when it is not one (null included).
func Items(t testing.TB, where string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T %v", where, v, v)
	}
	return a
}

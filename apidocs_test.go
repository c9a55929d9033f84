package main

import (
	"context"
	"errors"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPI_IsValidOpenAPI31 loads the document Herald serves with
// kin-openapi, a validator that reads OpenAPI 3.1, and fails on each error
// it finds: a client's generator or renderer reads the same document and
// stumbles on what this rejects (a stray key from an unquoted YAML comma,
// a field out of place, two paths that differ only by a parameter's name).
func TestOpenAPI_IsValidOpenAPI31(t *testing.T) {
	base, _, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:", "HERALD_API_KEY": metricsKey})
	status, body := call(t, "GET", base+"/openapi.json", "", "")
	if status != 200 {
		t.Fatalf("GET /openapi.json: %d", status)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatalf("the served document does not load as OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("the document says openapi %q, not 3.1.0", doc.OpenAPI)
	}
	err = doc.Validate(context.Background(), openapi3.EnableMultiError())
	var all openapi3.MultiError
	if !errors.As(err, &all) {
		all = openapi3.MultiError{err}
	}
	for _, e := range all {
		if e != nil {
			t.Errorf("the served document is not valid OpenAPI 3.1: %v", e)
		}
	}
}

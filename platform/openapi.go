package platform

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// OpenAPI is the platform's fragment of the API description: the
// document's head (info, security, the shared error schemas) and the
// platform's own routes. Each domain package embeds a fragment of its own,
// openapi.yaml beside its routes.go, with its paths and schemas; app/wire.go
// lists them and MergeOpenAPI joins them into the document served at
// /openapi.json.
//
//go:embed openapi.yaml
var OpenAPI []byte

//go:embed docs.html
var docsPage []byte

// redocBundle is Redoc's standalone script, which docs.html runs, stored
// gzipped: a third of its size in the binary and on the wire. See
// redoc/README.md for its version and licence.
//
//go:embed redoc/redoc.standalone.js.gz
var redocBundle []byte

// Fragment is one package's part of the API description, named for
// messages that say which file to edit.
type Fragment struct {
	Name string // the file, e.g. "subscribers/openapi.yaml"
	YAML []byte
}

// MergeOpenAPI joins fragments into one OpenAPI 3.1 document, as JSON. The
// first fragment is the head: its fields other than paths and components
// are the document's. Every fragment adds paths and components; the same
// operation or component in two fragments is an error naming both.
func MergeOpenAPI(fragments ...Fragment) ([]byte, error) {
	doc, _, err := mergeOpenAPI(fragments)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// OpenAPIOrigins maps each operation of the merged fragments, as "METHOD
// /path", to the fragment that describes it, for tests that tell which file
// to edit.
func OpenAPIOrigins(fragments ...Fragment) (map[string]string, error) {
	_, origins, err := mergeOpenAPI(fragments)
	return origins, err
}

var operationMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func mergeOpenAPI(fragments []Fragment) (map[string]any, map[string]string, error) {
	doc := map[string]any{}
	paths := map[string]any{}
	components := map[string]any{}
	origins := map[string]string{}     // "METHOD /path" → fragment
	componentOf := map[string]string{} // "kind/name" → fragment
	for i, f := range fragments {
		var part map[string]any
		if err := yaml.Unmarshal(f.YAML, &part); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if i == 0 {
			for k, v := range part {
				if k != "paths" && k != "components" {
					doc[k] = v
				}
			}
		}
		fpaths, _ := part["paths"].(map[string]any)
		for _, path := range slices.Sorted(maps.Keys(fpaths)) {
			item, ok := fpaths[path].(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("%s: path %s is not an object", f.Name, path)
			}
			merged, _ := paths[path].(map[string]any)
			if merged == nil {
				merged = map[string]any{}
				paths[path] = merged
			}
			for k, v := range item {
				if slices.Contains(operationMethods, k) {
					op := strings.ToUpper(k) + " " + path
					if prev, dup := origins[op]; dup {
						return nil, nil, fmt.Errorf("%s and %s both describe %s", prev, f.Name, op)
					}
					origins[op] = f.Name
					addIdempotencyKey(v)
				}
				merged[k] = v
			}
		}
		fcomponents, _ := part["components"].(map[string]any)
		for kind, entries := range fcomponents {
			entries, _ := entries.(map[string]any)
			merged, _ := components[kind].(map[string]any)
			if merged == nil {
				merged = map[string]any{}
				components[kind] = merged
			}
			for name, v := range entries {
				key := kind + "/" + name
				if prev, dup := componentOf[key]; dup {
					return nil, nil, fmt.Errorf("%s and %s both define components.%s.%s", prev, f.Name, kind, name)
				}
				componentOf[key] = f.Name
				merged[name] = v
			}
		}
	}
	doc["paths"] = paths
	doc["components"] = components
	return doc, origins, nil
}

// addIdempotencyKey lists the idempotency-key header among the parameters
// of an operation that takes the API key: every API route accepts it
// (docs/api.md, "Idempotency keys"), so no fragment repeats it.
func addIdempotencyKey(op any) {
	m, ok := op.(map[string]any)
	if !ok {
		return
	}
	// An operation with a security of its own (none, or the inbox's
	// subscriber token) is served outside the API key's middleware, and
	// so without idempotency.
	if security, ok := m["security"].([]any); ok && !slices.ContainsFunc(security, func(req any) bool {
		_, apiKey := req.(map[string]any)["ApiKey"]
		return apiKey
	}) {
		return
	}
	params, _ := m["parameters"].([]any)
	m["parameters"] = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKey"})
}

// handleOpenAPI serves GET /openapi.json: the merged description.
func handleOpenAPI(doc []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, doc)
	})
}

// handleDocs serves GET /docs: a page, served from the binary, on which
// Redoc renders /openapi.json, so the reference needs no network.
func handleDocs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		// The page runs only the bundle of this origin and reads only this
		// origin. Redoc sets its styles inline and runs its search in a
		// worker made from a blob.
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; "+
			"connect-src 'self'; img-src 'self' data:; worker-src blob:")
		w.Write(docsPage)
	})
}

// handleRedoc serves GET /docs/redoc.standalone.js: the stored gzip as it
// is to a client that takes gzip, and inflated to one that does not.
func handleRedoc() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			w.Write(redocBundle)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(redocBundle))
		if err != nil {
			WriteError(w, r, err)
			return
		}
		io.Copy(w, zr)
	})
}

// acceptsGzip reports whether an Accept-Encoding header admits gzip,
// named or as *, with a weight above zero.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if name != "gzip" && name != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		if w, err := strconv.ParseFloat(q, 64); err == nil && w > 0 {
			return true
		}
	}
	return false
}

package activity

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/herald-notify/herald/platform"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// payloadValidationType is the `type` of the trigger's 400 (docs/api.md,
// "What strict clients check").
const payloadValidationType = "PAYLOAD_VALIDATION_ERROR"

// schemaCache keeps compiled payload schemas by their bytes: compiling is far
// slower than validating, and a workflow's schema changes rarely. It is
// emptied when it grows past schemaCacheMax, which bounds it without an LRU.
var schemaCache = struct {
	sync.Mutex
	m map[[32]byte]*jsonschema.Schema
}{m: map[[32]byte]*jsonschema.Schema{}}

const schemaCacheMax = 512

func compileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	key := sha256.Sum256(schema)
	schemaCache.Lock()
	sch, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return sch, nil
	}
	// The same compile that workflows use to refuse a schema when it is
	// written; one stored before that still fails here, with a clear 400.
	sch, err := platform.CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	schemaCache.Lock()
	if len(schemaCache.m) >= schemaCacheMax {
		clear(schemaCache.m)
	}
	schemaCache.m[key] = sch
	schemaCache.Unlock()
	return sch, nil
}

// payloadError is one entry of the 400's errors array.
type payloadError struct {
	Field      string `json:"field"`
	Message    string `json:"message"`
	Value      any    `json:"value,omitempty"`
	SchemaPath string `json:"schemaPath,omitempty"`
}

// withDefaults fills in the payload the `default` of every property the
// schema declares and the payload lacks, in nested objects too, as the
// reference's validator does before it validates. Payload values are never
// replaced.
func withDefaults(schema, payload json.RawMessage) json.RawMessage {
	var sch map[string]any
	var doc map[string]any
	if json.Unmarshal(schema, &sch) != nil || json.Unmarshal(payload, &doc) != nil || doc == nil {
		return payload
	}
	if !fillDefaults(sch, doc) {
		return payload
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return payload
	}
	return b
}

func fillDefaults(sch map[string]any, doc map[string]any) (changed bool) {
	props, _ := sch["properties"].(map[string]any)
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		v, present := doc[name]
		if def, has := ps["default"]; has && !present {
			doc[name] = def
			changed = true
			continue
		}
		if sub, ok := v.(map[string]any); ok && fillDefaults(ps, sub) {
			changed = true
		}
	}
	return changed
}

// validatePayload checks payload against the workflow's payloadSchema and
// returns the 400 of the "What strict clients check" section of docs/api.md
// listing every failure.
func validatePayload(schema, payload json.RawMessage) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return payloadInvalid("The workflow's payloadSchema is not a valid JSON Schema", []payloadError{{
			Field: "payloadSchema", Message: err.Error()}}, schema)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return payloadInvalid("Payload is not valid JSON", nil, schema)
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	var list []payloadError
	collect(verr, inst, &list)
	return payloadInvalid("Payload validation failed", list, schema)
}

// collect flattens a validation error tree into its leaves: each names one
// value and the rule it broke.
func collect(e *jsonschema.ValidationError, inst any, out *[]payloadError) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, inst, out)
		}
		return
	}
	field := "/" + strings.Join(e.InstanceLocation, "/")
	// The schema path is the keyword's absolute location inside the schema:
	// the fragment of the subschema's URL, then the keyword.
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	kw := append(strings.Split(strings.Trim(frag, "/"), "/"), e.ErrorKind.KeywordPath()...)
	kw = slices.DeleteFunc(kw, func(s string) bool { return s == "" })
	pe := payloadError{Field: field, Message: platform.SchemaMessage(e), SchemaPath: "#/" + strings.Join(kw, "/")}
	if v, ok := platform.ValueAtTokens(inst, e.InstanceLocation); ok {
		pe.Value = v
	}
	*out = append(*out, pe)
}

func payloadInvalid(msg string, list []payloadError, schema json.RawMessage) error {
	if list == nil {
		list = []payloadError{}
	}
	return &platform.Error{Status: http.StatusBadRequest, Message: msg, Extra: map[string]any{
		"type": payloadValidationType, "errors": list, "schema": schema}}
}

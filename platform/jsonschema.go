package platform

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL names every client's schema while it compiles. It must be
// absolute: jsonschema resolves a relative name against the working
// directory, and its file:// URL then showed in errors. The .invalid domain
// never resolves (RFC 2606), and nothing is loaded from it anyway.
const (
	schemaBase = "https://herald.invalid/"
	schemaURL  = schemaBase + "payload-schema.json"
)

var schemaPrinter = message.NewPrinter(language.English)

// refuseLoader loads nothing, so a schema may refer only into itself and to
// the standard drafts' meta-schemas, which jsonschema embeds. Its default
// loader reads file:// URLs from the server's disk, and a client's $ref must
// never read the server's files or make it fetch a URL.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errors.ErrUnsupported }

// CompileSchema compiles a client's JSON Schema document (a workflow's
// payloadSchema), so that workflows can refuse what the trigger could not
// compile. Its errors name no server path and read as one line.
func CompileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, errors.New(schemaProblem(err))
	}
	// A $ref cycle ({"$ref": "#"}) compiles, then fails every validation
	// that reaches it; one at the top is reached by any payload.
	var ve *jsonschema.ValidationError
	if errors.As(sch.Validate(map[string]any{}), &ve) && hasRefCycle(ve) {
		return nil, errors.New("a $ref leads back to itself, so no payload could ever be validated")
	}
	return sch, nil
}

// hasRefCycle reports whether a validation failed on a $ref cycle.
func hasRefCycle(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.RefCycle); ok {
		return true
	}
	return slices.ContainsFunc(e.Causes, hasRefCycle)
}

// SchemaMessage is the message of one broken rule, without the made-up URL
// every client's schema is compiled under.
func SchemaMessage(e *jsonschema.ValidationError) string {
	return strings.ReplaceAll(e.ErrorKind.LocalizedString(schemaPrinter), schemaURL, "")
}

// schemaProblem describes a compile error without the schema's made-up URL:
// each broken rule of the meta-schema with its place in the schema, the
// document a $ref would have loaded, or the error itself ("#/nope" rather
// than "https://herald.invalid/payload-schema.json#/nope").
func schemaProblem(err error) string {
	var se *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	var le *jsonschema.LoadURLError
	switch {
	case errors.As(err, &se) && errors.As(se.Err, &ve):
		var leaves []string
		collectLeaves(ve, &leaves)
		return strings.Join(leaves, "; ")
	case errors.As(err, &le):
		return fmt.Sprintf("refers to %q: a payload schema may refer only to itself, no other document is loaded",
			strings.TrimPrefix(le.URL, schemaBase))
	}
	return strings.ReplaceAll(err.Error(), schemaURL, "")
}

func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectLeaves(c, out)
		}
		return
	}
	*out = append(*out, fmt.Sprintf("at '/%s': %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(schemaPrinter)))
}

package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// DefaultMaxPayload is a trigger payload's limit when HERALD_MAX_PAYLOAD is
// not set: far above what a notification's template reads, far below what
// would let one request fill the disk through a broadcast (docs/security.md,
// "Bounded payloads").
const DefaultMaxPayload = 512 << 10

type payloadLimitKey struct{}

// PayloadProblem says what is wrong with a trigger's payload, raw JSON the
// decoder has already accepted, for the 422 of the trigger (docs/api.md,
// "Errors"), or "" when nothing is: larger than the server's payload limit,
// or a number JSON can write but a float64 cannot hold (1e309), which would
// otherwise fail the steps that render it long after the trigger was
// accepted.
func PayloadProblem(ctx context.Context, raw []byte) string {
	limit, _ := ctx.Value(payloadLimitKey{}).(int64)
	if limit <= 0 {
		limit = DefaultMaxPayload
	}
	if int64(len(raw)) > limit {
		return fmt.Sprintf("is %d bytes, over the limit of %d (HERALD_MAX_PAYLOAD)", len(raw), limit)
	}
	if n, ok := hugeNumber(raw); ok {
		return fmt.Sprintf("holds the number %s, past the range of a 64-bit float", truncateNumber(n))
	}
	return ""
}

// hugeNumber finds a number in doc, valid JSON, whose magnitude a float64
// cannot hold. Only a number with an exponent or 309 characters can be one,
// so the rest are skipped without parsing.
func hugeNumber(doc []byte) (string, bool) {
	inString := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			start, exp := i, false
			for i < len(doc) && isNumberByte(doc[i]) {
				exp = exp || doc[i] == 'e' || doc[i] == 'E'
				i++
			}
			n := doc[start:i]
			i--
			if !exp && len(n) < 309 {
				continue
			}
			if f, _ := strconv.ParseFloat(string(n), 64); math.IsInf(f, 0) {
				return string(n), true
			}
		}
	}
	return "", false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func truncateNumber(n string) string {
	if len(n) > 40 {
		return n[:20] + "…" + n[len(n)-10:]
	}
	return n
}

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

// DefaultMaxRequestStorage is the most bytes one request may cause to be
// stored when HERALD_MAX_REQUEST_STORAGE is not set: a trigger's payload is
// stored once, but what its templates render from it is stored in each
// recipient's messages, so a large payload sent to many subscribers could
// otherwise fill the disk in a few requests.
const DefaultMaxRequestStorage = 64 << 20

type storageLimitKey struct{}

// StorageProblem is the 422 of a request that would store bytes, as what
// describes them, past the server's limit (ServerConfig.MaxRequestStorage),
// or nil when it is within it.
func StorageProblem(ctx context.Context, bytes int64, what string) error {
	limit, _ := ctx.Value(storageLimitKey{}).(int64)
	if limit <= 0 {
		limit = DefaultMaxRequestStorage
	}
	if bytes <= limit {
		return nil
	}
	return &Error{Status: http.StatusUnprocessableEntity,
		Message: fmt.Sprintf("This request would store about %d bytes (%s), over the limit of %d bytes a request may store (HERALD_MAX_REQUEST_STORAGE)",
			bytes, what, limit)}
}

// DefaultMaxAttachments is the most bytes of files one trigger request may
// carry when HERALD_MAX_ATTACHMENTS is not set (docs/attachments.md): an
// invoice or a ticket, with room to spare, well under what email
// providers accept in one message.
const DefaultMaxAttachments = 10 << 20

type attachmentLimitKey struct{}

// attachmentRoutes are the paths whose body may carry a trigger's files.
var attachmentRoutes = map[string]bool{"/v1/events/trigger": true, "/v1/events/trigger/bulk": true,
	"/v1/events/trigger/broadcast": true}

// AttachmentLimit is the most bytes of files, decoded, one trigger request
// may carry (ServerConfig.MaxAttachments).
func AttachmentLimit(ctx context.Context) int64 {
	if limit, _ := ctx.Value(attachmentLimitKey{}).(int64); limit > 0 {
		return limit
	}
	return DefaultMaxAttachments
}

package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
)

// Validator is implemented by request types with rules that struct tags cannot
// express (one field required when another is empty, say). Valid returns the
// problems keyed by JSON path; an empty map means the value is valid.
type Validator interface {
	Valid(ctx context.Context) map[string]string
}

// Decode reads the request body as JSON into a T and validates it: the only
// way a handler reads a body. Unknown fields are ignored, as the reference
// platform does. It fails with 415 for a non-JSON content type, 413 past the
// body limit, 400 for malformed JSON or JSON nested past MaxJSONDepth, and
// 422 for wrong types, failed rules or a string no store can hold (a NUL,
// invalid UTF-8: checkBodyText), naming each field by its JSON path.
func Decode[T any](r *http.Request) (T, error) {
	var v T
	if err := checkContentType(r); err != nil {
		return v, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return v, readError(err)
	}
	if err := decodeJSON(body, &v); err != nil {
		return v, WithRejectedValues(err, body)
	}
	if err := ValidateRequest(r.Context(), v); err != nil {
		return v, WithRejectedValues(err, body)
	}
	return v, nil
}

// WithRejectedValues fills in, for each field of a 422 that names no value,
// the value the body holds at that field's path (docs/api.md, "Errors"). A
// Valid method reports only paths and messages; the client should still see
// what it sent.
func WithRejectedValues(err error, body []byte) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	// Numbers decode as float64, so a value past its range (1e400) leaves
	// every value out rather than echo a number no client can read.
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return err
	}
	for path, f := range e.Fields {
		if f.Value != nil {
			continue
		}
		if v, ok := ValueAt(doc, path); ok && echoable(v) {
			f.Value = v
			e.Fields[path] = f
		}
	}
	return err
}

// maxEchoed bounds a rejected value sent back in a 422: a payload refused
// for its size is not worth sending back whole.
const maxEchoed = 4 << 10

func echoable(v any) bool {
	switch x := v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(x)
		return err == nil && len(b) <= maxEchoed
	case string:
		return len(x) <= maxEchoed
	}
	return true
}

func readError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return Errorf(http.StatusRequestEntityTooLarge, "Request body is larger than %d bytes", tooBig.Limit)
	}
	return BadRequest("Could not read the request body")
}

// ValidateRequest runs the struct tags and then Valid, if v has it, and
// returns their problems as one 422. Handlers that decode a body by hand (a
// field that is a string or an array, say) call it themselves.
func ValidateRequest(ctx context.Context, v any) error {
	if err := validateStruct(v); err != nil {
		return err
	}
	if vv, ok := v.(Validator); ok {
		if problems := vv.Valid(ctx); len(problems) > 0 {
			fields := make(map[string]FieldError, len(problems))
			for path, msg := range problems {
				fields[path] = FieldError{Messages: []string{msg}, Value: nil}
			}
			return Invalid(fields)
		}
	}
	return nil
}

func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil // curl -d and many SDKs omit it; the body still has to parse
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return Errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json, not %q", ct)
	}
	return nil
}

func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return BadRequest("Request body must hold a single JSON value")
		}
		if JSONDepth(body) > MaxJSONDepth {
			return BadRequest("Request body nests objects and arrays deeper than %d levels", MaxJSONDepth)
		}
		return checkBodyText(body)
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return BadRequest("Request body is empty; a JSON object is required")
	case errors.As(err, &typeErr):
		// encoding/json names struct fields but not array indexes
		// ("steps.name"), so find the exact path from the error's offset.
		field := pathAtOffset(body, typeErr.Offset)
		if field == "" {
			field = typeErr.Field
		}
		if field == "" {
			return BadRequest("Request body must be a JSON %s", jsonKind(typeErr.Type))
		}
		return InvalidField(field, nil, "must be %s", article(jsonKind(typeErr.Type)))
	default:
		return BadRequest("Request body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// MaxJSONDepth is how deeply a request's JSON may nest objects and arrays.
// SQLite's JSON functions refuse a document nested past 1,000 levels, so a
// deeper payload was stored and then failed, with a 500, every feed query
// that filtered on payloads. What a request holds is stored a few levels
// further down (a payload inside a feed item or a digest's events); the
// reference platform's MongoDB stops documents at 100 levels.
const MaxJSONDepth = 100

// JSONDepth returns how deeply the JSON text b nests objects and arrays: 0
// for a scalar, 1 for {"a":1}. It reads b as text, so it is meant for JSON
// that has already parsed.
func JSONDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func article(kind string) string {
	if kind == "array" || kind == "object" {
		return "an " + kind
	}
	return "a " + kind
}

var validate = newValidator()

// idPattern is the shape of every _id (docs/api.md,
// "Identifiers and timestamps").
var idPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	// Report fields by their JSON names, so errors read as the client wrote them.
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	v.RegisterValidation("objectid", func(fl validator.FieldLevel) bool {
		return idPattern.MatchString(fl.Field().String())
	})
	return v
}

// RegisterValidation adds a validator tag that domain types can use, such as
// a slug pattern. It must be called before the first request, from init.
func RegisterValidation(tag string, fn func(value string) bool) {
	validate.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
		return fn(fl.Field().String())
	})
}

func validateStruct(v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	err := validate.Struct(v)
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return err
	}
	fields := make(map[string]FieldError, len(verrs))
	for _, fe := range verrs {
		path := jsonPath(fe.Namespace())
		f := fields[path]
		f.Messages = append(f.Messages, ruleMessage(fe))
		f.Value = fe.Value()
		fields[path] = f
	}
	return Invalid(fields)
}

// jsonPath turns a validator namespace such as "request.channels[0].providerId"
// into the dotted JSON path "channels.0.providerId".
func jsonPath(namespace string) string {
	_, path, ok := strings.Cut(namespace, ".")
	if !ok {
		path = namespace
	}
	path = strings.ReplaceAll(path, "[", ".")
	return strings.ReplaceAll(path, "]", "")
}

func ruleMessage(fe validator.FieldError) string {
	param := fe.Param()
	counted := fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map
	switch fe.Tag() {
	case "required", "required_without", "required_if":
		return "is required"
	case "oneof":
		return "must be one of: " + strings.Join(strings.Fields(param), ", ")
	case "email":
		return "must be a valid email address"
	case "url", "http_url":
		return "must be a valid URL"
	case "objectid":
		return "must be a 24-character hex id"
	case "min":
		if counted {
			return fmt.Sprintf("must contain at least %s items", param)
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("must be at least %s characters long", param)
		}
		return "must not be less than " + param
	case "max":
		if counted {
			return fmt.Sprintf("must contain at most %s items", param)
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("must be at most %s characters long", param)
		}
		return "must not be greater than " + param
	case "gte":
		return "must not be less than " + param
	case "lte":
		return "must not be greater than " + param
	case "gt":
		return "must be greater than " + param
	case "unique":
		return "must not contain duplicates"
	default:
		return fmt.Sprintf("failed the %q rule", fe.Tag())
	}
}

// ValidEach runs Valid on each item of a list field and keys each problem
// by the item's JSON path (field.i.path), for a body's Valid that checks
// its list's items as their own bodies would be checked.
func ValidEach[T Validator](ctx context.Context, field string, items []T) map[string]string {
	problems := map[string]string{}
	for i, item := range items {
		for k, v := range item.Valid(ctx) {
			problems[fmt.Sprintf("%s.%d.%s", field, i, k)] = v
		}
	}
	return problems
}

// pathAtOffset returns the dotted JSON path ("steps.0.name") of the value in
// data that the decoder was reading at byte offset, or "" if none is found.
// It walks the tokens once, keeping a stack of the objects and arrays it is in.
func pathAtOffset(data []byte, offset int64) string {
	type frame struct {
		array   bool
		index   int    // arrays: index of the current element
		key     string // objects: key of the current member
		wantKey bool   // objects: the next string token is a key
	}
	var stack []*frame
	path := func() string {
		parts := make([]string, len(stack))
		for i, f := range stack {
			if f.array {
				parts[i] = strconv.Itoa(f.index)
			} else {
				parts[i] = f.key
			}
		}
		return strings.Join(parts, ".")
	}
	// advance moves the innermost container past the value just finished.
	advance := func() {
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.array {
				top.index++
			} else {
				top.wantKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			advance()
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
			continue
		}
		// tok is a value: a scalar, or the start of an object or array.
		if dec.InputOffset() >= offset {
			return path()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{array: d == '[', wantKey: d == '{'})
			continue
		}
		advance()
	}
}

// ValueAt follows a dotted path ("messageId.0", "payload.order.id") into a
// decoded JSON document: each segment a key of an object or an index of an
// array. It is the one path walker of Herald: a 422's rejected values, a
// payload schema's failing value, a delay's delayPath, a digest's key and a
// step's control values are all found with it.
func ValueAt(doc any, path string) (any, bool) {
	return ValueAtTokens(doc, strings.Split(path, "."))
}

// ValueAtTokens is ValueAt for a path already split, such as a JSON
// pointer's tokens.
func ValueAtTokens(doc any, path []string) (any, bool) {
	for _, tok := range path {
		switch node := doc.(type) {
		case map[string]any:
			v, ok := node[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			doc = node[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

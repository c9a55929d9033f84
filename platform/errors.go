package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// ErrNotFound is what a store returns when the row it was asked for does not
// exist in the caller's environment. Handlers turn it into a NotFound that
// names the resource.
var ErrNotFound = errors.New("not found")

// Error is an error a client is meant to see: an HTTP status, a public
// message and, for 422, the problem with each field keyed by its JSON path.
// Any error that is not an *Error is a bug and is answered with a 500 whose
// cause is logged, never sent (docs/api.md, "Errors").
type Error struct {
	Status  int
	Message string
	Fields  map[string]FieldError // the 422 "errors" object
	Extra   map[string]any        // further top-level body fields, such as "type"
	Header  http.Header           // further response headers, such as Retry-After
}

// FieldError is one entry of a 422 body's "errors" object.
type FieldError struct {
	Messages []string `json:"messages"`
	Value    any      `json:"value"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Errorf returns an *Error with the given status and formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a 404 error.
func NotFound(format string, args ...any) *Error {
	return Errorf(http.StatusNotFound, format, args...)
}

// Conflict returns a 409 error.
func Conflict(format string, args ...any) *Error {
	return Errorf(http.StatusConflict, format, args...)
}

// BadRequest returns a 400 error.
func BadRequest(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, format, args...)
}

// Unauthorized returns a 401 error.
func Unauthorized(message string) *Error {
	return &Error{Status: http.StatusUnauthorized, Message: message}
}

// Invalid returns a 422 error for the given field problems.
func Invalid(fields map[string]FieldError) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: validationMessage(fields), Fields: fields}
}

// InvalidField returns a 422 error for a single field.
func InvalidField(field string, value any, format string, args ...any) *Error {
	return Invalid(map[string]FieldError{field: {Messages: []string{fmt.Sprintf(format, args...)}, Value: value}})
}

func validationMessage(fields map[string]FieldError) string {
	msg := "Validation failed"
	for _, name := range sortedKeys(fields) {
		msg += fmt.Sprintf("; %s: %s", name, joinMessages(fields[name].Messages))
	}
	return msg
}

func joinMessages(ms []string) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += ", "
		}
		out += m
	}
	return out
}

// Wrap adds context to *errp, when it is not nil, keeping the chain intact so
// an *Error or ErrNotFound underneath is still found with errors.As and Is:
//
//	defer platform.Wrap(&err, "create subscriber %s", id)
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

// WriteError writes err as the JSON body of the "Errors" section of
// docs/api.md. It is the only code that turns errors into responses.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, ErrNotFound):
		e = NotFound("Resource not found")
	default:
		// A bug or an unavailable database: the client gets an id to quote,
		// the log line gets the same id and the cause.
		id := sqldb.NewID()
		noteFailure(r.Context(), id, err)
		e = &Error{
			Status:  http.StatusInternalServerError,
			Message: "Internal server error, contact support and provide them with the errorId",
			Extra:   map[string]any{"errorId": id},
		}
	}
	body := map[string]any{
		"statusCode": e.Status,
		"error":      http.StatusText(e.Status),
		"timestamp":  sqldb.FormatTime(time.Now()),
		"path":       r.URL.RequestURI(),
		"message":    e.Message,
	}
	if e.Fields != nil {
		body["errors"] = e.Fields
	}
	for k, v := range e.Extra {
		body[k] = v
	}
	for k, vs := range e.Header {
		w.Header()[k] = vs
	}
	b, merr := json.Marshal(body)
	if merr != nil {
		// Only an Extra value can fail to marshal; fall back to the bare body.
		b, _ = json.Marshal(map[string]any{"statusCode": e.Status, "message": e.Message})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	w.Write(b)
}

// HandlerFunc is a handler that returns its error instead of writing it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts fn to http.Handler, sending any error it returns to WriteError.
// Every route's handler is wrapped by it exactly once.
func Handle(fn HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			WriteError(w, r, err)
		}
	})
}

// JSON writes v as a JSON response with the given status. The body is marshalled
// before anything is written, so a marshalling failure still becomes a clean 500.
func JSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteJSON(w, status, b)
}

// WriteJSON writes body, which is JSON already, as the response with the
// given status, for a handler that encodes its own hot response.
func WriteJSON(w http.ResponseWriter, status int, body []byte) error {
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// With its length known, net/http sends the body as it is instead of
	// in chunks (it only measures bodies under 2 KB itself): a feed page
	// goes out in two writes, and the client reads it to a known end.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	// A failed write means the client went away; there is no one left to tell.
	w.Write(body)
	return nil
}

// NoContent writes a 204 with no body.
func NoContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package platform

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
)

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

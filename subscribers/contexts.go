package subscribers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"

	"github.com/herald-notify/herald/platform"
)

// contextPartPattern is what a context's type and id look like.
var contextPartPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,100}$`)

// MaxContextData bounds a context's data, as JSON.
const MaxContextData = 64 << 10

func init() {
	platform.RegisterValidation("contextpart", contextPartPattern.MatchString)
}

// Context is a tenant, app, region… a trigger is sent on behalf of
// (docs/content.md, "Contexts"): its type, its id within the type, and its
// data, a JSON object.
type Context struct {
	Type, ID             string
	Data                 json.RawMessage
	CreatedAt, UpdatedAt string
}

// Key is the context's type:id, as notifications keep it.
func (c Context) Key() string { return c.Type + ":" + c.ID }

// ContextRef is a context a trigger names: Data is nil when it gives none.
type ContextRef struct {
	Type, ID string
	Data     json.RawMessage
}

// CheckContextRef reports what is wrong with a context a trigger names, or
// "".
func CheckContextRef(r ContextRef) string {
	switch {
	case !contextPartPattern.MatchString(r.Type):
		return fmt.Sprintf("type %q must be 1 to 100 letters, digits, _ or -", r.Type)
	case !contextPartPattern.MatchString(r.ID):
		return fmt.Sprintf("id %q of %s must be 1 to 100 letters, digits, _ or -", r.ID, r.Type)
	case len(r.Data) > MaxContextData:
		return fmt.Sprintf("data of %s:%s is larger than %d bytes", r.Type, r.ID, MaxContextData)
	}
	return ""
}

// contextResponse is a context on the wire.
type contextResponse struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Data      json.RawMessage `json:"data"`
	CreatedAt string          `json:"createdAt"`
	UpdatedAt string          `json:"updatedAt"`
}

func toContextResponse(c Context) contextResponse {
	return contextResponse{Type: c.Type, ID: c.ID, Data: c.Data, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// contextData checks a context's data: a JSON object of at most
// MaxContextData bytes; absent is {}.
func contextData(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil, platform.InvalidField("data", nil, "must be an object")
	}
	if len(raw) > MaxContextData {
		return nil, platform.InvalidField("data", nil, "must be at most %d bytes as JSON", MaxContextData)
	}
	return raw, nil
}

// contextPath reads the type and id of a context route.
func contextPath(r *http.Request) (typ, id string, err error) {
	typ, id = r.PathValue("type"), r.PathValue("id")
	if !contextPartPattern.MatchString(typ) {
		return "", "", platform.InvalidField("type", typ, "must be 1 to 100 letters, digits, _ or -")
	}
	if !contextPartPattern.MatchString(id) {
		return "", "", platform.InvalidField("id", id, "must be 1 to 100 letters, digits, _ or -")
	}
	return typ, id, nil
}

// handleContextCreate serves POST /v2/contexts: 409 when type:id exists.
func handleContextCreate(store *Store) http.Handler {
	type request struct {
		Type      string          `json:"type" validate:"required,contextpart"`
		ID        string          `json:"id" validate:"required,contextpart"`
		Data      json.RawMessage `json:"data"`
		BridgeURL *string         `json:"bridgeUrl"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		data, err := contextData(req.Data)
		if err != nil {
			return err
		}
		c, err := store.createContext(r.Context(), platform.TenantFrom(r.Context()), req.Type, req.ID, data)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, toContextResponse(c))
	})
}

// handleContextList serves GET /v2/contexts: a cursor page (docs/api.md,
// "Lists and paging"), of one id or of keys holding search.
func handleContextList(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		p := readPageQuery(q)
		q.Bool("includeCursor") // accepted: every page carries its cursors
		id, search := q.String("id"), q.String("search")
		if err := q.Err(); err != nil {
			return err
		}
		list, next, previous, total, err := store.contextPage(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID,
			contextFilter{id: id, search: search}, p)
		if err != nil {
			return err
		}
		res := cursorPage[contextResponse]{Data: make([]contextResponse, len(list)), Next: encoded(next),
			Previous: encoded(previous), TotalCount: total, TotalCountCapped: total >= countCap}
		for i, c := range list {
			res.Data[i] = toContextResponse(c)
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// handleContextGet serves GET /v2/contexts/{type}/{id}.
func handleContextGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, err := contextPath(r)
		if err != nil {
			return err
		}
		c, err := store.context(r.Context(), store.db, platform.TenantFrom(r.Context()).EnvironmentID, typ+":"+id)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toContextResponse(c))
	})
}

// handleContextUpdate serves PATCH /v2/contexts/{type}/{id}: data is
// replaced, not merged.
func handleContextUpdate(store *Store) http.Handler {
	type request struct {
		Data      json.RawMessage `json:"data" validate:"required"`
		BridgeURL *string         `json:"bridgeUrl"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, err := contextPath(r)
		if err != nil {
			return err
		}
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		if string(req.Data) == "null" {
			return platform.InvalidField("data", nil, "is required")
		}
		data, err := contextData(req.Data)
		if err != nil {
			return err
		}
		c, err := store.updateContext(r.Context(), platform.TenantFrom(r.Context()), typ+":"+id, data)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toContextResponse(c))
	})
}

// handleContextDelete serves DELETE /v2/contexts/{type}/{id}.
func handleContextDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, err := contextPath(r)
		if err != nil {
			return err
		}
		if err := store.deleteContext(r.Context(), platform.TenantFrom(r.Context()), typ+":"+id); err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

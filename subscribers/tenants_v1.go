package subscribers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// The older clients' tenants are Herald's contexts of type tenant
// (docs/content.md, "Tenants (v1)"): the identifier is the context's id,
// and the name is kept in its data as name, where a trigger's tenant field
// puts it too. So a tenant created here is the context a trigger names
// with {"tenant": "acme"}, and the reverse.

// tenantType is the context type the v1 tenant routes manage.
const tenantType = "tenant"

// tenantV1 is a tenant on the wire.
type tenantV1 struct {
	ID            string          `json:"_id"`
	Identifier    string          `json:"identifier"`
	Name          string          `json:"name"`
	Data          json.RawMessage `json:"data"`
	EnvironmentID string          `json:"_environmentId"`
	CreatedAt     string          `json:"createdAt"`
	UpdatedAt     string          `json:"updatedAt"`
}

// toTenantV1 splits the stored data into the name and the rest.
func toTenantV1(rowID, envID string, c Context) tenantV1 {
	t := tenantV1{ID: rowID, Identifier: c.ID, EnvironmentID: envID, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Data: json.RawMessage(`{}`)}
	var data map[string]json.RawMessage
	if json.Unmarshal(c.Data, &data) == nil {
		if raw, ok := data["name"]; ok && json.Unmarshal(raw, &t.Name) == nil {
			delete(data, "name")
		}
		t.Data, _ = json.Marshal(data)
	}
	return t
}

// tenantData is what a tenant's name and data store as its context's data.
func tenantData(name *string, raw json.RawMessage) (json.RawMessage, error) {
	data := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" && json.Unmarshal(raw, &data) != nil {
		return nil, platform.InvalidField("data", json.RawMessage(raw), "must be an object")
	}
	if name != nil {
		data["name"] = *name
	}
	out, _ := json.Marshal(data)
	return contextData(out)
}

// tenantNotFound is the 404 of a tenant path.
func tenantNotFound(identifier string) error {
	return platform.NotFound("Tenant with identifier: %s is not found", identifier)
}

// tenantPath reads {identifier}; one no context can have is not found.
func tenantPath(r *http.Request) (string, error) {
	id := r.PathValue("identifier")
	if !contextPartPattern.MatchString(id) {
		return "", tenantNotFound(id)
	}
	return id, nil
}

// handleTenantCreate serves POST /v1/tenants: 409 when the identifier is
// taken.
func handleTenantCreate(store *Store) http.Handler {
	type request struct {
		Identifier string          `json:"identifier" validate:"required,contextpart"`
		Name       *string         `json:"name" validate:"required,max=256"`
		Data       json.RawMessage `json:"data"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		data, err := tenantData(req.Name, req.Data)
		if err != nil {
			return err
		}
		tenant := platform.TenantFrom(r.Context())
		c, err := store.createContext(r.Context(), tenant, tenantType, req.Identifier, data)
		if hasStatus(err, http.StatusConflict) {
			return platform.Conflict("Tenant with identifier: %s already exists", req.Identifier)
		}
		if err != nil {
			return err
		}
		return store.writeTenant(r.Context(), w, http.StatusCreated, tenant.EnvironmentID, c.ID)
	})
}

// hasStatus reports whether err is a platform error of that status.
func hasStatus(err error, status int) bool {
	var e *platform.Error
	return errors.As(err, &e) && e.Status == status
}

// writeTenant reads the tenant back, with its row's _id, and writes it.
func (s *Store) writeTenant(ctx context.Context, w http.ResponseWriter, status int, envID, identifier string) error {
	var rowID string
	c, err := scanTenantRow(s.db.QueryRowContext(ctx, `SELECT id, `+contextColumns+` FROM contexts
		WHERE environment_id = ? AND context_key = ?`, envID, tenantType+":"+identifier), &rowID)
	if errors.Is(err, sql.ErrNoRows) {
		return tenantNotFound(identifier)
	}
	if err != nil {
		return err
	}
	return platform.JSON(w, status, toTenantV1(rowID, envID, c))
}

func scanTenantRow(row rowScanner, rowID *string) (Context, error) {
	var c Context
	var data string
	err := row.Scan(rowID, &c.Type, &c.ID, &data, &c.CreatedAt, &c.UpdatedAt)
	c.Data = json.RawMessage(data)
	return c, err
}

// handleTenantGet serves GET /v1/tenants/{identifier}.
func handleTenantGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id, err := tenantPath(r)
		if err != nil {
			return err
		}
		return store.writeTenant(r.Context(), w, http.StatusOK, platform.TenantFrom(r.Context()).EnvironmentID, id)
	})
}

// handleTenantList serves GET /v1/tenants: newest first, page from 0 and
// limit 1..100 (default 10), answered {data, page, pageSize, hasMore}.
func handleTenantList(store *Store) http.Handler {
	type page struct {
		Data     []tenantV1 `json:"data"`
		Page     int        `json:"page"`
		PageSize int        `json:"pageSize"`
		HasMore  bool       `json:"hasMore"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer platform.Wrap(&err, "list tenants")
		q := platform.NewQuery(r)
		n, limit := q.Int("page", 0, 0, 10_000), q.Int("limit", 10, 1, 100)
		if err := q.Err(); err != nil {
			return err
		}
		env := platform.TenantFrom(r.Context()).EnvironmentID
		rows, err := store.db.QueryContext(r.Context(), `SELECT id, `+contextColumns+` FROM contexts
			WHERE environment_id = ? AND type = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
			env, tenantType, limit+1, n*limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		out := page{Data: []tenantV1{}, Page: n}
		for rows.Next() {
			var rowID string
			c, err := scanTenantRow(rows, &rowID)
			if err != nil {
				return err
			}
			out.Data = append(out.Data, toTenantV1(rowID, env, c))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(out.Data) > limit {
			out.Data, out.HasMore = out.Data[:limit], true
		}
		out.PageSize = len(out.Data)
		return platform.JSON(w, http.StatusOK, out)
	})
}

// handleTenantUpdate serves PATCH /v1/tenants/{identifier}: a new
// identifier renames the tenant (409 when taken), a name replaces the name,
// data replaces the data; what is not sent stays.
func handleTenantUpdate(store *Store) http.Handler {
	type request struct {
		Identifier string          `json:"identifier" validate:"omitempty,contextpart"`
		Name       *string         `json:"name" validate:"omitempty,max=256"`
		Data       json.RawMessage `json:"data"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id, err := tenantPath(r)
		if err != nil {
			return err
		}
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		env := platform.TenantFrom(r.Context()).EnvironmentID
		to, err := store.updateTenant(r.Context(), env, id, req.Identifier, req.Name, req.Data)
		if err != nil {
			return err
		}
		return store.writeTenant(r.Context(), w, http.StatusOK, env, to)
	})
}

// updateTenant applies a v1 tenant update and returns the identifier the
// tenant has after it.
func (s *Store) updateTenant(ctx context.Context, envID, id, newID string, name *string, rawData json.RawMessage) (to string, err error) {
	defer platform.Wrap(&err, "update tenant %s", id)
	to = id
	if newID != "" {
		to = newID
	}
	defer s.contextsChanged(envID, tenantType+":"+id, tenantType+":"+to)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		c, err := s.context(ctx, tx, envID, tenantType+":"+id)
		if hasStatus(err, http.StatusNotFound) {
			return tenantNotFound(id)
		}
		if err != nil {
			return err
		}
		current := toTenantV1("", envID, c)
		if name == nil {
			name = &current.Name
		}
		if len(rawData) == 0 {
			rawData = current.Data
		}
		data, err := tenantData(name, rawData)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE contexts SET context_key = ?, context_id = ?, data = ?, updated_at = ?
			WHERE environment_id = ? AND context_key = ?`,
			tenantType+":"+to, to, string(data), sqldb.FormatTime(s.now()), envID, tenantType+":"+id)
		if sqldb.IsUniqueViolation(err) {
			return platform.Conflict("Tenant with identifier: %s already exists", to)
		}
		if err != nil {
			return err
		}
		return s.contextsWriting(ctx, tx, envID, tenantType+":"+id, tenantType+":"+to)
	})
	return to, err
}

// handleTenantDelete serves DELETE /v1/tenants/{identifier}, answered 204;
// notifications sent for the tenant keep its key.
func handleTenantDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id, err := tenantPath(r)
		if err != nil {
			return err
		}
		err = store.deleteContext(r.Context(), platform.TenantFrom(r.Context()), tenantType+":"+id)
		if hasStatus(err, http.StatusNotFound) {
			return tenantNotFound(id)
		}
		if err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

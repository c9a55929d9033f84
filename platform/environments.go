package platform

import (
	"net/http"

	"github.com/herald-notify/herald/sqldb"
)

// handleEnvironmentList serves GET /v1/environments: every environment of the
// caller's organization (docs/api.md, "Keys and environments"), so a client
// can find the targetEnvironmentId for workflow sync. Keys are stored
// hashed, so each key shows only its last four characters; revoked keys are
// left out. A Production inbox open without an HMAC adds a Warning header:
// the body's shape is the API's, and has no place for it.
func handleEnvironmentList(db *sqldb.DB, inbox *SubscriberAuth) http.Handler {
	type apiKey struct {
		Key    string `json:"key"`
		UserID string `json:"_userId"`
	}
	type environment struct {
		ID             string   `json:"_id"`
		Name           string   `json:"name"`
		Identifier     string   `json:"identifier"`
		OrganizationID string   `json:"_organizationId"`
		ParentID       *string  `json:"_parentId,omitempty"`
		APIKeys        []apiKey `json:"apiKeys"`
	}
	return Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer Wrap(&err, "list environments")
		ctx := r.Context()
		rows, err := db.QueryContext(ctx, `
			SELECT e.id, e.name, e.identifier, e.organization_id, coalesce(e.parent_id, ''),
			       coalesce(k.hint, ''), coalesce(k.user_id, '')
			FROM environments e LEFT JOIN api_keys k ON k.environment_id = e.id AND k.revoked_at IS NULL
			WHERE e.organization_id = ?
			ORDER BY e.created_at, e.id, k.created_at`, TenantFrom(ctx).OrganizationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		out := []environment{}
		for rows.Next() {
			var e environment
			var parent, hint, userID string
			if err := rows.Scan(&e.ID, &e.Name, &e.Identifier, &e.OrganizationID, &parent, &hint, &userID); err != nil {
				return err
			}
			if n := len(out); n == 0 || out[n-1].ID != e.ID {
				if parent != "" {
					e.ParentID = &parent
				}
				e.APIKeys = []apiKey{}
				out = append(out, e)
			}
			if userID != "" {
				last := &out[len(out)-1]
				last.APIKeys = append(last.APIKeys, apiKey{Key: maskedKey(hint), UserID: userID})
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, e := range out {
			warning, err := inbox.WarnWithoutHMAC(ctx, Environment{ID: e.ID, Name: e.Name})
			if err != nil {
				return err
			}
			if warning != "" {
				w.Header().Add("Warning", `299 herald "`+warning+`"`)
			}
		}
		return JSON(w, http.StatusOK, out)
	})
}

// AddRoutes registers the platform's own API routes; inbox, when not nil,
// says which environments' inboxes to warn of.
func AddRoutes(mux *http.ServeMux, db *sqldb.DB, inbox *SubscriberAuth) {
	mux.Handle("GET /v1/environments", handleEnvironmentList(db, inbox))
	mux.Handle("GET /v1/environments/me", handleEnvironmentMe(db))
	mux.Handle("GET /v1/environments/api-keys", handleEnvironmentKeys(db))
}

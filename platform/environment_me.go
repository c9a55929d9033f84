package platform

import (
	"net/http"

	"github.com/herald-notify/herald/sqldb"
)

// handleEnvironmentMe serves GET /v1/environments/me: the environment the
// caller's key belongs to, in the shape GET /v1/environments lists.
func handleEnvironmentMe(db *sqldb.DB) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		tenant := TenantFrom(r.Context())
		env, err := findOwnEnvironment(r.Context(), db, tenant, tenant.EnvironmentID)
		if err != nil {
			return err
		}
		keys, err := maskedKeys(r.Context(), db, env.ID)
		if err != nil {
			return err
		}
		return JSON(w, http.StatusOK, toEnvironmentResponse(env, keys))
	})
}

// handleEnvironmentKeys serves GET /v1/environments/api-keys: the live keys
// of the caller's environment, each by its last four characters (only
// their hashes are kept).
func handleEnvironmentKeys(db *sqldb.DB) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		keys, err := maskedKeys(r.Context(), db, TenantFrom(r.Context()).EnvironmentID)
		if err != nil {
			return err
		}
		if keys == nil {
			keys = []apiKeyResponse{}
		}
		return JSON(w, http.StatusOK, keys)
	})
}

package platform

import (
	"context"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// callerKey is one API key as the reference's environment routes show it.
// Keys are stored hashed, so the key shows only its last four characters.
type callerKey struct {
	Key    string `json:"key"`
	UserID string `json:"_userId"`
}

// maskedKey is how a stored key is shown: its hint after a fixed run of dots,
// the same length whatever the key.
func maskedKey(hint string) string { return strings.Repeat("•", 28) + hint }

// environmentKeys reads the environment's live keys, oldest first.
func environmentKeys(ctx context.Context, db *sqldb.DB, environmentID string) (keys []callerKey, err error) {
	defer Wrap(&err, "keys of environment %s", environmentID)
	rows, err := db.QueryContext(ctx, `SELECT hint, user_id FROM api_keys
		WHERE environment_id = ? AND revoked_at IS NULL ORDER BY created_at, id`, environmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys = []callerKey{}
	for rows.Next() {
		var hint string
		var k callerKey
		if err := rows.Scan(&hint, &k.UserID); err != nil {
			return nil, err
		}
		k.Key = maskedKey(hint)
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// handleEnvironmentMe serves GET /v1/environments/me: the environment the
// caller's key belongs to, in the shape GET /v1/environments lists.
func handleEnvironmentMe(db *sqldb.DB) http.Handler {
	type environment struct {
		ID             string      `json:"_id"`
		Name           string      `json:"name"`
		Identifier     string      `json:"identifier"`
		OrganizationID string      `json:"_organizationId"`
		ParentID       *string     `json:"_parentId,omitempty"`
		APIKeys        []callerKey `json:"apiKeys"`
	}
	return Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer Wrap(&err, "read the caller's environment")
		ctx := r.Context()
		var e environment
		var parent string
		err = db.QueryRowContext(ctx, `SELECT id, name, identifier, organization_id, coalesce(parent_id, '')
			FROM environments WHERE id = ?`, TenantFrom(ctx).EnvironmentID).
			Scan(&e.ID, &e.Name, &e.Identifier, &e.OrganizationID, &parent)
		if err != nil {
			return err
		}
		if parent != "" {
			e.ParentID = &parent
		}
		if e.APIKeys, err = environmentKeys(ctx, db, e.ID); err != nil {
			return err
		}
		return JSON(w, http.StatusOK, e)
	})
}

// handleEnvironmentKeys serves GET /v1/environments/api-keys: the live keys
// of the caller's environment, each by its last four characters.
func handleEnvironmentKeys(db *sqldb.DB) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		keys, err := environmentKeys(r.Context(), db, TenantFrom(r.Context()).EnvironmentID)
		if err != nil {
			return err
		}
		return JSON(w, http.StatusOK, keys)
	})
}

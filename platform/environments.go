package platform

import (
	"context"
	"database/sql"
	"errors"
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
		out := []environmentResponse{}
		for rows.Next() {
			var e environmentResponse
			var parent, hint, userID string
			if err := rows.Scan(&e.ID, &e.Name, &e.Identifier, &e.OrganizationID, &parent, &hint, &userID); err != nil {
				return err
			}
			if n := len(out); n == 0 || out[n-1].ID != e.ID {
				if parent != "" {
					e.ParentID = &parent
				}
				e.APIKeys = []apiKeyResponse{}
				out = append(out, e)
			}
			if userID != "" {
				last := &out[len(out)-1]
				last.APIKeys = append(last.APIKeys, apiKeyResponse{Key: maskKey(hint), UserID: userID})
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

// EnvironmentIdentifier returns the identifier environment id has now,
// read in tx, "" when it is gone: what an event raised in it is stamped
// with, read at each event since the team may change it.
func EnvironmentIdentifier(ctx context.Context, tx *sql.Tx, id string) (string, error) {
	var identifier string
	err := tx.QueryRowContext(ctx, `SELECT identifier FROM environments WHERE id = ?`, id).Scan(&identifier)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return identifier, err
}

// EnvironmentIDs returns the _id of every environment, in order: what
// work that visits each in turn (the retention sweep) goes through, the
// ones created since the process started included.
func EnvironmentIDs(ctx context.Context, db *sqldb.DB) (ids []string, err error) {
	defer Wrap(&err, "list environment ids")
	rows, err := db.QueryContext(ctx, `SELECT id FROM environments ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

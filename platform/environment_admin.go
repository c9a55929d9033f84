package platform

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// EnvironmentSeeder is a domain that creates what every environment needs
// from its start (the in-app integration, the default group and layout).
type EnvironmentSeeder interface {
	SeedEnvironment(ctx context.Context, env Environment) error
}

// EnvironmentPurger is a domain that keeps records in each environment: it
// says what an environment holds and removes all of it, from its own
// tables only, when the environment is deleted.
type EnvironmentPurger interface {
	// EnvironmentHoldings counts the records the team made in the
	// environment, by what a person calls them ("workflows"); what a
	// new environment is seeded with does not count.
	EnvironmentHoldings(ctx context.Context, environmentID string) (map[string]int64, error)
	PurgeEnvironment(ctx context.Context, environmentID string) error
}

// EnvironmentTagger is the domain that knows the tags an environment's
// workflows carry.
type EnvironmentTagger interface {
	EnvironmentTags(ctx context.Context, environmentID string) ([]string, error)
}

// EnvironmentDomains is what the environment routes need beyond the
// platform's own tables: the domains that seed a new environment and
// those that empty a deleted one, in the order to empty them (the ones
// whose records name others' first).
type EnvironmentDomains struct {
	DB      *sqldb.DB
	Secret  []byte           // seals a copy of each new key, for the inbox's HMAC
	Now     func() time.Time // nil means time.Now
	Seeders []EnvironmentSeeder
	Purgers []EnvironmentPurger
	Tags    EnvironmentTagger
}

func (d EnvironmentDomains) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// AddEnvironmentRoutes registers the routes that create, change and delete
// environments (docs/environments.md). The composition root calls it, as
// only it can hand over the domains.
func AddEnvironmentRoutes(mux *http.ServeMux, d EnvironmentDomains) {
	mux.Handle("POST /v1/environments", handleEnvironmentCreate(d))
	mux.Handle("PUT /v1/environments/{environmentId}", handleEnvironmentUpdate(d))
	mux.Handle("DELETE /v1/environments/{environmentId}", handleEnvironmentDelete(d))
	mux.Handle("GET /v2/environments/{environmentId}/tags", handleEnvironmentTags(d))
}

// handleEnvironmentTags serves GET /v2/environments/{environmentId}/tags:
// the tags of the environment's workflows, each once, as [{name}].
func handleEnvironmentTags(d EnvironmentDomains) http.Handler {
	type tag struct {
		Name string `json:"name"`
	}
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		env, err := findOwnEnvironment(r.Context(), d.DB, TenantFrom(r.Context()), r.PathValue("environmentId"))
		if err != nil {
			return err
		}
		tags, err := d.Tags.EnvironmentTags(r.Context(), env.ID)
		if err != nil {
			return err
		}
		out := make([]tag, len(tags))
		for i, t := range tags {
			out[i] = tag{t}
		}
		return JSON(w, http.StatusOK, out)
	})
}

// envIdentifier is what an identifier may be: what the inbox's clients
// send as their application identifier, plain enough to pass in a URL.
var envIdentifier = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// environmentResponse is an environment as the API answers it.
type environmentResponse struct {
	ID             string           `json:"_id"`
	Name           string           `json:"name"`
	Identifier     string           `json:"identifier"`
	OrganizationID string           `json:"_organizationId"`
	ParentID       *string          `json:"_parentId,omitempty"`
	APIKeys        []apiKeyResponse `json:"apiKeys"`
}

type apiKeyResponse struct {
	Key    string `json:"key"`
	UserID string `json:"_userId"`
}

func toEnvironmentResponse(e Environment, keys []apiKeyResponse) environmentResponse {
	out := environmentResponse{ID: e.ID, Name: e.Name, Identifier: e.Identifier, OrganizationID: e.OrganizationID, APIKeys: keys}
	if e.ParentID != "" {
		out.ParentID = &e.ParentID
	}
	if out.APIKeys == nil {
		out.APIKeys = []apiKeyResponse{}
	}
	return out
}

// handleEnvironmentCreate serves POST /v1/environments: a new environment
// of the caller's organization with its own key, shown in full this once
// (only its hash is kept), then seeded by every domain.
func handleEnvironmentCreate(d EnvironmentDomains) http.Handler {
	type request struct {
		Name     string `json:"name" validate:"required,max=100"`
		Color    string `json:"color" validate:"required,max=32"`
		ParentID string `json:"parentId" validate:"omitempty,objectid"`
	}
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := Decode[request](r)
		if err != nil {
			return err
		}
		ctx := r.Context()
		tenant := TenantFrom(ctx)
		name := strings.TrimSpace(req.Name)
		if name == "" {
			return InvalidField("name", req.Name, "name must not be empty")
		}
		env := Environment{ID: sqldb.NewID(), OrganizationID: tenant.OrganizationID, Name: name,
			Identifier: randomHex(6), ParentID: req.ParentID}
		key := randomHex(16)
		err = d.DB.Tx(ctx, func(tx *sql.Tx) error {
			if err := checkEnvironmentName(ctx, tx, env.OrganizationID, "", name); err != nil {
				return err
			}
			if err := checkParent(ctx, tx, env.OrganizationID, "", env.ParentID); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE organization_id = ? ORDER BY created_at LIMIT 1`,
				env.OrganizationID).Scan(&env.SystemUserID); err != nil {
				return err
			}
			ts := sqldb.FormatTime(d.now())
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO environments (id, organization_id, name, identifier, parent_id, color, created_at)
				VALUES (?, ?, ?, ?, NULLIF(?, ''), ?, ?)`, env.ID, env.OrganizationID, name, env.Identifier, env.ParentID, req.Color, ts); err != nil {
				return err
			}
			_, err := insertAPIKey(ctx, tx, env.ID, env.SystemUserID, key, KeyCreated, ts, d.Secret)
			return err
		})
		if err != nil {
			return sameEnvironment(err)
		}
		// Seeding runs after the commit, each domain in its own
		// transactions; it is idempotent, and every start seeds every
		// environment again, so one that failed here is finished then.
		for _, s := range d.Seeders {
			if err := s.SeedEnvironment(ctx, env); err != nil {
				return err
			}
		}
		return JSON(w, http.StatusCreated, toEnvironmentResponse(env, []apiKeyResponse{{Key: key, UserID: env.SystemUserID}}))
	})
}

// handleEnvironmentUpdate serves PUT /v1/environments/{environmentId}:
// changes the fields given. Development and Production keep their names,
// which Herald finds them by at every start.
func handleEnvironmentUpdate(d EnvironmentDomains) http.Handler {
	type request struct {
		Name       *string `json:"name" validate:"omitempty,max=100"`
		Identifier *string `json:"identifier"`
		ParentID   *string `json:"parentId" validate:"omitempty,objectid"`
		Color      *string `json:"color" validate:"omitempty,max=32"`
		DNS        *struct {
			InboundParseDomain string `json:"inboundParseDomain"`
		} `json:"dns"`
		Bridge *struct {
			URL string `json:"url"`
		} `json:"bridge"`
	}
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := Decode[request](r)
		if err != nil {
			return err
		}
		// Herald parses no inbound email and runs no bridge: a value for
		// either would be kept and never used.
		if req.DNS != nil && req.DNS.InboundParseDomain != "" {
			return InvalidField("dns.inboundParseDomain", req.DNS.InboundParseDomain, "Herald does not parse inbound email")
		}
		if req.Bridge != nil && req.Bridge.URL != "" {
			return InvalidField("bridge.url", req.Bridge.URL, "Herald does not run workflows through a bridge")
		}
		ctx := r.Context()
		tenant := TenantFrom(ctx)
		env, err := findOwnEnvironment(ctx, d.DB, tenant, r.PathValue("environmentId"))
		if err != nil {
			return err
		}
		err = d.DB.Tx(ctx, func(tx *sql.Tx) error {
			return updateEnvironment(ctx, tx, &env, req.Name, req.Identifier, req.ParentID, req.Color)
		})
		if err != nil {
			return sameEnvironment(err)
		}
		keys, err := maskedKeys(ctx, d.DB, env.ID)
		if err != nil {
			return err
		}
		return JSON(w, http.StatusOK, toEnvironmentResponse(env, keys))
	})
}

// updateEnvironment writes the fields that are not nil to env and its row.
func updateEnvironment(ctx context.Context, tx *sql.Tx, env *Environment, name, identifier, parentID, color *string) error {
	if name != nil {
		n := strings.TrimSpace(*name)
		switch {
		case n == "":
			return InvalidField("name", *name, "name must not be empty")
		case isBootstrapped(*env) && n != env.Name:
			return InvalidField("name", *name, "%s keeps its name: Herald finds it by name at every start", env.Name)
		}
		if err := checkEnvironmentName(ctx, tx, env.OrganizationID, env.ID, n); err != nil {
			return err
		}
		env.Name = n
	}
	if identifier != nil {
		if !envIdentifier.MatchString(*identifier) {
			return InvalidField("identifier", *identifier, "identifier must be 1 to 64 letters, digits, _ or -")
		}
		var other string
		err := tx.QueryRowContext(ctx, `SELECT id FROM environments WHERE identifier = ? AND id <> ?`, *identifier, env.ID).Scan(&other)
		if err == nil {
			return InvalidField("identifier", *identifier, "Another environment has the identifier %s", *identifier)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		env.Identifier = *identifier
	}
	if parentID != nil {
		if err := checkParent(ctx, tx, env.OrganizationID, env.ID, *parentID); err != nil {
			return err
		}
		env.ParentID = *parentID
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE environments SET name = ?, identifier = ?, parent_id = NULLIF(?, ''), color = coalesce(?, color)
		WHERE id = ?`, env.Name, env.Identifier, env.ParentID, color, env.ID)
	return err
}

// sameEnvironment turns the conflict of two requests that passed the
// checks together into the answer the second would have had alone.
func sameEnvironment(err error) error {
	if sqldb.IsUniqueViolation(err) {
		return Errorf(http.StatusUnprocessableEntity, "Another environment has that name or identifier")
	}
	return err
}

// checkEnvironmentName refuses a name another environment of the
// organization has, whatever its case: the inbox tells Production apart by
// its name, so "production" must not be a second one. The refusal is a
// 422, not a 409: the reference SDK retries a 409 for up to an hour,
// taking it for a request still running.
func checkEnvironmentName(ctx context.Context, tx *sql.Tx, orgID, selfID, name string) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT name FROM environments WHERE organization_id = ? AND lower(name) = lower(?) AND id <> ?`,
		orgID, name, selfID).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return InvalidField("name", name, "An environment named %s already exists", other)
}

// checkParent refuses a parent that is not another environment of the
// organization; "" (none) is always allowed.
func checkParent(ctx context.Context, tx *sql.Tx, orgID, selfID, parentID string) error {
	if parentID == "" {
		return nil
	}
	if parentID == selfID {
		return InvalidField("parentId", parentID, "An environment cannot be its own parent")
	}
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM environments WHERE id = ? AND organization_id = ?`, parentID, orgID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return NotFound("Environment %s not found", parentID)
	}
	return err
}

// findOwnEnvironment returns the environment id of the tenant's
// organization; another organization's is as unknown as one that never was.
func findOwnEnvironment(ctx context.Context, db *sqldb.DB, tenant Tenant, id string) (Environment, error) {
	env, err := FindEnvironment(ctx, db, tenant.OrganizationID, id)
	if errors.Is(err, ErrNotFound) {
		return env, NotFound("Environment %s not found", id)
	}
	return env, err
}

// isBootstrapped says whether env is one of the two every start creates.
func isBootstrapped(env Environment) bool {
	return env.Name == Development || env.Name == Production
}

// maskedKeys lists the environment's working keys as the API shows stored
// ones: only their last four characters.
func maskedKeys(ctx context.Context, db *sqldb.DB, envID string) (keys []apiKeyResponse, err error) {
	rows, err := db.QueryContext(ctx, `
		SELECT hint, user_id FROM api_keys WHERE environment_id = ? AND revoked_at IS NULL ORDER BY created_at`, envID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var hint, userID string
		if err := rows.Scan(&hint, &userID); err != nil {
			return nil, err
		}
		keys = append(keys, apiKeyResponse{Key: maskKey(hint), UserID: userID})
	}
	return keys, rows.Err()
}

func maskKey(hint string) string {
	return fmt.Sprintf("%s%s", strings.Repeat("•", 28), hint)
}

package platform

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// ConfirmParam is the query parameter that confirms deleting an
// environment that holds records, and every one of them with it.
const ConfirmParam = "confirm"

// handleEnvironmentDelete serves DELETE /v1/environments/{environmentId}.
// Development and Production are refused: every start would create them
// again, empty, under new keys. An environment that holds records is
// deleted only with ?confirm=true; without it the answer names what it
// holds. The keys go first, so no request adds to what is being removed
// (other processes drop them within the keyring's poll), then each domain
// empties its own tables, then the environment goes. A failure midway
// leaves the environment listed, keyless, for the same call to finish.
// Both refusals are 422s: the reference SDK retries a 409 for up to an
// hour, and neither refusal changes by waiting.
func handleEnvironmentDelete(d EnvironmentDomains) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := NewQuery(r)
		confirmed := q.Bool(ConfirmParam)
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		env, err := findOwnEnvironment(ctx, d.DB, TenantFrom(ctx), r.PathValue("environmentId"))
		if err != nil {
			return err
		}
		if isBootstrapped(env) {
			return InvalidField("environmentId", env.ID, "%s cannot be deleted: Herald creates it at every start", env.Name)
		}
		if confirmed == nil || !*confirmed {
			held, err := holdings(ctx, d.Purgers, env.ID)
			if err != nil {
				return err
			}
			if held != "" {
				return InvalidField(ConfirmParam, q.String(ConfirmParam), "%s holds %s; delete it with ?%s=true to remove them with it",
					env.Name, held, ConfirmParam)
			}
		}
		if err := revokeEnvironmentKeys(ctx, d.DB, env.ID, sqldb.FormatTime(d.now())); err != nil {
			return err
		}
		for _, p := range d.Purgers {
			if err := p.PurgeEnvironment(ctx, env.ID); err != nil {
				return err
			}
		}
		if err := removeEnvironment(ctx, d.DB, env.ID); err != nil {
			return err
		}
		return JSON(w, http.StatusOK, map[string]any{"acknowledged": true, "status": "deleted"})
	})
}

// holdings says what the environment holds, as "3 workflows, 1
// subscriber", "" when nothing.
func holdings(ctx context.Context, purgers []EnvironmentPurger, envID string) (string, error) {
	counts := map[string]int64{}
	for _, p := range purgers {
		held, err := p.EnvironmentHoldings(ctx, envID)
		if err != nil {
			return "", err
		}
		for what, n := range held {
			counts[what] += n
		}
	}
	var parts []string
	for _, what := range slices.Sorted(maps.Keys(counts)) {
		if n := counts[what]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	return strings.Join(parts, ", "), nil
}

// revokeEnvironmentKeys revokes every working key of the environment and
// tells running servers so (bumpRevocations); this process's refuse them
// from their next request on.
func revokeEnvironmentKeys(ctx context.Context, db *sqldb.DB, envID, ts string) error {
	return db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE environment_id = ? AND revoked_at IS NULL`, ts, envID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		db.AfterCommit(tx, func() { forgetKeys(db) })
		return bumpRevocations(ctx, tx)
	})
}

// removeEnvironment deletes the environment and the platform's records of
// it; environments it was the parent of are left without one.
func removeEnvironment(ctx context.Context, db *sqldb.DB, envID string) error {
	return db.Tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM idempotency_keys WHERE environment_id = ?`,
			`DELETE FROM api_keys WHERE environment_id = ?`,
			`UPDATE environments SET parent_id = NULL WHERE parent_id = ?`,
			`DELETE FROM environments WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, envID); err != nil {
				return err
			}
		}
		return nil
	})
}

package platform

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/herald-notify/herald/sqldb"
)

// Organizations lets a row leave its organization out: it is its
// environment's (docs/storage.md, "Values left out"). A store holding nil
// stores every row's own. An environment never moves to another
// organization, so each answer is kept once read.
type Organizations struct {
	db    *sqldb.DB
	known sync.Map // environment id → organization id
}

// NewOrganizations returns the organizations of db's environments.
func NewOrganizations(db *sqldb.DB) *Organizations {
	return &Organizations{db: db}
}

// Stored is what a row stores for its organization org: nothing, unless o
// is nil.
func (o *Organizations) Stored(org string) string {
	if o == nil {
		return org
	}
	return ""
}

// Of is the organization of a row of environment env that stored org:
// org, or where it left it out, env's ("" once env is deleted, as the
// row is with it).
func (o *Organizations) Of(ctx context.Context, env, org string) (string, error) {
	if org != "" || o == nil {
		return org, nil
	}
	if known, ok := o.known.Load(env); ok {
		return known.(string), nil
	}
	err := o.db.QueryRowContext(ctx, `SELECT organization_id FROM environments WHERE id = ?`, env).Scan(&org)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the organization of environment %s: %w", env, err)
	}
	o.known.Store(env, org)
	return org, nil
}

package platform

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// Environment is one environment of the organization.
type Environment struct {
	ID             string
	OrganizationID string
	Name           string
	Identifier     string
	ParentID       string // "" for Development; Production's parent is Development
	SystemUserID   string // the organization's system user, creator of seeded records
}

// Tenant returns the tenant that acts in this environment as its system user.
func (e Environment) Tenant() Tenant {
	return Tenant{OrganizationID: e.OrganizationID, EnvironmentID: e.ID, UserID: e.SystemUserID}
}

// BootstrapConfig names keys the operator wants to know in advance
// (HERALD_API_KEY, HERALD_PROD_API_KEY); either may be empty.
type BootstrapConfig struct {
	DevelopmentKey string
	ProductionKey  string
	Now            func() time.Time
	// Secret seals a copy of each key Bootstrap stores (see SealedAPIKeys),
	// for the inbox's HMAC; without one only the digest is kept.
	Secret []byte
}

// The two environments every installation has (docs/api.md, "Running it").
const (
	Development = "Development"
	Production  = "Production"
)

// Bootstrap makes sure the organization, its system user, both environments
// and an API key for each exist, creating what is missing, and returns the
// environments. A key it generates is written to out once, at creation; only
// its hash is kept. Running it again changes nothing unless a configured key
// is new, which is then added beside the existing ones.
func Bootstrap(ctx context.Context, db *sqldb.DB, cfg BootstrapConfig, out io.Writer) (envs []Environment, err error) {
	defer Wrap(&err, "bootstrap")
	if err := CheckConfiguredKeys(cfg.DevelopmentKey, cfg.ProductionKey); err != nil {
		return nil, err
	}
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	var created []string
	err = db.RetryTx(ctx, func(tx *sql.Tx) error {
		created = nil
		// Instances started together on an empty PostgreSQL database each
		// find nothing and would each create an organization: they take
		// turns, and each after the first finds what the first made.
		if err := db.LockKey(ctx, tx, "herald/bootstrap"); err != nil {
			return err
		}
		ts := sqldb.FormatTime(now())
		orgID, userID, err := ensureOrganization(ctx, tx, ts)
		if err != nil {
			return err
		}
		dev, err := ensureEnvironment(ctx, tx, orgID, Development, "", ts)
		if err != nil {
			return err
		}
		prod, err := ensureEnvironment(ctx, tx, orgID, Production, dev.ID, ts)
		if err != nil {
			return err
		}
		dev.SystemUserID, prod.SystemUserID = userID, userID
		envs = []Environment{dev, prod}
		for i, configured := range []string{cfg.DevelopmentKey, cfg.ProductionKey} {
			setting := []string{"HERALD_API_KEY", "HERALD_PROD_API_KEY"}[i]
			key, replaced, err := ensureAPIKey(ctx, tx, envs[i], userID, setting, configured, ts, cfg.Secret)
			if err != nil {
				return err
			}
			if key != "" {
				created = append(created, fmt.Sprintf("Herald created the %s API key (it is shown only this once): %s", envs[i].Name, key))
			}
			if replaced != "" {
				created = append(created, replaced)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, line := range created {
		fmt.Fprintln(out, line)
	}
	return envs, nil
}

func ensureOrganization(ctx context.Context, tx *sql.Tx, ts string) (orgID, userID string, err error) {
	err = tx.QueryRowContext(ctx, `
		SELECT o.id, u.id FROM organizations o JOIN users u ON u.organization_id = o.id
		ORDER BY o.created_at, u.created_at LIMIT 1`).Scan(&orgID, &userID)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return orgID, userID, err
	}
	orgID, userID = sqldb.NewID(), sqldb.NewID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO organizations (id, name, created_at) VALUES (?, 'Herald', ?)`, orgID, ts); err != nil {
		return "", "", err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO users (id, organization_id, first_name, last_name, email, created_at)
		VALUES (?, ?, 'Herald', 'System', 'system@herald.invalid', ?)`, userID, orgID, ts)
	return orgID, userID, err
}

func ensureEnvironment(ctx context.Context, tx *sql.Tx, orgID, name, parentID, ts string) (Environment, error) {
	env := Environment{OrganizationID: orgID, Name: name, ParentID: parentID}
	var parent sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT id, identifier, parent_id FROM environments WHERE organization_id = ? AND name = ?`,
		orgID, name).Scan(&env.ID, &env.Identifier, &parent)
	if err == nil {
		env.ParentID = parent.String
		return env, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return env, err
	}
	env.ID, env.Identifier = sqldb.NewID(), randomHex(6)
	_, err = tx.ExecContext(ctx, `
		INSERT INTO environments (id, organization_id, name, identifier, parent_id, created_at)
		VALUES (?, ?, ?, ?, NULLIF(?, ''), ?)`, env.ID, orgID, name, env.Identifier, parentID, ts)
	return env, err
}

// ensureAPIKey adds the configured key when it is new, and generates one
// when the environment has no working key. A configured key replaces the
// one configured before it, which is revoked, so changing HERALD_API_KEY
// rotates the key instead of leaving the old one working. It returns a
// generated key, to be shown once, and what it revoked. With a secret, a
// key is also kept sealed (for the inbox's HMAC); a configured key stored
// before keys were sealed gets its sealed copy now.
func ensureAPIKey(ctx context.Context, tx *sql.Tx, env Environment, userID, setting, configured, ts string, secret []byte) (generated, replaced string, err error) {
	if configured != "" {
		var envName, revoked string
		err := tx.QueryRowContext(ctx, `
			SELECT e.name, coalesce(k.revoked_at, '') FROM api_keys k JOIN environments e ON e.id = k.environment_id
			WHERE k.hash = ?`, HashAPIKey(configured)).Scan(&envName, &revoked)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return "", "", err
		case envName != env.Name:
			return "", "", fmt.Errorf("the key in %s is already the %s environment's", setting, envName)
		case revoked != "":
			return "", "", fmt.Errorf("the key in %s was revoked at %s; give a new one", setting, revoked)
		default: // configured at an earlier start
			_, err := tx.ExecContext(ctx, `UPDATE api_keys SET sealed = ? WHERE hash = ? AND sealed IS NULL`,
				SealAPIKey(secret, configured), HashAPIKey(configured))
			return "", "", err
		}
		var hints []string
		rows, err := tx.QueryContext(ctx, `
			UPDATE api_keys SET revoked_at = ? WHERE environment_id = ? AND source = ? AND revoked_at IS NULL RETURNING hint`,
			ts, env.ID, KeyConfigured)
		if err != nil {
			return "", "", err
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return "", "", err
			}
			hints = append(hints, "…"+h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", "", err
		}
		if len(hints) > 0 {
			if err := bumpRevocations(ctx, tx); err != nil {
				return "", "", err
			}
			replaced = fmt.Sprintf("The %s key in %s replaces the one configured before (%s), which is revoked", env.Name, setting, strings.Join(hints, ", "))
		}
		_, err = insertAPIKey(ctx, tx, env.ID, userID, configured, KeyConfigured, ts, secret)
		return "", replaced, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE environment_id = ? AND revoked_at IS NULL`, env.ID).Scan(&n); err != nil {
		return "", "", err
	}
	if n > 0 {
		return "", "", nil
	}
	key := randomHex(16)
	_, err = insertAPIKey(ctx, tx, env.ID, userID, key, KeyGenerated, ts, secret)
	return key, "", err
}

func keyHint(key string) string {
	if len(key) <= 4 {
		return ""
	}
	return key[len(key)-4:]
}

// LoadSecret returns the secret that encrypts integration credentials: the
// configured one (at least 32 bytes), or one generated on first boot and kept
// in the database, with a warning, since a secret stored beside the data it
// protects guards only against a leak of that data without the database.
func LoadSecret(ctx context.Context, db *sqldb.DB, configured string, warn func(msg string)) ([]byte, error) {
	if configured != "" {
		if len(configured) < 32 {
			return nil, errors.New("HERALD_SECRET must be at least 32 bytes")
		}
		return []byte(configured), nil
	}
	b := make([]byte, 32)
	rand.Read(b)
	generated := hex.EncodeToString(b)
	_, err := db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ('secret', ?) ON CONFLICT (name) DO NOTHING`, generated)
	if err != nil {
		return nil, fmt.Errorf("store generated secret: %w", err)
	}
	var secret string
	if err := db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = 'secret'`).Scan(&secret); err != nil {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	if warn != nil {
		warn("HERALD_SECRET is not set: credentials are encrypted with a secret generated on first boot and stored in the database; set HERALD_SECRET for real protection")
	}
	return []byte(secret), nil
}

// FindEnvironment returns the environment id of organization organizationID,
// or ErrNotFound when it does not exist or belongs to another organization.
func FindEnvironment(ctx context.Context, db *sqldb.DB, organizationID, id string) (Environment, error) {
	env := Environment{ID: id, OrganizationID: organizationID}
	var parent sql.NullString
	err := db.QueryRowContext(ctx, `
		SELECT e.name, e.identifier, e.parent_id, (SELECT u.id FROM users u WHERE u.organization_id = e.organization_id ORDER BY u.created_at LIMIT 1)
		FROM environments e WHERE e.id = ? AND e.organization_id = ?`, id, organizationID).
		Scan(&env.Name, &env.Identifier, &parent, &env.SystemUserID)
	if errors.Is(err, sql.ErrNoRows) {
		return Environment{}, ErrNotFound
	}
	if err != nil {
		return Environment{}, fmt.Errorf("find environment %s: %w", id, err)
	}
	env.ParentID = parent.String
	return env, nil
}

// Environments returns the organization's environments, oldest first
// (Development before Production), each with the organization's system
// user.
func Environments(ctx context.Context, db *sqldb.DB, organizationID string) (envs []Environment, err error) {
	defer Wrap(&err, "list environments")
	rows, err := db.QueryContext(ctx, `
		SELECT e.id, e.name, e.identifier, coalesce(e.parent_id, ''),
		       (SELECT u.id FROM users u WHERE u.organization_id = e.organization_id ORDER BY u.created_at LIMIT 1)
		FROM environments e WHERE e.organization_id = ? ORDER BY e.created_at, e.id`, organizationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		env := Environment{OrganizationID: organizationID}
		if err := rows.Scan(&env.ID, &env.Name, &env.Identifier, &env.ParentID, &env.SystemUserID); err != nil {
			return nil, err
		}
		envs = append(envs, env)
	}
	return envs, rows.Err()
}

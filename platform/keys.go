package platform

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// MinKeyLength is the shortest API key Herald accepts from its settings: 32
// characters leave a guesser nothing to gain even without the rate limit.
// Generated keys are 32 hex characters.
const MinKeyLength = 32

// How an API key came to be (api_keys.source).
const (
	KeyGenerated  = "generated"  // at first start, printed once
	KeyConfigured = "configured" // by HERALD_API_KEY or HERALD_PROD_API_KEY
	KeyCreated    = "created"    // by `herald keys create`
)

// APIKey is one stored key as `herald keys list` shows it: never the key,
// only its last four characters.
type APIKey struct {
	ID          string
	Environment string // the environment's name
	LastFour    string
	Source      string
	CreatedAt   string
	RevokedAt   string // "" while the key works
	LastUsedAt  string // "" until it authenticates a request; written at most once a minute
}

// ListAPIKeys returns every key, working and revoked, oldest first.
func ListAPIKeys(ctx context.Context, db *sqldb.DB) (keys []APIKey, err error) {
	defer Wrap(&err, "list api keys")
	rows, err := db.QueryContext(ctx, `
		SELECT k.id, e.name, k.hint, k.source, k.created_at, coalesce(k.revoked_at, ''), coalesce(k.last_used_at, '')
		FROM api_keys k JOIN environments e ON e.id = k.environment_id
		ORDER BY k.created_at, k.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k APIKey
		if err := rows.Scan(&k.ID, &k.Environment, &k.LastFour, &k.Source, &k.CreatedAt, &k.RevokedAt, &k.LastUsedAt); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// CreateAPIKey adds a generated key to the environment named envName and
// returns it; only its hash (and, with a secret, a sealed copy for the
// inbox's HMAC) is stored, so this is the one time it is seen.
func CreateAPIKey(ctx context.Context, db *sqldb.DB, envName string, secret []byte, now time.Time) (key string, k APIKey, err error) {
	defer Wrap(&err, "create api key")
	key = randomHex(16)
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		var envID, userID string
		err := tx.QueryRowContext(ctx, `
			SELECT e.id, (SELECT u.id FROM users u WHERE u.organization_id = e.organization_id ORDER BY u.created_at LIMIT 1)
			FROM environments e WHERE e.name = ?`, envName).Scan(&envID, &userID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no environment named %q (herald serve creates %s and %s at its first start; GET /v1/environments lists every one)", envName, Development, Production)
		}
		if err != nil {
			return err
		}
		k, err = insertAPIKey(ctx, tx, envID, userID, key, KeyCreated, sqldb.FormatTime(now), secret)
		return err
	})
	k.Environment = envName
	return key, k, err
}

// insertAPIKey stores key's hash in the environment, and a copy sealed
// with secret when there is one (SealAPIKey).
func insertAPIKey(ctx context.Context, tx *sql.Tx, envID, userID, key, source, ts string, secret []byte) (APIKey, error) {
	k := APIKey{ID: sqldb.NewID(), LastFour: keyHint(key), Source: source, CreatedAt: ts}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO api_keys (id, hash, environment_id, user_id, hint, source, created_at, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, HashAPIKey(key), envID, userID, k.LastFour, source, ts, SealAPIKey(secret, key))
	return k, err
}

// RevokeAPIKey revokes the working key whose id or last four characters
// are ref. A last four that more than one working key shares is refused
// with their ids, so the caller can name one. Running servers refuse the
// key from their next request on (see keyring).
func RevokeAPIKey(ctx context.Context, db *sqldb.DB, ref string, now time.Time) (k APIKey, err error) {
	defer Wrap(&err, "revoke api key %s", ref)
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return k, errors.New("name the key by its id or its last four characters")
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `
			SELECT k.id, e.name, k.hint, k.source, k.created_at
			FROM api_keys k JOIN environments e ON e.id = k.environment_id
			WHERE k.revoked_at IS NULL AND (k.id = ? OR k.hint = ?)
			ORDER BY k.created_at`, strings.ToLower(ref), ref)
		if err != nil {
			return err
		}
		var found []APIKey
		for rows.Next() {
			var k APIKey
			if err := rows.Scan(&k.ID, &k.Environment, &k.LastFour, &k.Source, &k.CreatedAt); err != nil {
				rows.Close()
				return err
			}
			found = append(found, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		switch len(found) {
		case 0:
			return fmt.Errorf("no working key has the id or last four %q (herald keys list shows them)", ref)
		case 1:
		default:
			ids := make([]string, len(found))
			for i, f := range found {
				ids[i] = f.ID
			}
			return fmt.Errorf("%d working keys end in %q; name one by its id: %s", len(found), ref, strings.Join(ids, ", "))
		}
		k = found[0]
		k.RevokedAt = sqldb.FormatTime(now)
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, k.RevokedAt, k.ID); err != nil {
			return err
		}
		return bumpRevocations(ctx, tx)
	})
	return k, err
}

// bumpRevocations tells running servers that a key was revoked: every
// process polls the count (keyring), so it reaches those sharing a
// PostgreSQL database as well. The stored value is named settings.value:
// PostgreSQL finds a bare "value" ambiguous beside excluded.value.
func bumpRevocations(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO settings (name, value) VALUES ('api_keys_revoked', '1')
		ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(settings.value AS INTEGER) + 1 AS TEXT)`)
	return err
}

// CheckConfiguredKeys refuses keys given in the settings that are too short
// or the same for both environments, before anything is stored.
func CheckConfiguredKeys(dev, prod string) error {
	for _, k := range []struct{ setting, key string }{{"HERALD_API_KEY", dev}, {"HERALD_PROD_API_KEY", prod}} {
		if k.key != "" && len(k.key) < MinKeyLength {
			return fmt.Errorf("%s (-%s) must be at least %d characters, it has %d; `openssl rand -hex 16` makes one",
				k.setting, flagOf(k.setting), MinKeyLength, len(k.key))
		}
	}
	if dev != "" && dev == prod {
		return errors.New("HERALD_API_KEY and HERALD_PROD_API_KEY (-api-key, -prod-api-key) must differ: one key cannot belong to both environments")
	}
	return nil
}

func flagOf(setting string) string {
	if setting == "HERALD_PROD_API_KEY" {
		return "prod-api-key"
	}
	return "api-key"
}

// randomHex is n random bytes in hex, for keys and identifiers no one may
// guess.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// sealer encrypts data Herald keeps at rest that may carry secrets, such as
// stored idempotent responses, which can hold an integration's decrypted
// credentials.
type sealer struct{ aead cipher.AEAD }

// newSealer derives an AES-256-GCM key for one purpose from the secret, so
// each purpose's ciphertext is useless under another's key.
func newSealer(secret []byte, purpose string) *sealer {
	if len(secret) == 0 {
		// Only a caller that forgot the secret gets here; a per-process key
		// keeps data sealed, at the cost of not reading it after a restart.
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	key := sha256.Sum256(append([]byte(purpose+"\x00"), secret...))
	block, _ := aes.NewCipher(key[:]) // a 32-byte key cannot fail
	aead, _ := cipher.NewGCM(block)
	return &sealer{aead: aead}
}

// seal encrypts plain, binding it to context (a row's key) so a sealed value
// copied to another row does not open.
func (s *sealer) seal(plain, context []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, context)
}

func (s *sealer) open(sealed, context []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], context)
}

package platform

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Tenant is who a request acts for: the environment its API key belongs to,
// that environment's organization, and the user who owns the key.
type Tenant struct {
	OrganizationID string
	EnvironmentID  string
	UserID         string
}

type tenantKey struct{}

// WithTenant returns ctx carrying t. Only the auth middleware and tests call it.
func WithTenant(ctx context.Context, t Tenant) context.Context {
	return context.WithValue(ctx, tenantKey{}, t)
}

// TenantFrom returns the tenant the auth middleware put in ctx. Every route
// except health checks runs behind that middleware, so handlers can rely on it.
func TenantFrom(ctx context.Context) Tenant {
	t, _ := ctx.Value(tenantKey{}).(Tenant)
	return t
}

// HashAPIKey returns the SHA-256 hex digest under which a key is stored.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// keyring finds the tenant of an API key. Keys are immutable once created, so
// a found key is cached for the life of the process: auth costs one map read
// on the hot path instead of a query.
type keyring struct {
	db    *DB
	cache sync.Map // key hash → Tenant
}

func (k *keyring) lookup(ctx context.Context, key string) (Tenant, error) {
	hash := HashAPIKey(key)
	if t, ok := k.cache.Load(hash); ok {
		return t.(Tenant), nil
	}
	var t Tenant
	var stored string
	err := k.db.R.QueryRowContext(ctx, `
		SELECT k.hash, e.organization_id, e.id, k.user_id
		FROM api_keys k JOIN environments e ON e.id = k.environment_id
		WHERE k.hash = ?`, hash).Scan(&stored, &t.OrganizationID, &t.EnvironmentID, &t.UserID)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("look up api key: %w", err)
	}
	// The lookup was by hash already; comparing the digests in constant time
	// keeps timing from telling anything about near misses (contract §2).
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 {
		return Tenant{}, ErrNotFound
	}
	k.cache.Store(hash, t)
	return t, nil
}

// requireAPIKey admits requests carrying "Authorization: ApiKey <key>" for a
// known key and puts its Tenant in the context. The 401 messages are the
// reference platform's, so clients that match on them keep working.
func requireAPIKey(keys *keyring, next http.Handler) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		header := r.Header.Get("Authorization")
		if header == "" {
			return Unauthorized("Missing authorization header")
		}
		scheme, key, _ := strings.Cut(strings.TrimSpace(header), " ")
		if scheme != "ApiKey" {
			return Unauthorized(fmt.Sprintf("Invalid authentication scheme: %q", scheme))
		}
		key = strings.TrimSpace(key)
		if key == "" {
			return Unauthorized("Unauthorized")
		}
		t, err := keys.lookup(r.Context(), key)
		if errors.Is(err, ErrNotFound) {
			return Unauthorized("API Key not found")
		}
		if err != nil {
			return err
		}
		noteEnvironment(r.Context(), t.EnvironmentID)
		next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), t)))
		return nil
	})
}

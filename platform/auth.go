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
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/sqldb"
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

// keyring finds the tenant of an API key. A found key is cached, so auth
// costs one map read on the hot path instead of a query. A key can be
// revoked, by this process or by `herald keys revoke` in another one, so
// the keyring rereads the count of revocations (one point read) at most
// every revocationPoll and drops its cache when it has moved: a revoked
// key stops working within that interval on every server.
type keyring struct {
	db    *sqldb.DB
	cache atomic.Pointer[sync.Map] // key hash → Tenant
	poll  time.Duration

	revocations atomic.Int64 // the count last read
	checked     atomic.Int64 // when, in UnixNano; another check is due after poll

	used sync.Map // key hash → when this process last wrote its last_used_at, in UnixNano
}

// usedEvery is how often a process writes a key's last use: the console
// shows it to the minute, and a write per request would cost every request
// a statement on the writer.
const usedEvery = time.Minute

// touch records that the key whose hash is hash authenticated a request
// now, at most once every usedEvery per process. A failed write is tried
// again at the next request: the time is a convenience, never a reason to
// refuse one.
func (k *keyring) touch(ctx context.Context, hash string) {
	now := time.Now()
	if last, ok := k.used.Load(hash); ok && now.Sub(time.Unix(0, last.(int64))) < usedEvery {
		return
	}
	k.used.Store(hash, now.UnixNano())
	if _, err := k.db.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE hash = ?`, sqldb.FormatTime(now), hash); err != nil {
		k.used.Delete(hash)
	}
}

// revocationPoll is how stale the keyring's knowledge of revocations may
// be. Reading the count costs about one indexed query (docs/security.md
// has the figures); once per interval, by one request, it is free.
const revocationPoll = 100 * time.Millisecond

func newKeyring(db *sqldb.DB, poll time.Duration) *keyring {
	k := &keyring{db: db, poll: poll}
	k.cache.Store(&sync.Map{})
	k.revocations.Store(-1) // unknown: the first check clears nothing that matters
	rings, _ := localKeyrings.LoadOrStore(db, &keyringSet{})
	rings.(*keyringSet).add(k)
	return k
}

// localKeyrings are this process's keyrings by database, so that keys
// revoked here (a deleted environment's) stop working from the next
// request on rather than at the next poll; other processes still learn of
// it by polling.
var localKeyrings sync.Map // *sqldb.DB → *keyringSet

type keyringSet struct {
	mu    sync.Mutex
	rings []*keyring
}

func (s *keyringSet) add(k *keyring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rings = append(s.rings, k)
}

// forgetKeys empties the cache of every keyring of db in this process.
func forgetKeys(db *sqldb.DB) {
	rings, ok := localKeyrings.Load(db)
	if !ok {
		return
	}
	s := rings.(*keyringSet)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.rings {
		k.cache.Store(&sync.Map{})
	}
}

// fresh drops the cache when a key has been revoked since it was filled.
// One request at a time does the check; the others go on with the cache,
// which is at most one poll interval old.
func (k *keyring) fresh(ctx context.Context) {
	now := time.Now().UnixNano()
	last := k.checked.Load()
	if now-last < int64(k.poll) || !k.checked.CompareAndSwap(last, now) {
		return
	}
	var n int64
	err := k.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM settings WHERE name = 'api_keys_revoked'`).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		// The next request tries again; meanwhile the cache stands, as it
		// did before keys could be revoked.
		k.checked.Store(last)
		return
	}
	if k.revocations.Swap(n) != n {
		k.cache.Store(&sync.Map{})
	}
}

// lookup returns the tenant of the working key whose hash is hash.
func (k *keyring) lookup(ctx context.Context, hash string) (Tenant, error) {
	k.fresh(ctx)
	cache := k.cache.Load()
	if t, ok := cache.Load(hash); ok {
		return t.(Tenant), nil
	}
	var t Tenant
	var stored string
	err := k.db.QueryRowContext(ctx, `
		SELECT k.hash, e.organization_id, e.id, k.user_id
		FROM api_keys k JOIN environments e ON e.id = k.environment_id
		WHERE k.hash = ? AND k.revoked_at IS NULL`, hash).Scan(&stored, &t.OrganizationID, &t.EnvironmentID, &t.UserID)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("look up api key: %w", err)
	}
	// The lookup was by hash already; comparing the digests in constant time
	// keeps timing from telling anything about near misses (docs/api.md,
	// "Keys and environments").
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 {
		return Tenant{}, ErrNotFound
	}
	cache.Store(hash, t)
	return t, nil
}

// requireAPIKey admits requests carrying "Authorization: ApiKey <key>" for a
// known key and puts its Tenant in the context. The 401 messages are the
// reference platform's, so clients that match on them keep working.
//
// An address whose failed authentications used up its bucket is answered
// 429 whatever key it sends: answering a right guess differently would
// leave guessing as fast as before. A write past its key's limit is a 429
// too (RateLimits).
func requireAPIKey(keys *keyring, failures, writes *buckets, next http.Handler) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		addr := clientAddress(r)
		if wait, empty := failures.empty(addr); empty {
			return tooMany(wait)
		}
		t, hash, err := authenticate(r, keys)
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
			failures.take(addr)
		}
		if err != nil {
			return err
		}
		if isWrite(r) {
			if err := writes.take(hash); err != nil {
				return err
			}
		}
		noteEnvironment(r.Context(), t.EnvironmentID)
		keys.touch(r.Context(), hash)
		next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), t)))
		return nil
	})
}

// authenticate returns the tenant of r's API key and the key's hash.
func authenticate(r *http.Request, keys *keyring) (Tenant, string, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return Tenant{}, "", Unauthorized("Missing authorization header")
	}
	scheme, key, _ := strings.Cut(strings.TrimSpace(header), " ")
	if scheme != "ApiKey" {
		return Tenant{}, "", Unauthorized(fmt.Sprintf("Invalid authentication scheme: %q", scheme))
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return Tenant{}, "", Unauthorized("Unauthorized")
	}
	hash := HashAPIKey(key)
	t, err := keys.lookup(r.Context(), hash)
	if errors.Is(err, ErrNotFound) {
		return Tenant{}, "", Unauthorized("API Key not found")
	}
	return t, hash, err
}

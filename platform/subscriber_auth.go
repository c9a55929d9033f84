package platform

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// The inbox (/v1/inbox/*, /socket.io/) is called from browsers, which must
// never hold an API key. A session buys a subscriber token instead: a JWT
// naming the environment and the subscriber, signed with a key derived from
// Herald's secret. This file issues and checks those tokens, checks the
// subscriberHash a session brings, and holds the middleware of the inbox
// routes.

// SubscriberTokenTTL is how long a subscriber token is valid: the reference
// platform's default ("15 days").
const SubscriberTokenTTL = 15 * 24 * time.Hour

// tokenAudience is the audience of a subscriber token; a JWT meant for
// anything else is refused.
const tokenAudience = "widget_user"

// Subscriber is who an inbox request acts for: the claims of its token.
type Subscriber struct {
	ID             string   // the subscriber's _id
	SubscriberID   string   // its subscriberId
	EnvironmentID  string   //
	OrganizationID string   //
	FirstName      string   //
	LastName       string   //
	Email          string   //
	ContextKeys    []string // the session's context; empty without one
	Generation     int64    // the environment's token generation the token was issued in
}

// SubscriberLookup finds a subscriber's _id by its subscriberId, or
// ErrNotFound; subscribers.Store satisfies it. A token names both, so a
// subscriber deleted (or deleted and created again) since the token was
// issued is refused.
type SubscriberLookup interface {
	SubscriberDatabaseID(ctx context.Context, environmentID, subscriberID string) (string, error)
}

// InboxHMACs tells whether an environment's inbox is open without an HMAC:
// it has an active in-app integration whose hmac setting is off;
// integrations.Store satisfies it.
type InboxHMACs interface {
	InboxOpenWithoutHMAC(ctx context.Context, environmentID string) (bool, error)
}

// SubscriberAuth issues and checks subscriber tokens and session hashes.
type SubscriberAuth struct {
	db       *sqldb.DB
	keys     *sealer // opens api_keys.sealed
	tokenKey []byte  // signs tokens
	now      func() time.Time
	lookup   SubscriberLookup
	hmacs    InboxHMACs

	gensMu sync.Mutex
	gens   map[string]knownGeneration // by environment (generation)
}

// NewSubscriberAuth returns the inbox's authority on db. Tokens are signed
// and API keys sealed with keys derived from secret, each for its purpose.
func NewSubscriberAuth(db *sqldb.DB, secret []byte, now func() time.Time) *SubscriberAuth {
	if now == nil {
		now = time.Now
	}
	key := sha256.Sum256(append([]byte("subscriber-token\x00"), secret...))
	return &SubscriberAuth{db: db, keys: newSealer(secret, "api-keys"), tokenKey: key[:], now: now}
}

// UseSubscribers sets where tokens' subscribers are checked; until it is
// called, every token is refused.
func (a *SubscriberAuth) UseSubscribers(l SubscriberLookup) { a.lookup = l }

// UseIntegrations sets where whether an inbox needs an HMAC is read; until
// it is called, WarnWithoutHMAC warns of nothing.
func (a *SubscriberAuth) UseIntegrations(h InboxHMACs) { a.hmacs = h }

// WarnWithoutHMAC returns the warning an operator should see when env is
// Production and its inbox takes sessions without an HMAC, or "". Herald
// says it at start and on GET /v1/environments.
func (a *SubscriberAuth) WarnWithoutHMAC(ctx context.Context, env Environment) (string, error) {
	if a == nil || a.hmacs == nil || !strings.EqualFold(env.Name, Production) {
		return "", nil
	}
	open, err := a.hmacs.InboxOpenWithoutHMAC(ctx, env.ID)
	if err != nil || !open {
		return "", err
	}
	return "the inbox of " + env.Name + " takes sessions without an HMAC: anyone who knows its public identifier " +
		"can open the inbox of any subscriber whose id they guess; turn hmac on in its in-app integration (docs/inbox.md)", nil
}

// SealAPIKey returns key sealed for api_keys.sealed, bound to the key's
// hash, or nil without a secret.
func SealAPIKey(secret []byte, key string) []byte {
	if len(secret) == 0 {
		return nil
	}
	return newSealer(secret, "api-keys").seal([]byte(key), []byte(HashAPIKey(key)))
}

// ErrNoSealedKey means an environment has no API key Herald can compute an
// HMAC with: every key it has was made before keys were kept sealed, and
// exists only as a digest.
var ErrNoSealedKey = errors.New("no API key of the environment is kept sealed")

// CheckSubscriberHash reports whether hash is the lowercase hex
// HMAC-SHA256 of message keyed with one of the environment's API keys, or
// ErrNoSealedKey when no key can be used.
func (a *SubscriberAuth) CheckSubscriberHash(ctx context.Context, environmentID, message, hash string) (bool, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT hash, sealed FROM api_keys
		WHERE environment_id = ? AND sealed IS NOT NULL AND revoked_at IS NULL ORDER BY created_at`, environmentID)
	if err != nil {
		return false, fmt.Errorf("read api keys: %w", err)
	}
	defer rows.Close()
	usable := 0
	valid := false
	for rows.Next() {
		var digest string
		var sealed []byte
		if err := rows.Scan(&digest, &sealed); err != nil {
			return false, err
		}
		key, err := a.keys.open(sealed, []byte(digest))
		if err != nil {
			continue // sealed under another secret: as good as a digest
		}
		usable++
		if hmac.Equal([]byte(SubscriberHash(string(key), message)), []byte(hash)) {
			valid = true
		}
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	if usable == 0 {
		return false, ErrNoSealedKey
	}
	return valid, nil
}

// SubscriberHash is the subscriberHash a team's backend computes for its
// subscriber: hex(HMAC-SHA256(apiKey, subscriberId)).
func SubscriberHash(apiKey, subscriberID string) string {
	m := hmac.New(sha256.New, []byte(apiKey))
	m.Write([]byte(subscriberID))
	return hex.EncodeToString(m.Sum(nil))
}

// EnvironmentByIdentifier returns the environment whose public identifier
// (an inbox's applicationIdentifier) is identifier, or ErrNotFound.
func (a *SubscriberAuth) EnvironmentByIdentifier(ctx context.Context, identifier string) (Environment, error) {
	env := Environment{Identifier: identifier}
	var parent sql.NullString
	err := a.db.QueryRowContext(ctx, `SELECT id, organization_id, name, parent_id FROM environments WHERE identifier = ?`,
		identifier).Scan(&env.ID, &env.OrganizationID, &env.Name, &parent)
	if errors.Is(err, sql.ErrNoRows) {
		return Environment{}, ErrNotFound
	}
	if err != nil {
		return Environment{}, fmt.Errorf("find environment by identifier: %w", err)
	}
	env.ParentID = parent.String
	return env, nil
}

// tokenClaims are a subscriber token's JWT claims, named as the reference
// platform names them.
type tokenClaims struct {
	ID             string   `json:"_id"`
	SubscriberID   string   `json:"subscriberId"`
	EnvironmentID  string   `json:"environmentId"`
	OrganizationID string   `json:"organizationId"`
	FirstName      string   `json:"firstName,omitempty"`
	LastName       string   `json:"lastName,omitempty"`
	Email          string   `json:"email,omitempty"`
	ContextKeys    []string `json:"contextKeys"`
	Audience       string   `json:"aud"`
	Issuer         string   `json:"iss"`
	IssuedAt       int64    `json:"iat"`
	Expires        int64    `json:"exp"`
	Generation     int64    `json:"gen,omitempty"` // the environment's TokenGeneration at the session
}

// tokenHeader is the only JWT header Herald issues and accepts.
var tokenHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// IssueToken returns a token for s, valid for SubscriberTokenTTL while
// the environment's token generation stays generation.
func (a *SubscriberAuth) IssueToken(s Subscriber, generation int64) (string, error) {
	now := a.now()
	keys := s.ContextKeys
	if keys == nil {
		keys = []string{}
	}
	claims, err := json.Marshal(tokenClaims{
		ID: s.ID, SubscriberID: s.SubscriberID, EnvironmentID: s.EnvironmentID, OrganizationID: s.OrganizationID,
		FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, ContextKeys: keys,
		Audience: tokenAudience, Issuer: "herald", IssuedAt: now.Unix(), Expires: now.Add(SubscriberTokenTTL).Unix(),
		Generation: generation,
	})
	if err != nil {
		return "", err
	}
	signed := tokenHeader + "." + base64.RawURLEncoding.EncodeToString(claims)
	return signed + "." + a.sign(signed), nil
}

func (a *SubscriberAuth) sign(signed string) string {
	m := hmac.New(sha256.New, a.tokenKey)
	m.Write([]byte(signed))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// errBadToken is every reason a token is refused; the client is told no more.
var errBadToken = Unauthorized("Unauthorized")

// Authenticate checks token (signature, audience, expiry, generation) and
// that its subscriber still exists, and returns who it names. Any failure
// is a 401.
func (a *SubscriberAuth) Authenticate(ctx context.Context, token string) (Subscriber, error) {
	// The header is compared whole: only HS256 tokens of Herald's are
	// accepted, so "alg":"none" and key-confusion tricks have nothing to work on.
	header, rest, ok := strings.Cut(token, ".")
	if !ok || header != tokenHeader {
		return Subscriber{}, errBadToken
	}
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(a.sign(header+"."+payload))) {
		return Subscriber{}, errBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Subscriber{}, errBadToken
	}
	var c tokenClaims
	if err := json.Unmarshal(raw, &c); err != nil || c.Audience != tokenAudience || c.ID == "" || c.EnvironmentID == "" {
		return Subscriber{}, errBadToken
	}
	if a.now().Unix() >= c.Expires {
		return Subscriber{}, errBadToken
	}
	generation, err := a.generation(ctx, c.EnvironmentID)
	if err != nil {
		return Subscriber{}, err
	}
	if c.Generation != generation {
		return Subscriber{}, errBadToken
	}
	if a.lookup == nil {
		return Subscriber{}, errBadToken
	}
	id, err := a.lookup.SubscriberDatabaseID(ctx, c.EnvironmentID, c.SubscriberID)
	if errors.Is(err, ErrNotFound) || (err == nil && id != c.ID) {
		return Subscriber{}, errBadToken
	}
	if err != nil {
		return Subscriber{}, err
	}
	return Subscriber{ID: c.ID, SubscriberID: c.SubscriberID, EnvironmentID: c.EnvironmentID,
		OrganizationID: c.OrganizationID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		ContextKeys: c.ContextKeys, Generation: c.Generation}, nil
}

// An environment's subscriber tokens carry its token generation at their
// session, and are refused once it has moved on: RevokeSubscriberTokens
// moves it when the environment's sessions start to need an HMAC, so that
// the tokens sessions bought without one stop working. It is kept in
// settings, under tokenGenerationPrefix + the environment's _id; none
// stored is generation 0.
const tokenGenerationPrefix = "inbox_token_generation/"

// TokenGeneration returns the environment's token generation. A session
// reads it before it reads whether it needs an HMAC, so that a token bought
// while HMAC was being turned on carries the generation before.
func (a *SubscriberAuth) TokenGeneration(ctx context.Context, environmentID string) (int64, error) {
	var n int64
	// Every inbox request reads it: through the read pool's prepared
	// statement, so it is not parsed each time.
	err := a.db.QueryRow(ctx, `SELECT CAST(value AS INTEGER) FROM settings WHERE name = ?`,
		tokenGenerationPrefix+environmentID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read token generation: %w", err)
	}
	return n, nil
}

// generationFor is how long a token check reuses an environment's token
// generation: every inbox request checks it, and it moves only when an
// environment's sessions start to need an HMAC. A revocation through this
// process is seen at once (revocations); through another, within this.
const generationFor = 100 * time.Millisecond

// revocations counts this process's token revocations, each once its
// transaction has committed: a token check reads the generation anew
// after one.
var revocations atomic.Uint64

type knownGeneration struct {
	n           int64
	read        time.Time // monotonic: a test's clock may stand still
	revocations uint64
}

// generation is TokenGeneration for a token check, reused for up to
// generationFor. A session reads it anew: a token it issues must carry
// the generation of now.
func (a *SubscriberAuth) generation(ctx context.Context, environmentID string) (int64, error) {
	seen := revocations.Load()
	a.gensMu.Lock()
	g, ok := a.gens[environmentID]
	a.gensMu.Unlock()
	if ok && g.revocations == seen && time.Since(g.read) < generationFor {
		return g.n, nil
	}
	read := time.Now()
	n, err := a.TokenGeneration(ctx, environmentID)
	if err != nil {
		return 0, err
	}
	a.gensMu.Lock()
	defer a.gensMu.Unlock()
	if a.gens == nil || len(a.gens) >= 1024 {
		a.gens = map[string]knownGeneration{}
	}
	a.gens[environmentID] = knownGeneration{n: n, read: read, revocations: seen}
	return n, nil
}

// RevokeSubscriberTokens refuses, from when tx, a transaction of db.Tx,
// commits, every subscriber token the environment has issued.
func RevokeSubscriberTokens(ctx context.Context, db *sqldb.DB, tx *sql.Tx, environmentID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, '1')
		ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(settings.value AS INTEGER) + 1 AS TEXT)`,
		tokenGenerationPrefix+environmentID)
	if err != nil {
		return fmt.Errorf("revoke subscriber tokens: %w", err)
	}
	db.AfterCommit(tx, func() { revocations.Add(1) })
	return nil
}

type subscriberKey struct{}

// WithSubscriber returns ctx carrying s. Only the inbox middleware and tests call it.
func WithSubscriber(ctx context.Context, s Subscriber) context.Context {
	return context.WithValue(ctx, subscriberKey{}, s)
}

// SubscriberFrom returns the subscriber the inbox middleware put in ctx.
func SubscriberFrom(ctx context.Context) Subscriber {
	s, _ := ctx.Value(subscriberKey{}).(Subscriber)
	return s
}

// InboxSessionPath is the one inbox route that needs no token: it issues them.
const InboxSessionPath = "/v1/inbox/session"

// requireSubscriber admits requests carrying "Authorization: Bearer
// <token>" and puts the subscriber, and its environment as the Tenant, in
// the context.
//
// Failed authentications count against the client address's bucket of
// failures, the one API keys use (RateLimits): a refused session (a wrong
// HMAC, an unknown application) and a refused token alike, so neither
// hashes nor tokens can be guessed faster than keys.
func requireSubscriber(a *SubscriberAuth, failures *buckets, sessions sessionGate, next http.Handler) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		addr := clientAddress(r)
		if wait, empty := failures.empty(addr); empty {
			return tooMany(wait)
		}
		if r.URL.Path == InboxSessionPath {
			gate := sessions // this request's own: sessions is every request's
			gate.addr = addr
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), sessionGateKey{}, gate)))
			if sw.status == http.StatusBadRequest || sw.status == http.StatusUnauthorized {
				failures.take(addr)
			}
			return nil
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			failures.take(addr)
			return Unauthorized("Unauthorized")
		}
		s, err := a.Authenticate(r.Context(), strings.TrimSpace(token))
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
			failures.take(addr)
		}
		if err != nil {
			return err
		}
		noteEnvironment(r.Context(), s.EnvironmentID)
		ctx := WithTenant(WithSubscriber(r.Context(), s), Tenant{OrganizationID: s.OrganizationID, EnvironmentID: s.EnvironmentID})
		next.ServeHTTP(w, r.WithContext(ctx))
		return nil
	})
}

// sessionGate is what requireSubscriber hands the session route: the
// buckets of sessions per client address (RateLimits), and the address.
type sessionGate struct {
	existing, created *buckets
	addr              string
}

type sessionGateKey struct{}

// AdmitSession spends one of the client address's inbox sessions: one of
// a subscriber that exists, or, when newSubscriber, of one that does not.
// Past that limit it returns the 429 to answer. The session route calls it
// once it knows which the session is, before it creates anything; outside
// the inbox's middleware every session is admitted.
func AdmitSession(ctx context.Context, newSubscriber bool) error {
	g, ok := ctx.Value(sessionGateKey{}).(sessionGate)
	if !ok {
		return nil
	}
	if newSubscriber {
		return g.created.take(g.addr)
	}
	return g.existing.take(g.addr)
}

// inboxCORS answers the inbox's cross-origin requests as the reference
// platform does: any origin, and the custom headers its client always sends
// (a preflight that did not allow them would fail every call). A preflight
// ends here. Only the inbox routes get these headers: the API-key API stays
// server-side.
func inboxCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Max-Age", "86400")
		h.Set("Access-Control-Allow-Methods", "GET,HEAD,POST,PUT,DELETE,PATCH,OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, User-Agent, Content-Type, Sentry-Trace, Baggage, "+
			"Service-Environment-Id, Service-API-Version, Service-Client-Version, Service-User-Agent, "+
			"Novu-Environment-Id, Novu-API-Version, Novu-Client-Version, Novu-User-Agent, "+
			"Bypass-Tunnel-Reminder, Idempotency-Key, Novu-Application-Identifier, Service-Application-Identifier")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

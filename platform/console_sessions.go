package platform

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// ConsoleConfig are the settings of the console's sessions (docs/console.md,
// "Sessions").
type ConsoleConfig struct {
	Idle   time.Duration // a session unused this long ends; DefaultConsoleIdle when 0
	MaxAge time.Duration // a session ends this long after sign-in, used or not; DefaultConsoleMaxAge when 0
	// SecureCookies marks the session cookie Secure although the request
	// came over plain HTTP: behind a proxy that ends TLS, the browser
	// speaks HTTPS and Herald does not know it.
	SecureCookies bool
	Now           func() time.Time // time.Now when nil
	// Sign-in attempts that fail, per client address and per account: a
	// bucket of Burst that refills one every Refill.
	AddressBurst, AccountBurst   int
	AddressRefill, AccountRefill time.Duration
}

// The defaults of ConsoleConfig.
const (
	DefaultConsoleIdle   = 12 * time.Hour
	DefaultConsoleMaxAge = 7 * 24 * time.Hour
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "herald_session"

// seenEvery is how stale a session's last use may be in the database: a
// page load writes it at most this often, so idle expiry is this precise.
const seenEvery = time.Minute

// ConsoleSession is a signed-in member's session, as the console's pages
// see it.
type ConsoleSession struct {
	User ConsoleUser
	// CSRF is the token every state-changing request made with it must
	// carry, in the _csrf form field or the X-CSRF-Token header.
	CSRF string
	hash string
}

type consoleSessionKey struct{}

// ConsoleSessionFrom returns the session ConsoleAuth.Require put in ctx.
func ConsoleSessionFrom(ctx context.Context) (ConsoleSession, bool) {
	s, ok := ctx.Value(consoleSessionKey{}).(ConsoleSession)
	return s, ok
}

// WithConsoleSession returns ctx carrying s, as Require does; for tests.
func WithConsoleSession(ctx context.Context, s ConsoleSession) context.Context {
	return context.WithValue(ctx, consoleSessionKey{}, s)
}

// ConsoleAuth signs members in and out of the console and guards its
// requests: a session from the cookie, and for every request that changes
// something, its origin and its CSRF token.
type ConsoleAuth struct {
	accounts *Accounts
	db       *sqldb.DB
	cfg      ConsoleConfig
	csrfKey  []byte
	origins  *http.CrossOriginProtection
	// Failed sign-ins, by client address and by email.
	byAddress, byAccount *buckets
}

// NewConsoleAuth returns the console's guard over the accounts in db;
// secret keys its CSRF tokens, so every instance sharing the database (and
// the secret) accepts the tokens of the others.
func NewConsoleAuth(db *sqldb.DB, secret []byte, cfg ConsoleConfig) *ConsoleAuth {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Idle = cmpOr(cfg.Idle, DefaultConsoleIdle)
	cfg.MaxAge = cmpOr(cfg.MaxAge, DefaultConsoleMaxAge)
	cfg.AddressBurst, cfg.AccountBurst = cmpOr(cfg.AddressBurst, 20), cmpOr(cfg.AccountBurst, 10)
	cfg.AddressRefill, cfg.AccountRefill = cmpOr(cfg.AddressRefill, 6*time.Second), cmpOr(cfg.AccountRefill, time.Minute)
	key := sha256.Sum256(append([]byte("console-csrf\x00"), secret...))
	return &ConsoleAuth{
		accounts:  NewAccounts(db, cfg.Now),
		db:        db,
		cfg:       cfg,
		csrfKey:   key[:],
		origins:   http.NewCrossOriginProtection(),
		byAddress: newBuckets(1/cfg.AddressRefill.Seconds(), cfg.AddressBurst),
		byAccount: newBuckets(1/cfg.AccountRefill.Seconds(), cfg.AccountBurst),
	}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Accounts returns the team the guard signs in.
func (c *ConsoleAuth) Accounts() *Accounts { return c.accounts }

// SignIn checks an email and password and, when they are right, starts a
// session and sets its cookie on w. Failures are limited per client
// address and per email: past either limit every attempt, right or wrong,
// is a 429 until the bucket refills, so guessing goes no faster.
func (c *ConsoleAuth) SignIn(w http.ResponseWriter, r *http.Request, email, pw string) (ConsoleUser, error) {
	addr, account := clientAddress(r), normalEmail(email)
	for _, b := range []struct {
		buckets *buckets
		key     string
	}{{c.byAddress, addr}, {c.byAccount, account}} {
		if wait, empty := b.buckets.empty(b.key); empty {
			return ConsoleUser{}, tooMany(wait)
		}
	}
	u, err := c.accounts.Authenticate(r.Context(), email, pw)
	if errors.Is(err, ErrWrongPassword) {
		c.byAddress.take(addr)
		c.byAccount.take(account)
	}
	if err != nil {
		return u, err
	}
	return u, c.StartSession(w, r, u)
}

// StartSession starts a session for u and sets its cookie: 256 random
// bits, of which the database keeps only the SHA-256. It also deletes the
// sessions that have expired, everyone's: the table holds a few rows a
// member, so a sign-in's scan of it is cheap.
func (c *ConsoleAuth) StartSession(w http.ResponseWriter, r *http.Request, u ConsoleUser) error {
	b := make([]byte, 32)
	rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	now := c.cfg.Now()
	ts := sqldb.FormatTime(now)
	err := c.db.Tx(r.Context(), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(r.Context(), `DELETE FROM console_sessions WHERE seen_at < ? OR created_at < ?`,
			sqldb.FormatTime(now.Add(-c.cfg.Idle)), sqldb.FormatTime(now.Add(-c.cfg.MaxAge))); err != nil {
			return err
		}
		_, err := tx.ExecContext(r.Context(), `INSERT INTO console_sessions (hash, user_id, created_at, seen_at) VALUES (?, ?, ?, ?)`,
			HashAPIKey(id), u.ID, ts, ts)
		return err
	})
	if err != nil {
		return err
	}
	c.setCookie(w, r, id, int(c.cfg.MaxAge.Seconds()))
	return nil
}

func (c *ConsoleAuth) setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: value, Path: "/console", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil || c.cfg.SecureCookies})
}

// SignOut ends r's session, everywhere at once, and clears its cookie.
func (c *ConsoleAuth) SignOut(w http.ResponseWriter, r *http.Request) error {
	c.setCookie(w, r, "", -1)
	cookie, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	_, err = c.db.ExecContext(r.Context(), `DELETE FROM console_sessions WHERE hash = ?`, HashAPIKey(cookie.Value))
	return err
}

// errNoSession is a request without a live session.
var errNoSession = &Error{Status: http.StatusUnauthorized, Message: "Sign in to the console"}

// Session returns r's live session: its cookie names a session that has
// neither idled past Idle nor lived past MaxAge, of a member who still
// exists, read from the database at every request so that a sign-out, a
// removal or a new role applies at once on every instance. Otherwise it
// is a 401.
func (c *ConsoleAuth) Session(r *http.Request) (ConsoleSession, error) {
	cookie, err := r.Cookie(SessionCookie)
	if err != nil || cookie.Value == "" {
		return ConsoleSession{}, errNoSession
	}
	ctx, hash := r.Context(), HashAPIKey(cookie.Value)
	var s ConsoleSession
	var created, seen string
	err = c.db.QueryRowContext(ctx, `SELECT u.id, u.organization_id, u.email, u.name, u.role, u.password_hash <> '',
		u.must_change = 1, u.created_at, u.updated_at, s.created_at, s.seen_at
		FROM console_sessions s JOIN console_users u ON u.id = s.user_id WHERE s.hash = ?`, hash).Scan(
		&s.User.ID, &s.User.OrganizationID, &s.User.Email, &s.User.Name, &s.User.Role, &s.User.HasPassword,
		&s.User.MustChangePassword, &s.User.CreatedAt, &s.User.UpdatedAt, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return s, errNoSession
	}
	if err != nil {
		return s, err
	}
	now := c.cfg.Now()
	createdAt, _ := sqldb.ParseTime(created)
	seenAt, _ := sqldb.ParseTime(seen)
	if now.Sub(seenAt) > c.cfg.Idle || now.Sub(createdAt) > c.cfg.MaxAge {
		if _, err := c.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE hash = ?`, hash); err != nil {
			return s, err
		}
		return s, errNoSession
	}
	if now.Sub(seenAt) > seenEvery {
		if _, err := c.db.ExecContext(ctx, `UPDATE console_sessions SET seen_at = ? WHERE hash = ?`, sqldb.FormatTime(now), hash); err != nil {
			return s, err
		}
	}
	s.hash, s.CSRF = hash, c.csrfToken(hash)
	return s, nil
}

// csrfToken is the session's CSRF token: an HMAC of the session's hash, so
// it needs no storage and changes with every session.
func (c *ConsoleAuth) csrfToken(sessionHash string) string {
	mac := hmac.New(sha256.New, c.csrfKey)
	mac.Write([]byte(sessionHash))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// errForged is a state-changing request that came from another site or
// without its session's token.
var errForged = &Error{Status: http.StatusForbidden, Message: "This request did not come from a console page; reload the page and try again"}

// CheckOrigin refuses a state-changing request that a browser sent from
// another origin, by its Sec-Fetch-Site or Origin header; the sign-in and
// setup forms, which have no session yet, rely on it alone.
func (c *ConsoleAuth) CheckOrigin(r *http.Request) error {
	if c.origins.Check(r) != nil {
		return errForged
	}
	return nil
}

// Require serves next to requests of a live session, with the session in
// the context. A state-changing request must also come from the console's
// own origin and carry the session's CSRF token; fail answers everything
// else with the *Error: 401 without a session, 403 for a forged request.
func (c *ConsoleAuth) Require(next http.Handler, fail func(w http.ResponseWriter, r *http.Request, err error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := c.Session(r)
		if err == nil && !safeMethod(r.Method) {
			err = c.checkToken(r, s)
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithConsoleSession(r.Context(), s)))
	})
}

// checkToken refuses a request from another origin, or without the
// session's token in the X-CSRF-Token header or the _csrf form field.
func (c *ConsoleAuth) checkToken(r *http.Request, s ConsoleSession) error {
	if err := c.CheckOrigin(r); err != nil {
		return err
	}
	token := r.Header.Get("X-CSRF-Token")
	if token == "" {
		token = r.PostFormValue("_csrf")
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) != 1 {
		return errForged
	}
	return nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

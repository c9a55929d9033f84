// Package platformtest boots Herald's HTTP stack on a fresh database for
// black-box tests (in-memory SQLite, or PostgreSQL when TEST_DATABASE_URL is
// set), with known API keys for both environments, and checks answers against
// the API description:
//
//	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
//		subscribers.AddRoutes(mux, subscribers.NewStore(app.DB))
//	})
//	res := srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada"}`)
package platformtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// The API keys every test server accepts.
const (
	DevKey  = "test-development-key-0000000000000"
	ProdKey = "test-production-key-00000000000000"
)

// Secret is the credential encryption secret of every test server.
const Secret = "platformtest-secret-0123456789abcdef"

// App is what a test's register function gets to build its routes from.
type App struct {
	DB          *sqldb.DB
	Logger      *slog.Logger
	Clock       *Clock
	Secret      []byte
	Development platform.Environment
	Production  platform.Environment
	// Outbound lets sends reach loopback, where tests run their httptest
	// and SMTP receivers (the default guard refuses it).
	Outbound *outbound.Guard
	// Inbox serves /v1/inbox/* and /socket.io/ apart from the API-key API;
	// the wiring hands it the subscribers it checks tokens against.
	Inbox *platform.SubscriberAuth
	// Edge is how the middleware serves the routes; register may add to it
	// (the API description, metrics, a compatibility mode) and may replace
	// Logger before the server starts.
	Edge platform.ServerConfig
}

// Loopback is the outbound guard of test servers: loopback allowed, as
// HERALD_OUTBOUND_ALLOW=127.0.0.0/8,::1 allows it.
var Loopback = mustAllow("127.0.0.0/8,::1")

func mustAllow(list string) *outbound.Guard {
	o, err := outbound.ParseAllow(list)
	if err != nil {
		panic(err)
	}
	return o
}

// Server is a running test server.
type Server struct {
	*httptest.Server
	Mux  *http.ServeMux // the routes, for a test that serves them behind other middleware too
	App  *App
	Dev  Client // authenticated as the Development environment
	Prod Client // authenticated as the Production environment
}

// NewServer migrates a fresh in-memory database, bootstraps both environments
// with DevKey and ProdKey, lets register add routes (and seed data) and
// serves them behind the real middleware. Everything is closed by t.Cleanup.
func NewServer(t testing.TB, register func(mux *http.ServeMux, app *App)) *Server {
	t.Helper()
	db := sqldbtest.NewDB(t)
	logs := &testWriter{t: t}
	t.Cleanup(logs.stop) // registered first, so it runs after every other cleanup
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return serve(t, db, logger, NewClock(time.Now()), register)
}

// serve bootstraps both environments on db with DevKey and ProdKey, lets
// register add routes and serves them behind the real middleware.
func serve(t testing.TB, db *sqldb.DB, logger *slog.Logger, clock *Clock, register func(mux *http.ServeMux, app *App)) *Server {
	t.Helper()
	envs, err := platform.Bootstrap(context.Background(), db, platform.BootstrapConfig{DevelopmentKey: DevKey, ProductionKey: ProdKey, Secret: []byte(Secret)}, io.Discard)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	app := &App{
		DB:          db,
		Logger:      logger,
		Clock:       clock,
		Secret:      []byte(Secret),
		Development: envs[0],
		Production:  envs[1],
		Outbound:    Loopback,
		Inbox:       platform.NewSubscriberAuth(db, []byte(Secret), clock.Now),
	}
	app.Edge = platform.ServerConfig{Secret: app.Secret, Inbox: app.Inbox, Now: clock.Now,
		// Tests write faster than any client should: the per-key write
		// limit has tests of its own (platform/ratelimit_test.go).
		Limits: platform.RateLimits{Write: -1}}
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db, app.Inbox)
	if register != nil {
		register(mux, app)
	}
	hs := httptest.NewServer(platform.NewHandler(app.Logger, db, mux, app.Edge))
	t.Cleanup(hs.Close)
	return &Server{
		Server: hs,
		Mux:    mux,
		App:    app,
		Dev:    Client{base: hs.URL, key: DevKey, client: hs.Client()},
		Prod:   Client{base: hs.URL, key: ProdKey, client: hs.Client()},
	}
}

// Client sends requests to a test server with one API key.
type Client struct {
	base   string
	key    string
	client *http.Client
	compat bool // the server speaks the reference platform's wire (HERALD_COMPAT)
}

// Response is a fully read response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request with the client's key and a JSON body ("" for none),
// plus extra headers given as name, value pairs. It fails the test only when
// the request cannot be made at all.
func (c Client) Do(t testing.TB, method, path, body string, headers ...string) *Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "ApiKey "+c.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body of %s %s: %v", method, path, err)
	}
	checkSpec(t, req, res, b, c.compat)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// On returns a client with c's key that sends to hs, a server built on the
// same database with other settings.
func (c Client) On(hs *httptest.Server) Client {
	c.base, c.client = hs.URL, hs.Client()
	return c
}

// Compat returns a client of a server in compatibility mode: its answers
// are checked against the description once the envelope and the novu…
// spelling are taken off (platform.CompatUnwrap).
func (c Client) Compat() Client {
	c.compat = true
	return c
}

// WithKey returns a client that sends key instead ("" sends no Authorization header).
func (c Client) WithKey(key string) Client {
	c.key = key
	return c
}

// Decode unmarshals the body into v, failing the test when it is not JSON of that shape.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s into %T: %v", r.Body, v, err)
	}
}

// Clock is a test clock that moves only when told to.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Eventually polls cond every few milliseconds until it holds or the deadline
// passes, for work that finishes in the background. Tests never sleep a fixed time.
func Eventually(t testing.TB, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testWriter sends server logs to the test log, shown only when a test fails.
// Logging after a test has finished panics, so lines from goroutines that
// outlive the test are dropped once it stops.
type testWriter struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}

// SyncBuffer is a bytes.Buffer that a test may read while other goroutines
// (a worker's logger, a running server) write to it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// NewClient returns a client of the server at base (e.g. one that run
// started) that sends key; its responses are checked as a test server's are.
func NewClient(base, key string) Client {
	return Client{base: base, key: key, client: http.DefaultClient}
}

// Package apptest starts the whole of Herald for a black-box test: the
// domains wired by app.Start, as herald serve wires them, on
// platformtest's fresh in-memory database, behind the real middleware,
// with the API description and metrics served beside the API. It adds to
// platformtest (its server, clients, clock and Eventually) the fixtures
// that need more than one domain: workflows, triggers, their jobs, a chat
// receiver and the inbox's client.
//
//	srv := apptest.NewServer(t)
//	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
//	tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"name":"Ada"}}`)
//	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
package apptest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// Server is Herald running for a test.
type Server struct {
	*platformtest.Server
	Herald  *app.App              // its stores, worker and retention sweeper
	Console *platform.ConsoleAuth // the console's sign-in, served under /console/
	stop    func()
}

// Stop stops the server's background work (the delivery worker, the
// broadcasts it resumed) before the test ends, as a process that dies
// would, for tests of what happens without it. The test's end stops it
// otherwise.
func (s *Server) Stop() { s.stop() }

// An Option changes what NewServer starts.
type Option func(*settings)

type settings struct {
	outbound    *outbound.Guard
	retention   app.Retention
	compat      string
	logs        io.Writer
	storage     int64
	attachments int64
	publicURL   string
	limits      *platform.RateLimits
	console     platform.ConsoleConfig
	pageCache   int
}

// Outbound sets where sends may connect, as HERALD_OUTBOUND_ALLOW does;
// nil is the default guard, which refuses loopback. Without it, sends
// may reach loopback (platformtest.Loopback), where tests run receivers.
func Outbound(o *outbound.Guard) Option { return func(s *settings) { s.outbound = o } }

// Retention sets how long records are kept. Unless r.Every is set, the
// sweeper runs only when the test calls Herald.Sweeper.Sweep.
func Retention(r app.Retention) Option { return func(s *settings) { s.retention = r } }

// MaxRequestStorage sets the most bytes one request may cause to be
// stored, as HERALD_MAX_REQUEST_STORAGE does.
func MaxRequestStorage(n int64) Option { return func(s *settings) { s.storage = n } }

// MaxAttachments sets the most bytes of files one trigger request may
// carry, as HERALD_MAX_ATTACHMENTS does.
func MaxAttachments(n int64) Option { return func(s *settings) { s.attachments = n } }

// PublicURL sets where providers reach Herald, as HERALD_PUBLIC_URL does.
func PublicURL(u string) Option { return func(s *settings) { s.publicURL = u } }

// Compat speaks another platform's wire, as HERALD_COMPAT does.
func Compat(wire string) Option { return func(s *settings) { s.compat = wire } }

// Limits sets the server's rate limits, as HERALD_WRITE_RATE and the other
// limits do; without it writes are not limited and the others keep their
// defaults.
func Limits(l platform.RateLimits) Option { return func(s *settings) { s.limits = &l } }

// Console sets the console's session and sign-in settings (its clock is
// the server's).
func Console(c platform.ConsoleConfig) Option { return func(s *settings) { s.console = c } }

// PageCache sets how many bytes keep feed and inbox pages, as
// HERALD_PAGE_CACHE does; negative keeps none.
func PageCache(n int) Option { return func(s *settings) { s.pageCache = n } }

// Logs writes the server's log to w as HERALD_LOG_FORMAT=json does, at
// info and up, instead of to the test's log.
func Logs(w io.Writer) Option { return func(s *settings) { s.logs = w } }

// NewServer starts Herald on a fresh database (platformtest.NewServer) with
// both environments seeded and the delivery worker running; everything
// stops when the test ends.
func NewServer(t testing.TB, options ...Option) *Server {
	t.Helper()
	s := &Server{}
	s.Server = platformtest.NewServer(t, s.starter(t, options))
	return s
}

// NewInstances starts n Herald instances on one fresh PostgreSQL database
// (platformtest.NewInstances), each with its own pools, caches, listener
// and worker, as n processes sharing it are. It skips the test on SQLite.
func NewInstances(t testing.TB, n int, options ...Option) []*Server {
	t.Helper()
	servers := make([]*Server, n)
	next := 0
	started := platformtest.NewInstances(t, n, func(mux *http.ServeMux, a *platformtest.App) {
		servers[next] = &Server{}
		servers[next].starter(t, options)(mux, a)
		next++
	})
	for i, srv := range started {
		servers[i].Server = srv
	}
	return servers
}

// starter is the register function of platformtest that starts Herald
// on its database and serves it as herald serve does.
func (s *Server) starter(t testing.TB, options []Option) func(*http.ServeMux, *platformtest.App) {
	set := settings{outbound: platformtest.Loopback}
	for _, o := range options {
		o(&set)
	}
	return func(mux *http.ServeMux, a *platformtest.App) {
		t.Helper()
		if set.logs != nil {
			a.Logger = slog.New(slog.NewJSONHandler(set.logs, nil))
		}
		doc, err := openAPI()
		if err != nil {
			t.Fatalf("API description: %v", err)
		}
		metrics := platform.NewMetrics(a.DB)
		a.Edge.OpenAPI, a.Edge.Metrics, a.Edge.MetricsRoute, a.Edge.Compat = doc, metrics, true, set.compat
		a.Edge.MaxRequestStorage, a.Edge.MaxAttachments = set.storage, set.attachments
		if set.limits != nil {
			a.Edge.Limits = *set.limits
		}
		ctx, cancel := context.WithCancel(context.Background())
		set.console.Now = a.Clock.Now
		console := platform.NewConsoleAuth(a.DB, a.Secret, set.console)
		herald, err := app.Start(ctx, mux, app.Deps{DB: a.DB, Logger: a.Logger, Secret: a.Secret, Now: a.Clock.Now,
			Environments: []platform.Environment{a.Development, a.Production}, Outbound: set.outbound,
			Retention: set.retention, Metrics: metrics, Inbox: a.Inbox, Console: console, PublicURL: set.publicURL,
			PageCache: set.pageCache})
		if err != nil {
			cancel()
			t.Fatalf("start: %v", err)
		}
		s.Herald, s.Console, a.Edge.Console = herald, console, herald.Console
		s.stop = stopper(cancel, herald)
		t.Cleanup(s.stop)
	}
}

// StartAgain starts Herald a second time on the server's database, as a
// process starting after another has stopped: its worker runs, and it goes
// on with the broadcasts left unfinished. Its routes are not served. It
// stops when the test ends.
func (s *Server) StartAgain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	herald, err := app.Start(ctx, http.NewServeMux(), app.Deps{DB: s.App.DB, Logger: s.App.Logger, Secret: s.App.Secret,
		Now: s.App.Clock.Now, Environments: []platform.Environment{s.App.Development, s.App.Production},
		Outbound: s.App.Outbound})
	if err != nil {
		cancel()
		t.Fatalf("start again: %v", err)
	}
	t.Cleanup(stopper(cancel, herald))
}

// stopper stops herald's background work as a shutdown does: it stops
// claiming, then what still runs has a few seconds to finish.
func stopper(cancel context.CancelFunc, herald *app.App) func() {
	return func() {
		cancel()
		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		herald.Stop(ctx)
	}
}

// openAPI is the API description every test server serves, merged once.
var openAPI = sync.OnceValues(func() ([]byte, error) { return platform.MergeOpenAPI(app.OpenAPI...) })

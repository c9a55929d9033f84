package platform

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// ServerConfig holds what the HTTP stack needs beyond the routes.
type ServerConfig struct {
	MaxBody int64            // request body limit in bytes; past it, a 413
	Now     func() time.Time // clock for idempotency expiry and the inbox sessions' limits; time.Now when nil
	Secret  []byte           // seals stored idempotent responses (see LoadSecret)
	// MaxPayload bounds a trigger's payload in bytes (PayloadProblem);
	// DefaultMaxPayload when 0.
	MaxPayload int64
	// MaxRequestStorage bounds the bytes one request may cause to be
	// stored (StorageProblem); DefaultMaxRequestStorage when 0.
	MaxRequestStorage int64
	// MaxAttachments bounds the bytes of the files one trigger request
	// carries (AttachmentLimit); DefaultMaxAttachments when 0.
	MaxAttachments int64
	Limits         RateLimits // per-key write, per-address auth-failure and inbox session limits
	Metrics        *Metrics   // counts requests; nil counts none
	// MetricsRoute serves Metrics at GET /metrics, without a key, beside the
	// API; false when it is served on an address of its own.
	MetricsRoute bool
	// Compat is the wire of another platform's clients to speak (compat.go;
	// CheckCompat); "" speaks the spec's.
	Compat string
	// OpenAPI is the API description (MergeOpenAPI), served without a key
	// at GET /openapi.json and shown at GET /docs; nil serves neither.
	OpenAPI []byte
	// Inbox authenticates /v1/inbox/* by subscriber token instead of API
	// key, and lets /socket.io/ through to check its own; nil serves
	// neither apart.
	Inbox *SubscriberAuth
	// Console serves /console/, with its own sign-in instead of an API
	// key, and GET / redirects to it; nil serves neither.
	Console http.Handler
}

// receiptRoutes are the prefixes of the routes providers send delivery
// receipts to (integrations' receipt route), posted or, for a provider
// that calls with GET, fetched: they carry no API key, each being verified
// by the signature its provider documents (docs/webhooks.md, "Receipts
// from providers").
var receiptRoutes = []string{"POST /webhooks/", "GET /webhooks/"}

// DefaultMaxBody is the body limit when HERALD_MAX_BODY is not set.
const DefaultMaxBody = 1 << 20

// NewHandler wraps the API routes in mux with Herald's middleware, outermost
// first: one log line per request and panic recovery; /healthz and /readyz,
// which need no key; the body limit; API-key auth with its rate limits;
// idempotency; and JSON
// 404/405 answers for paths and methods mux does not serve. The console,
// when there is one, is served beside the API under /console/.
func NewHandler(logger *slog.Logger, db *sqldb.DB, mux *http.ServeMux, cfg ServerConfig) http.Handler {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxPayload <= 0 {
		cfg.MaxPayload = DefaultMaxPayload
	}
	if cfg.MaxRequestStorage <= 0 {
		cfg.MaxRequestStorage = DefaultMaxRequestStorage
	}
	if cfg.MaxAttachments <= 0 {
		cfg.MaxAttachments = DefaultMaxAttachments
	}
	limits := cfg.Limits.withDefaults()
	keys := newKeyring(db, revocationPoll)
	idem := &idempotency{db: db, now: cfg.Now, started: cfg.Now(), sealer: newSealer(cfg.Secret, "idempotency")}
	// One bucket per client address for failed authentications, whichever
	// way it authenticates: an API key, or the inbox's hash and token.
	failures := newBuckets(limits.AuthFailure, limits.AuthFailureBurst)
	api := requireAPIKey(keys, failures, newBuckets(limits.Write, limits.WriteBurst), idem.middleware(routeJSON(mux)))
	if cfg.Compat != "" {
		api = compat(api)
	}

	root := http.NewServeMux()
	root.Handle("GET /healthz", withPattern("GET /healthz", handleHealthz()))
	root.Handle("GET /readyz", withPattern("GET /readyz", handleReadyz(db)))
	if cfg.MetricsRoute && cfg.Metrics != nil {
		root.Handle("GET /metrics", withPattern("GET /metrics", cfg.Metrics.Handler()))
	}
	if cfg.OpenAPI != nil {
		root.Handle("GET /openapi.json", withPattern("GET /openapi.json", handleOpenAPI(cfg.OpenAPI)))
		root.Handle("GET /docs", withPattern("GET /docs", handleDocs()))
		root.Handle("GET /docs/redoc.standalone.js", withPattern("GET /docs/redoc.standalone.js", handleRedoc()))
	}
	root.Handle("/", limitBody(cfg, api))
	for _, pattern := range receiptRoutes {
		root.Handle(pattern, limitBody(cfg, routeJSON(mux)))
	}
	if cfg.Inbox != nil {
		sessions := sessionGate{existing: perMinute(limits.Sessions, cfg.Now), created: perMinute(limits.NewSessions, cfg.Now)}
		root.Handle("/v1/inbox/", inboxCORS(limitBody(cfg, requireSubscriber(cfg.Inbox, failures, sessions, routeJSON(mux)))))
		root.Handle("GET /socket.io/", routeJSON(mux)) // the token is in the query: the socket checks it
	}
	if cfg.Console != nil {
		root.Handle("GET /{$}", withPattern("GET /{$}", http.RedirectHandler("/console/", http.StatusFound)))
		root.Handle("/console/", limitBody(cfg, cfg.Console))
	}
	return logRequests(logger, cfg.Metrics, root)
}

// withPattern notes the pattern of a route served outside the API's mux,
// for the request's log line and metrics.
func withPattern(pattern string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		notePattern(r.Context(), pattern)
		next.ServeHTTP(w, r)
	})
}

// limitBody bounds the request body, and hands the payload, storage and
// attachment limits on to the trigger handlers that apply them
// (PayloadProblem, StorageProblem, AttachmentLimit). A trigger's body may
// also hold its files, base64-encoded: it is allowed that much more.
func limitBody(cfg ServerConfig, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := cfg.MaxBody
		if r.Method == http.MethodPost && attachmentRoutes[r.URL.Path] {
			limit += (cfg.MaxAttachments + 2) / 3 * 4 // their base64 size, in int64 where a 32-bit int would overflow
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		ctx := context.WithValue(r.Context(), payloadLimitKey{}, cfg.MaxPayload)
		ctx = context.WithValue(ctx, attachmentLimitKey{}, cfg.MaxAttachments)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, storageLimitKey{}, cfg.MaxRequestStorage)))
	})
}

// routeJSON serves r through mux, but answers unknown paths and methods with
// the JSON error body instead of ServeMux's plain text, and a path or query
// value no store can hold with a 400 (checkRequestText).
func routeJSON(mux *http.ServeMux) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			notePattern(r.Context(), pattern)
			if err := checkRequestText(r, pattern); err != nil {
				return err
			}
			mux.ServeHTTP(w, r)
			return nil
		}
		// No route matched: let the mux's own handler decide between 404 and
		// 405 (it knows which methods the path has), then answer in JSON.
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			return Errorf(http.StatusMethodNotAllowed, "Method %s is not allowed on %s", r.Method, r.URL.Path)
		}
		if probe.status >= 300 && probe.status < 400 {
			// A redirect to the cleaned path, e.g. for a doubled slash.
			for k, v := range probe.header {
				w.Header()[k] = v
			}
			w.WriteHeader(probe.status)
			return nil
		}
		return NotFound("Cannot %s %s", r.Method, r.URL.Path)
	})
}

// headerProbe is a ResponseWriter that keeps the status and headers and
// discards the body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }

// handleHealthz serves GET /healthz: the process is up, and which build it
// runs, so an operator can tell what a deployment serves without a shell.
func handleHealthz() http.Handler {
	body := struct {
		Status string `json:"status"`
		Build
	}{"ok", BuildInfo()}
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		return JSON(w, http.StatusOK, body)
	})
}

// handleReadyz serves GET /readyz: the database answers.
func handleReadyz(db *sqldb.DB) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			return Errorf(http.StatusServiceUnavailable, "Database unavailable")
		}
		return JSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

// Build describes the running binary, read from the build information the
// Go toolchain embeds: no -ldflags step is needed, so a plain `go build` or
// `go install` reports its version and commit. A release build stamps them
// too (stampedVersion), and the stamp wins: it is built from a copy of
// the tag that may carry no VCS information, and a module built in its
// own checkout reports its version as "(devel)".
type Build struct {
	Version    string `json:"version"`    // the module version: a tag, a pseudo-version, or "(devel)"
	Commit     string `json:"commit"`     // vcs.revision; "" when built outside a checkout
	CommitTime string `json:"commitTime"` // vcs.time, the commit's time: a reproducible build has no clock of its own
	Modified   bool   `json:"modified"`   // the checkout had uncommitted changes
	GoVersion  string `json:"goVersion"`
}

// The release build's stamp, set with the linker's -X flag
// (.goreleaser.yaml, docs/install.md); empty in any other build.
var (
	stampedVersion    string // the release's version, such as 1.4.0
	stampedCommit     string // the full commit hash it was built from
	stampedCommitTime string // that commit's time, RFC 3339
)

// BuildInfo returns what the binary knows about its own build.
func BuildInfo() Build {
	b := embeddedBuild()
	if stampedVersion != "" {
		b.Version = stampedVersion
	}
	if stampedCommit != "" {
		b.Commit, b.Modified = stampedCommit, false
	}
	if stampedCommitTime != "" {
		b.CommitTime = stampedCommitTime
	}
	return b
}

// embeddedBuild is what the Go toolchain embedded in the binary.
func embeddedBuild() Build {
	b := Build{Version: "(devel)", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `herald version` prints.
func (b Build) String() string {
	s := "herald " + b.Version
	if b.Commit != "" {
		s += " commit " + b.Commit
		if b.Modified {
			s += " (modified)"
		}
	}
	if b.CommitTime != "" {
		s += " committed " + b.CommitTime
	}
	return fmt.Sprintf("%s %s %s/%s", s, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}

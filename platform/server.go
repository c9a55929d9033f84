package platform

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// ServerConfig holds what the HTTP stack needs beyond the routes.
type ServerConfig struct {
	MaxBody int64            // request body limit in bytes (contract §4: 413 past it)
	Now     func() time.Time // clock for idempotency expiry; time.Now when nil
	Secret  []byte           // seals stored idempotent responses (see LoadSecret)
	// Inbox authenticates /v1/inbox/* by subscriber token instead of API
	// key, and lets /socket.io/ through to check its own; nil serves
	// neither apart.
	Inbox *SubscriberAuth
}

// DefaultMaxBody is the body limit when HERALD_MAX_BODY is not set.
const DefaultMaxBody = 1 << 20

// NewHandler wraps the API routes in mux with Herald's middleware, outermost
// first: one log line per request and panic recovery; /healthz and /readyz,
// which need no key; the body limit; API-key auth; idempotency; and JSON
// 404/405 answers for paths and methods mux does not serve.
func NewHandler(logger *slog.Logger, db *DB, mux *http.ServeMux, cfg ServerConfig) http.Handler {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	keys := &keyring{db: db}
	idem := &idempotency{db: db, now: cfg.Now, started: cfg.Now(), sealer: newSealer(cfg.Secret, "idempotency")}
	api := requireAPIKey(keys, idem.middleware(routeJSON(mux)))

	root := http.NewServeMux()
	root.Handle("GET /healthz", handleHealthz())
	root.Handle("GET /readyz", handleReadyz(db))
	root.Handle("/", limitBody(cfg.MaxBody, api))
	if cfg.Inbox != nil {
		root.Handle("/v1/inbox/", inboxCORS(limitBody(cfg.MaxBody, requireSubscriber(cfg.Inbox, routeJSON(mux)))))
		root.Handle("GET /socket.io/", routeJSON(mux)) // the token is in the query: the socket checks it
	}
	return logRequests(logger, root)
}

func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// routeJSON serves r through mux, but answers unknown paths and methods with
// the JSON error body instead of ServeMux's plain text.
func routeJSON(mux *http.ServeMux) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			notePattern(r.Context(), pattern)
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

// handleHealthz serves GET /healthz: the process is up.
func handleHealthz() http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		return JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// handleReadyz serves GET /readyz: the database answers.
func handleReadyz(db *DB) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			return Errorf(http.StatusServiceUnavailable, "Database unavailable")
		}
		return JSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

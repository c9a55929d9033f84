package platform

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// requestInfo collects what the one log line of a request reports, filled in
// by the layers that learn it: the router (pattern), auth (environment) and
// WriteError (the id and cause of a 500).
type requestInfo struct {
	pattern       string
	environmentID string
	errorID       string
	cause         error
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

func noteEnvironment(ctx context.Context, id string) {
	if info := infoFrom(ctx); info != nil {
		info.environmentID = id
	}
}

func notePattern(ctx context.Context, pattern string) {
	if info := infoFrom(ctx); info != nil {
		info.pattern = pattern
	}
}

func noteFailure(ctx context.Context, errorID string, cause error) {
	if info := infoFrom(ctx); info != nil {
		info.errorID, info.cause = errorID, cause
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests logs one line per request and turns a panic into a 500 with an
// errorId, so no request can take the process down (docs/api.md, "Errors").
// Bodies, keys and credentials are never logged. It also counts the request
// in metrics.
func logRequests(logger *slog.Logger, metrics *Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				if sw.status == 0 {
					WriteError(sw, r, panicError{v})
				} else {
					noteFailure(r.Context(), sqldb.NewID(), panicError{v})
				}
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("pattern", info.pattern),
				slog.Int("status", sw.status),
				slog.Duration("duration", time.Since(start)),
			}
			if info.environmentID != "" {
				attrs = append(attrs, slog.String("environment_id", info.environmentID))
			}
			level := slog.LevelInfo
			if info.errorID != "" {
				level = slog.LevelError
				attrs = append(attrs, slog.String("error_id", info.errorID), slog.Any("error", info.cause))
			}
			logger.LogAttrs(r.Context(), level, "request", attrs...)
			metrics.ObserveRequest(info.pattern, r.Method, sw.status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

type panicError struct{ value any }

func (p panicError) Error() string { return "panic: " + slog.AnyValue(p.value).String() }

// NoteRoute tells the request's log line the pattern that served it and
// the environment it acted in ("" for none), for handlers served apart
// from the API's mux (the console).
func NoteRoute(ctx context.Context, pattern, environmentID string) {
	notePattern(ctx, pattern)
	if environmentID != "" {
		noteEnvironment(ctx, environmentID)
	}
}

// NoteFailure records an unexpected error for the request's log line,
// logged at Error with its cause, and returns the id to show the user in
// its place: what WriteError does for a 500, for a handler that answers
// in HTML.
func NoteFailure(ctx context.Context, cause error) (errorID string) {
	errorID = sqldb.NewID()
	noteFailure(ctx, errorID, cause)
	return errorID
}

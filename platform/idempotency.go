package platform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

const (
	idempotencyHeader = "Idempotency-Key"
	idempotencyTTL    = 24 * time.Hour
	// On SQLite, a request still marked running after this long belongs to
	// a process that died mid-request; its key is free to be used again. A
	// shared database asks the owner's heartbeat instead (claim).
	idempotencyStale  = 5 * time.Minute
	maxIdempotencyKey = 255
)

// idempotency implements the "Idempotency keys" section of docs/api.md: a
// POST, PUT, PATCH or DELETE carrying an Idempotency-Key runs once per
// environment and key; repeats replay the stored answer. The claim is one
// INSERT … ON CONFLICT, so of many concurrent requests with one key exactly
// one runs: on SQLite they queue on the single writer connection, on
// PostgreSQL on the key's row.
type idempotency struct {
	db        *sqldb.DB
	sealer    *sealer // stored bodies may hold decrypted credentials
	now       func() time.Time
	started   time.Time    // a key still running from before this was made belongs to a dead process
	lastSweep atomic.Int64 // unix seconds of the last expired-row sweep
}

// pendingAnswer is a request's claimed key, carried in its context so that
// its handler can record the answer with the request's effect
// (IdempotentAnswer).
type pendingAnswer struct {
	s        *idempotency
	env, key string
}

type pendingAnswerKey struct{}

func (s *idempotency) middleware(next http.Handler) http.Handler {
	return Handle(func(w http.ResponseWriter, r *http.Request) error {
		key := r.Header.Get(idempotencyHeader)
		if key == "" {
			return serve(next, w, r)
		}
		if len(key) > maxIdempotencyKey {
			return BadRequest("idempotencyKey %q has exceeded the maximum allowed length of %d characters", key, maxIdempotencyKey)
		}
		if p := textProblem(key); p != "" {
			return BadRequest("idempotencyKey %s", p) // it is stored as text
		}
		w.Header().Set(idempotencyHeader, key)
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			return serve(next, w, r) // reads are never stored: they stay cheap (docs/api.md, "What strict clients check")
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return readError(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		return s.once(w, r, next, key, fingerprint(r, body))
	})
}

func serve(next http.Handler, w http.ResponseWriter, r *http.Request) error {
	next.ServeHTTP(w, r)
	return nil
}

// fingerprint identifies a request by method, path with query, and body.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.RequestURI())
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *idempotency) once(w http.ResponseWriter, r *http.Request, next http.Handler, key, print string) error {
	ctx := r.Context()
	env := TenantFrom(ctx).EnvironmentID
	s.sweep(ctx)
	claimed, err := s.claim(ctx, env, key, print)
	if err != nil {
		return err
	}
	if !claimed {
		return s.replay(ctx, w, env, key, print)
	}
	r = r.WithContext(context.WithValue(ctx, pendingAnswerKey{}, &pendingAnswer{s: s, env: env, key: key}))
	rec := &recorder{statusWriter: statusWriter{ResponseWriter: w}}
	completed := false
	defer func() {
		// Only completed answers are kept (docs/api.md, "Idempotency keys"): a 5xx
		// or a panic frees the key so a retry can succeed.
		if !completed {
			s.release(context.WithoutCancel(ctx), env, key)
		}
	}()
	next.ServeHTTP(rec, r)
	if rec.status >= 500 || rec.status == 0 {
		return nil
	}
	completed = true
	return s.store(context.WithoutCancel(ctx), env, key, rec)
}

// IdempotentAnswer returns a write that records v, encoded as JSON writes
// it, as the answer with status to the request in ctx, for the handler to
// run in the transaction that makes the request's effect. Otherwise a crash
// after that commit and before the middleware records the answer leaves the
// key running, and a retry runs the request a second time. It returns nil
// when the request carries no Idempotency-Key.
func IdempotentAnswer(ctx context.Context, status int, v any) (func(context.Context, *sql.Tx) error, error) {
	p, _ := ctx.Value(pendingAnswerKey{}).(*pendingAnswer)
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Sealed here, in the request's goroutine, rather than inside the
	// transaction, which holds the one writer.
	body := p.s.sealer.seal(append(b, '\n'), []byte(p.env+"\x00"+p.key))
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, storeAnswerSQL, status, "application/json", body, p.env, p.key)
		return err
	}, nil
}

// storeAnswerSQL records a running key's answer. A key whose handler
// recorded it already (IdempotentAnswer) is left as it is.
const storeAnswerSQL = `
		UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, body = ?
		WHERE environment_id = ? AND key = ? AND state = 'running'`

// claim inserts the running marker and reports whether this request owns
// the key. A key left running is free again when its owner is gone. On
// SQLite one Herald process uses a database: a key is free once stale, or
// at once when it was claimed before this process started, since the
// process that claimed it has died. On a shared database (PostgreSQL) the
// key names its instance, and is free only once that instance's heartbeat
// is stale (this instance is alive, whether it beats or not): of
// concurrent requests with one key sent to several instances,
// exactly one runs, and a starting instance takes no key another is
// running.
func (s *idempotency) claim(ctx context.Context, env, key, print string) (bool, error) {
	now := s.now()
	var res sql.Result
	var err error
	if s.db.Shared() {
		res, err = s.db.ExecContext(ctx, `
		INSERT INTO idempotency_keys (environment_id, key, fingerprint, state, created_at, expires_at, owner)
		VALUES (?, ?, ?, 'running', ?, ?, ?)
		ON CONFLICT (environment_id, key) DO UPDATE SET
			fingerprint = excluded.fingerprint, state = 'running', status = 0, content_type = '',
			body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at, owner = excluded.owner
		WHERE idempotency_keys.expires_at <= excluded.created_at
		   OR (idempotency_keys.state = 'running' AND idempotency_keys.owner <> excluded.owner
		       AND NOT `+sqldb.OwnerAliveSQL("idempotency_keys.owner")+`)`,
			env, key, print, sqldb.FormatTime(now), sqldb.FormatTime(now.Add(idempotencyTTL)), s.db.Instance(), sqldb.LiveSince(now))
	} else {
		res, err = s.db.ExecContext(ctx, `
		INSERT INTO idempotency_keys (environment_id, key, fingerprint, state, created_at, expires_at)
		VALUES (?, ?, ?, 'running', ?, ?)
		ON CONFLICT (environment_id, key) DO UPDATE SET
			fingerprint = excluded.fingerprint, state = 'running', status = 0, content_type = '',
			body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= excluded.created_at
		   OR (idempotency_keys.state = 'running' AND (idempotency_keys.created_at <= ? OR idempotency_keys.created_at < ?))`,
			env, key, print, sqldb.FormatTime(now), sqldb.FormatTime(now.Add(idempotencyTTL)), sqldb.FormatTime(now.Add(-idempotencyStale)),
			sqldb.FormatTime(s.started))
	}
	if err != nil {
		return false, fmt.Errorf("claim idempotency key: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *idempotency) replay(ctx context.Context, w http.ResponseWriter, env, key, print string) error {
	var stored, state, contentType string
	var status int
	var body []byte
	err := s.db.QueryRowContext(ctx, `
		SELECT fingerprint, state, status, content_type, body FROM idempotency_keys
		WHERE environment_id = ? AND key = ?`, env, key).Scan(&stored, &state, &status, &contentType, &body)
	if errors.Is(err, sql.ErrNoRows) {
		// The first request failed and released the key between our claim
		// and this read: the client may simply retry.
		return s.busy(key)
	}
	if err != nil {
		return fmt.Errorf("read idempotency key: %w", err)
	}
	if stored != print {
		return &Error{
			Status:  http.StatusUnprocessableEntity,
			Message: fmt.Sprintf("Request with key %q is being reused for a different request", key),
			Fields: map[string]FieldError{"idempotency-key": {
				Messages: []string{"was already used for a request with another method, path or body"}, Value: key}},
		}
	}
	if state == "running" {
		return s.busy(key)
	}
	body, err = s.sealer.open(body, []byte(env+"\x00"+key))
	if err != nil {
		return fmt.Errorf("open stored idempotent response: %w", err)
	}
	w.Header().Set("Idempotency-Replay", "true")
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

func (s *idempotency) busy(key string) error {
	return &Error{
		Status:  http.StatusConflict,
		Message: fmt.Sprintf("Request with key %q is currently being processed. Please retry after 1 second", key),
		Header:  http.Header{"Retry-After": {"1"}},
	}
}

func (s *idempotency) store(ctx context.Context, env, key string, rec *recorder) error {
	_, err := s.db.ExecContext(ctx, storeAnswerSQL,
		rec.status, rec.Header().Get("Content-Type"), s.sealer.seal(rec.body.Bytes(), []byte(env+"\x00"+key)), env, key)
	if err != nil {
		// The answer has been sent; failing to keep it only costs a replay.
		noteFailure(ctx, sqldb.NewID(), fmt.Errorf("store idempotent response: %w", err))
	}
	return nil
}

func (s *idempotency) release(ctx context.Context, env, key string) {
	if s.db.Shared() {
		// Only this instance's claim: another may have taken the key over
		// while this one was thought dead.
		s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE environment_id = ? AND key = ? AND state = 'running' AND owner = ?`,
			env, key, s.db.Instance())
		return
	}
	s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE environment_id = ? AND key = ? AND state = 'running'`, env, key)
}

// sweep deletes expired keys, at most once a minute, so the table stays the
// size of one day's traffic without a background goroutine.
func (s *idempotency) sweep(ctx context.Context) {
	now := s.now()
	last := s.lastSweep.Load()
	if now.Unix()-last < 60 || !s.lastSweep.CompareAndSwap(last, now.Unix()) {
		return
	}
	s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, sqldb.FormatTime(now))
}

// recorder passes a response through while keeping a copy to store.
type recorder struct {
	statusWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.statusWriter.Write(b)
}

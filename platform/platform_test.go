package platform_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// errorBody is the error shape (docs/api.md, "Errors"), declared here so a
// renamed field fails.
type errorBody struct {
	StatusCode int    `json:"statusCode"`
	Timestamp  string `json:"timestamp"`
	Path       string `json:"path"`
	Message    string `json:"message"`
	ErrorID    string `json:"errorId"`
	Errors     map[string]struct {
		Messages []string `json:"messages"`
		Value    any      `json:"value"`
	} `json:"errors"`
}

// notes is a tiny resource for exercising the stack: it records which
// environment created each note, counts executions, and can be told to block
// or fail.
type notes struct {
	mu      sync.Mutex
	byID    map[string]string // note id → environment id
	runs    atomic.Int32
	release chan struct{}
}

func newNotesServer(t *testing.T) (*platformtest.Server, *notes) {
	n := &notes{byID: map[string]string{}}
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		type createNote struct {
			Title    string   `json:"title" validate:"required,max=20"`
			Channel  string   `json:"channel" validate:"omitempty,oneof=email sms"`
			Tags     []string `json:"tags" validate:"max=2,dive,required"`
			Settings struct {
				Limit int `json:"limit" validate:"gte=0,lte=10"`
			} `json:"settings"`
		}
		mux.Handle("POST /v1/notes", platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
			req, err := platform.Decode[createNote](r)
			if err != nil {
				return err
			}
			n.runs.Add(1)
			if n.release != nil {
				<-n.release
			}
			if req.Title == "boom" {
				return fmt.Errorf("disk on fire")
			}
			if req.Title == "panic" {
				panic("handler bug")
			}
			id := sqldb.NewID()
			if req.Title == "crash" {
				// The note's effect commits with its answer, and then the
				// process dies before the middleware records the answer.
				answer, err := platform.IdempotentAnswer(r.Context(), http.StatusCreated, map[string]string{"_id": id, "title": req.Title})
				if err != nil {
					return err
				}
				if answer != nil {
					if err := app.DB.Tx(r.Context(), func(tx *sql.Tx) error { return answer(r.Context(), tx) }); err != nil {
						return err
					}
				}
				panic("process died")
			}
			n.mu.Lock()
			n.byID[id] = platform.TenantFrom(r.Context()).EnvironmentID
			n.mu.Unlock()
			return platform.JSON(w, http.StatusCreated, map[string]string{"_id": id, "title": req.Title})
		}))
		mux.Handle("GET /v1/notes/{id}", platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
			n.mu.Lock()
			env, ok := n.byID[r.PathValue("id")]
			n.mu.Unlock()
			if !ok || env != platform.TenantFrom(r.Context()).EnvironmentID {
				return platform.NotFound("Note %s not found", r.PathValue("id"))
			}
			return platform.JSON(w, http.StatusOK, map[string]string{"_id": r.PathValue("id")})
		}))
	})
	return srv, n
}

func TestAuth(t *testing.T) {
	srv, _ := newNotesServer(t)
	for _, tc := range []struct {
		name    string
		header  string
		status  int
		message string
	}{
		{"OK", "ApiKey " + platformtest.DevKey, 200, ""},
		{"ErrMissingHeader", "", 401, "Missing authorization header"},
		{"ErrWrongScheme", "Bearer " + platformtest.DevKey, 401, `Invalid authentication scheme: "Bearer"`},
		{"ErrEmptyKey", "ApiKey ", 401, "Unauthorized"},
		{"ErrUnknownKey", "ApiKey nope", 401, "API Key not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.WithKey("").Do(t, "GET", "/v1/environments", "", "Authorization", tc.header)
			is.Equal(res.Status, tc.status) // status for this Authorization header
			if tc.status == 401 {
				var body errorBody
				res.Decode(t, &body)
				is.Equal(body.StatusCode, 401)                               // statusCode in body
				is.Equal(body.Message, tc.message)                           // reference platform's message
				is.Equal(body.Path, "/v1/environments")                      // path echoed
				is.True(strings.HasSuffix(body.Timestamp, "Z"))              // ISO timestamp
				is.Equal(res.Header.Get("Content-Type"), "application/json") // JSON error
			}
		})
	}
}

func TestHealth_NoKeyNeeded(t *testing.T) {
	is := is.New(t)
	srv, _ := newNotesServer(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		res := srv.Dev.WithKey("").Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // health checks answer without a key
	}
}

func TestEnvironments_List(t *testing.T) {
	is := is.New(t)
	srv, _ := newNotesServer(t)
	var envs []struct {
		ID             string  `json:"_id"`
		Name           string  `json:"name"`
		Identifier     string  `json:"identifier"`
		OrganizationID string  `json:"_organizationId"`
		ParentID       *string `json:"_parentId"`
		APIKeys        []struct {
			Key    string `json:"key"`
			UserID string `json:"_userId"`
		} `json:"apiKeys"`
	}
	res := srv.Prod.Do(t, "GET", "/v1/environments", "")
	is.Equal(res.Status, 200) // environments listed
	res.Decode(t, &envs)
	is.Equal(len(envs), 2)                                                                                 // Development and Production
	is.Equal(envs[0].Name, "Development")                                                                  // first environment
	is.Equal(envs[1].Name, "Production")                                                                   // second environment
	is.Equal(envs[0].ID, srv.App.Development.ID)                                                           // ids match bootstrap
	is.True(envs[0].ParentID == nil)                                                                       // Development has no parent
	is.Equal(*envs[1].ParentID, envs[0].ID)                                                                // Production's parent is Development
	is.Equal(len(envs[1].APIKeys), 1)                                                                      // one key each
	is.True(!strings.Contains(string(res.Body), platformtest.ProdKey))                                     // keys are never shown
	is.True(strings.HasSuffix(envs[1].APIKeys[0].Key, platformtest.ProdKey[len(platformtest.ProdKey)-4:])) // last four shown
	is.True(sqldb.IsID(envs[1].APIKeys[0].UserID))                                                         // owned by the system user
}

func TestTenant_Isolation(t *testing.T) {
	is := is.New(t)
	srv, _ := newNotesServer(t)
	var created struct {
		ID string `json:"_id"`
	}
	res := srv.Prod.Do(t, "POST", "/v1/notes", `{"title":"prod only"}`)
	is.Equal(res.Status, 201) // created with the Production key
	res.Decode(t, &created)
	is.Equal(srv.Prod.Do(t, "GET", "/v1/notes/"+created.ID, "").Status, 200) // Production sees it
	is.Equal(srv.Dev.Do(t, "GET", "/v1/notes/"+created.ID, "").Status, 404)  // Development does not
}

func TestDecode(t *testing.T) {
	srv, _ := newNotesServer(t)
	for _, tc := range []struct {
		name        string
		body        string
		contentType string
		status      int
		field       string // expected key in errors, for 422
	}{
		{"OK", `{"title":"hi","extra":"ignored"}`, "application/json", 201, ""},
		{"ErrMalformed", `{"title":`, "application/json", 400, ""},
		{"ErrNotJSON", `title=hi`, "application/x-www-form-urlencoded", 415, ""},
		{"ErrEmpty", ``, "application/json", 400, ""},
		{"ErrTrailing", `{"title":"a"} {"title":"b"}`, "application/json", 400, ""},
		{"ErrMissingRequired", `{}`, "application/json", 422, "title"},
		{"ErrWrongType", `{"title":5}`, "application/json", 422, "title"},
		{"ErrNestedWrongType", `{"title":"a","settings":{"limit":"x"}}`, "application/json", 422, "settings.limit"},
		{"ErrNestedRange", `{"title":"a","settings":{"limit":11}}`, "application/json", 422, "settings.limit"},
		{"ErrEnum", `{"title":"a","channel":"fax"}`, "application/json", 422, "channel"},
		{"ErrArrayItem", `{"title":"a","tags":["x",""]}`, "application/json", 422, "tags.1"},
		{"ErrTooLong", `{"title":"` + strings.Repeat("x", 21) + `"}`, "application/json", 422, "title"},
		{"OK nested as deep as allowed", `{"title":"a","extra":` + nested(platform.MaxJSONDepth-1) + `}`, "application/json", 201, ""},
		{"ErrNestedTooDeep", `{"title":"a","extra":` + nested(platform.MaxJSONDepth) + `}`, "application/json", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v1/notes", "", "Content-Type", tc.contentType)
			if tc.body != "" {
				res = srv.Dev.Do(t, "POST", "/v1/notes", tc.body, "Content-Type", tc.contentType)
			}
			is.Equal(res.Status, tc.status) // status for this body
			if tc.status == 422 {
				var body errorBody
				res.Decode(t, &body)
				_, ok := body.Errors[tc.field]
				is.True(ok)                                      // errors keyed by JSON path
				is.True(len(body.Errors[tc.field].Messages) > 0) // with a message
				if tc.field == "title" && strings.Contains(tc.body, "5") {
					is.Equal(body.Errors[tc.field].Value, float64(5)) // and the value sent (docs/api.md, "Errors")
				}
			}
		})
	}
}

// nested is a JSON value nesting arrays and objects depth levels deep.
func nested(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString([]string{`[`, `{"k[":`}[i%2])
	}
	b.WriteString(`"}]"`)
	for i := depth - 1; i >= 0; i-- {
		b.WriteString([]string{`]`, `}`}[i%2])
	}
	return b.String()
}

func TestBodyLimit(t *testing.T) {
	is := is.New(t)
	srv, _ := newNotesServer(t)
	big := `{"title":"` + strings.Repeat("x", platform.DefaultMaxBody) + `"}`
	res := srv.Dev.Do(t, "POST", "/v1/notes", big)
	is.Equal(res.Status, 413) // body over the limit
	res = srv.Dev.Do(t, "POST", "/v1/notes", big, "Idempotency-Key", "big-1")
	is.Equal(res.Status, 413) // also when the idempotency layer reads the body
}

func TestRouting_JSONErrors(t *testing.T) {
	is := is.New(t)
	srv, _ := newNotesServer(t)
	var body errorBody
	res := srv.Dev.Do(t, "GET", "/v1/nothing-here", "")
	is.Equal(res.Status, 404) // unknown route
	res.Decode(t, &body)
	is.Equal(body.StatusCode, 404) // JSON body, not ServeMux text
	res = srv.Dev.Do(t, "DELETE", "/v1/environments", "")
	is.Equal(res.Status, 405) // known path, wrong method
	res.Decode(t, &body)
	is.Equal(body.StatusCode, 405)                            // JSON body
	is.True(strings.Contains(res.Header.Get("Allow"), "GET")) // Allow names the methods
}

func TestInternalErrors(t *testing.T) {
	srv, _ := newNotesServer(t)
	for _, title := range []string{"boom", "panic"} {
		t.Run(title, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"`+title+`"}`)
			is.Equal(res.Status, 500) // a bug is a 500
			var body errorBody
			res.Decode(t, &body)
			is.True(sqldb.IsID(body.ErrorID))                            // with an errorId to quote
			is.True(!strings.Contains(string(res.Body), "disk on fire")) // the cause is not sent
		})
	}
}

func TestIdempotency(t *testing.T) {
	t.Run("OKReplay", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		first := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"once"}`, "Idempotency-Key", "k1")
		is.Equal(first.Status, 201)                          // first run
		is.Equal(first.Header.Get("Idempotency-Key"), "k1")  // key echoed
		is.Equal(first.Header.Get("Idempotency-Replay"), "") // not a replay
		again := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"once"}`, "Idempotency-Key", "k1")
		is.Equal(again.Status, 201)                              // same status replayed
		is.Equal(string(again.Body), string(first.Body))         // same body replayed
		is.Equal(again.Header.Get("Idempotency-Replay"), "true") // marked as replay
		is.Equal(n.runs.Load(), int32(1))                        // handler ran once
		var stored []byte
		err := srv.App.DB.QueryRowContext(context.Background(), `SELECT body FROM idempotency_keys WHERE key = 'k1'`).Scan(&stored)
		is.NoErr(err)                                      // the response is kept
		is.True(!bytes.Contains(stored, []byte(`"once"`))) // sealed, not plaintext
	})
	t.Run("OKScopedToEnvironment", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"a"}`, "Idempotency-Key", "shared").Status, 201)  // Development runs
		is.Equal(srv.Prod.Do(t, "POST", "/v1/notes", `{"title":"a"}`, "Idempotency-Key", "shared").Status, 201) // Production runs its own
		is.Equal(n.runs.Load(), int32(2))                                                                       // one run per environment
	})
	t.Run("OKClientErrorsReplayed", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":""}`, "Idempotency-Key", "bad").Status, 422) // invalid
		res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":""}`, "Idempotency-Key", "bad")
		is.Equal(res.Status, 422)                              // the 4xx is stored and replayed
		is.Equal(res.Header.Get("Idempotency-Replay"), "true") // as a replay
		is.Equal(n.runs.Load(), int32(0))                      // decode failed before the handler's work
	})
	t.Run("OKServerErrorsNotStored", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"boom"}`, "Idempotency-Key", "k5").Status, 500) // fails
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"boom"}`, "Idempotency-Key", "k5").Status, 500) // runs again
		is.Equal(n.runs.Load(), int32(2))                                                                     // a 5xx frees the key
	})
	t.Run("OKAnswerRecordedWithTheEffect", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"crash"}`, "Idempotency-Key", "k6").Status, 500) // died after its commit
		res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"crash"}`, "Idempotency-Key", "k6")
		is.Equal(res.Status, 201)                              // the answer recorded in the effect's transaction
		is.Equal(res.Header.Get("Idempotency-Replay"), "true") // is replayed
		is.True(strings.Contains(string(res.Body), `"title":"crash"`))
		is.Equal(n.runs.Load(), int32(1)) // and the request did not run again
	})
	t.Run("OKRunningKeyOfADeadProcessIsFree", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		body := `{"title":"again"}`
		_, err := srv.App.DB.ExecContext(context.Background(), `
			INSERT INTO idempotency_keys (environment_id, key, fingerprint, state, created_at, expires_at)
			VALUES (?, 'k7', 'x', 'running', ?, ?)`, srv.App.Development.ID,
			sqldb.FormatTime(srv.App.Clock.Now().Add(-time.Second)), sqldb.FormatTime(srv.App.Clock.Now().Add(time.Hour)))
		is.NoErr(err)
		res := srv.Dev.Do(t, "POST", "/v1/notes", body, "Idempotency-Key", "k7")
		is.Equal(res.Status, 201)         // a key claimed before the server started is not waited for
		is.Equal(n.runs.Load(), int32(1)) // the request ran
	})
	t.Run("ErrOtherBody", func(t *testing.T) {
		is := is.New(t)
		srv, n := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"a"}`, "Idempotency-Key", "k2").Status, 201) // first
		res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"b"}`, "Idempotency-Key", "k2")
		is.Equal(res.Status, 422) // key reused for another body
		var body errorBody
		res.Decode(t, &body)
		_, ok := body.Errors["idempotency-key"]
		is.True(ok)                       // errors names the key
		is.Equal(n.runs.Load(), int32(1)) // nothing ran twice
	})
	t.Run("ErrTooLong", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newNotesServer(t)
		res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"a"}`, "Idempotency-Key", strings.Repeat("k", 256))
		is.Equal(res.Status, 400) // over 255 characters
	})
	t.Run("OKGetNotStored", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newNotesServer(t)
		is.Equal(srv.Dev.Do(t, "GET", "/v1/environments", "", "Idempotency-Key", "g").Status, 200)        // GET runs
		is.Equal(srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"a"}`, "Idempotency-Key", "g").Status, 201) // key still free for a write
		var n int
		err := srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM idempotency_keys`).Scan(&n)
		is.NoErr(err)  // count stored keys
		is.Equal(n, 1) // only the POST was stored
	})
}

func TestIdempotency_Concurrent(t *testing.T) {
	is := is.New(t)
	srv, n := newNotesServer(t)
	n.release = make(chan struct{})
	const clients = 20
	statuses := make(chan int, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"race"}`, "Idempotency-Key", "same")
			statuses <- res.Status
		}()
	}
	// The winner blocks in the handler; every other request must answer
	// without waiting for it: 409 while it runs.
	conflicts := 0
	deadline := time.After(10 * time.Second)
	for conflicts < clients-1 {
		select {
		case s := <-statuses:
			is.Equal(s, 409) // the others see the first still running
			conflicts++
		case <-deadline:
			t.Fatalf("only %d of %d concurrent requests answered", conflicts, clients-1)
		}
	}
	close(n.release)
	wg.Wait()
	is.Equal(<-statuses, 201)         // the winner completes
	is.Equal(n.runs.Load(), int32(1)) // exactly one execution
	res := srv.Dev.Do(t, "POST", "/v1/notes", `{"title":"race"}`, "Idempotency-Key", "same")
	is.Equal(res.Header.Get("Idempotency-Replay"), "true") // later requests replay
	var note struct {
		Title string `json:"title"`
	}
	is.NoErr(json.Unmarshal(res.Body, &note)) // replayed body is the note
	is.Equal(note.Title, "race")              // of the one execution
}

func TestMetrics_Gauge(t *testing.T) {
	is := is.New(t)
	m := platform.NewMetrics(nil)
	sockets := 0.0
	is.NoErr(m.Gauge("herald_inbox_sockets", "Live inbox sockets.", func() float64 { return sockets })) // a part registers its level
	is.True(m.Gauge("herald_inbox_sockets", "again", func() float64 { return 0 }) != nil)               // a name is registered once
	sockets = 3
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	is.True(strings.Contains(string(body), "herald_inbox_sockets 3")) // read at the scrape

	var none *platform.Metrics
	none.ObserveRequest("GET /x", "GET", 200, 0)                // a nil registry ignores reports
	is.NoErr(none.Gauge("x", "y", func() float64 { return 0 })) // and registrations
	none.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "x", Help: "y"}))
}

// BenchmarkAuth_RevocationCheck compares what the keyring pays to notice a
// revocation made by another process: the one query it runs at most every
// 100 ms (the count of revocations), against checking the key itself on
// every request, and against an authenticated request as a whole.
func BenchmarkAuth_RevocationCheck(b *testing.B) {
	srv := platformtest.NewServer(b, nil)
	db := srv.App.DB
	hash := platform.HashAPIKey(platformtest.DevKey)
	b.Run("RevocationCountQuery", func(b *testing.B) {
		for b.Loop() {
			var n int64
			if err := db.QueryRowContext(context.Background(), `SELECT CAST(value AS INTEGER) FROM settings WHERE name = 'api_keys_revoked'`).Scan(&n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("KeyQueryPerRequest", func(b *testing.B) {
		for b.Loop() {
			var ok bool
			if err := db.QueryRowContext(context.Background(), `SELECT revoked_at IS NULL FROM api_keys WHERE hash = ?`, hash).Scan(&ok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AuthenticatedRequest", func(b *testing.B) {
		h := srv.Config.Handler
		for b.Loop() {
			req := httptest.NewRequest("GET", "/v1/nothing-here", nil)
			req.Header.Set("Authorization", "ApiKey "+platformtest.DevKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusNotFound {
				b.Fatal(w.Code)
			}
		}
	})
}

// TestDocs_RendererByAcceptEncoding: the renderer's bundle, stored gzipped,
// reaches a client that takes gzip as it is and one that does not
// inflated, the same script both ways.
func TestDocs_RendererByAcceptEncoding(t *testing.T) {
	db := sqldbtest.NewDB(t)
	hs := httptest.NewServer(platform.NewHandler(slog.New(slog.DiscardHandler), db, http.NewServeMux(),
		platform.ServerConfig{OpenAPI: []byte(`{}`)}))
	defer hs.Close()
	fetch := func(t *testing.T, acceptEncoding string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", hs.URL+"/docs/redoc.standalone.js", nil)
		req.Header.Set("Accept-Encoding", acceptEncoding) // set, so the client does not inflate on its own
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	is := is.New(t)
	res, plain := fetch(t, "identity")
	is.Equal(res.StatusCode, 200)                                              // served
	is.Equal(res.Header.Get("Content-Encoding"), "")                           // inflated for a client without gzip
	is.True(bytes.Contains(plain[:200], []byte("license information")))        // the script itself
	is.Equal(res.Header.Get("Content-Type"), "text/javascript; charset=utf-8") // as a script
	for _, accept := range []string{"gzip", "br, gzip;q=0.5", "*"} {
		res, packed := fetch(t, accept)
		is.Equal(res.Header.Get("Content-Encoding"), "gzip") // gzipped for a client that takes it
		zr, err := gzip.NewReader(bytes.NewReader(packed))
		is.NoErr(err) // a gzip stream
		inflated, err := io.ReadAll(zr)
		is.NoErr(err)                         // that inflates
		is.True(bytes.Equal(inflated, plain)) // to the same script
	}
	res, _ = fetch(t, "gzip;q=0, br")
	is.Equal(res.Header.Get("Content-Encoding"), "") // gzip refused by a weight of zero
}

package apptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// benchKey is the Development key of a Bench.
const benchKey = "bench-development-key-000000000000000"

// Bench is Herald in-process on a file database, as bench/ runs it (on a
// fresh PostgreSQL database with TEST_DATABASE_URL), for a benchmark: requests reach the handler with no network between, so a CPU
// profile shows what the server itself spends. It holds bench/'s one-step
// in-app workflow "bench-inbox".
type Bench struct {
	DB      *sqldb.DB
	handler http.Handler
}

// StartBench starts a Bench under the collector settings of herald serve
// (ServerGC); it stops when the benchmark ends.
func StartBench(b *testing.B) *Bench {
	ServerGC(b)
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(b.TempDir(), "trigger.db")
	if sqldbtest.OnPostgres() {
		path = sqldbtest.NewPostgresURL(b)
	}
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		b.Fatal(err)
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: benchKey}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	secret := []byte("trigger-bench-secret-0123456789abcdef0")
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db.KeepAnalysed(ctx, logger) // as herald serve does
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db, nil)
	// Sends may reach loopback, where a benchmark runs its providers.
	herald, err := app.Start(ctx, mux, app.Deps{DB: db, Logger: logger, Secret: secret, Now: time.Now, Environments: envs,
		Outbound: platformtest.Loopback})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		herald.Stop(context.Background())
		db.Close()
	})
	bench := &Bench{DB: db, handler: platform.NewHandler(logger, db, mux, platform.ServerConfig{Secret: secret,
		Limits: platform.RateLimits{Write: -1}})} // measured past the per-key write limit
	wf := `{"name":"Bench inbox","workflowId":"bench-inbox","active":true,"steps":[{"name":"Inbox","stepId":"inbox","type":"in_app",
		"controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}}]}`
	if code := bench.Post("/v2/workflows", []byte(wf)); code != http.StatusCreated {
		b.Fatalf("create workflow: %d", code)
	}
	return bench
}

// Post sends body to path with the Development key and answers the status.
func (bench *Bench) Post(path string, body []byte) int { return bench.do("POST", path, body) }

// Get reads path with the Development key and answers the status.
func (bench *Bench) Get(path string) int { return bench.do("GET", path, nil) }

func (bench *Bench) do(method, path string, body []byte) int {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "ApiKey "+benchKey)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	bench.handler.ServeHTTP(rec, req)
	return rec.Code
}

// AddSubscribers creates subscribers r0 to r(n-1).
func (bench *Bench) AddSubscribers(b *testing.B, n int) {
	for i := range n {
		if code := bench.Post("/v1/subscribers", fmt.Appendf(nil, `{"subscriberId":"r%d","firstName":"R%d"}`, i, i)); code != http.StatusCreated {
			b.Fatalf("create subscriber: %d", code)
		}
	}
}

// Count answers a count(*) query.
func (bench *Bench) Count(b *testing.B, query string) int64 {
	var n int64
	bench.Scan(b, query, &n)
	return n
}

// Scan reads the one row query answers into dest.
func (bench *Bench) Scan(b *testing.B, query string, dest ...any) {
	if err := bench.DB.QueryRowContext(context.Background(), query).Scan(dest...); err != nil {
		b.Fatal(err)
	}
}

// ServerGC runs b under the collector settings herald serve sets
// (app.TuneGC). At Go's default the collector runs about three times
// as often, and an in-process profile would overstate its share.
func ServerGC(b testing.TB) {
	percent := debug.SetGCPercent(-1) // reads the setting, restored at once
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	app.TuneGC(os.Getenv)
	b.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// BenchSize reads a benchmark's size from the environment variable name,
// for profiling at scale; def when it is unset or not a positive number.
func BenchSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

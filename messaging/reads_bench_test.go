package messaging_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// readBenchKey is the Development key of the read benchmark's database.
const readBenchKey = "read-bench-development-key-0000000000"

// readBenchServer is the whole application, wired as `herald serve` wires
// it, on a file database seeded like bench/'s read scenarios, so a CPU
// profile of BenchmarkReads shows what one read request costs in-process.
type readBenchServer struct {
	handler     http.Handler
	subscribers int
	app         string // the Development environment's applicationIdentifier, for inbox sessions
}

var (
	readBenchOnce sync.Once
	readBench     *readBenchServer
	readBenchErr  error
)

// startReadBench seeds (once per process) a database in a temporary
// directory and builds the handler on it. HERALD_READ_BENCH_DB names a file
// to keep the seeded database in instead: a later run finds it and skips the
// seeding (minutes at a million messages), so a change can be profiled
// against the same data. The sizes must then be those it was seeded with. The subscribers and messages are
// bench/'s: subscriberId s%07d, email user%07d@bench.example, firstName
// Given%d, lastName Family%04d grouping them by a thousand.
func startReadBench(b *testing.B) *readBenchServer {
	readBenchOnce.Do(func() {
		readBench, readBenchErr = seedReadBench(b,
			apptest.BenchSize("HERALD_READ_BENCH_SUBSCRIBERS", 5_000), apptest.BenchSize("HERALD_READ_BENCH_MESSAGES", 20_000))
	})
	if readBenchErr != nil {
		b.Fatal(readBenchErr)
	}
	return readBench
}

func seedReadBench(b *testing.B, nSubs, nMessages int) (*readBenchServer, error) {
	ctx := context.Background()
	path, seeded := os.Getenv("HERALD_READ_BENCH_DB"), false
	if path == "" {
		dir, err := os.MkdirTemp("", "herald-read-bench-")
		if err != nil {
			return nil, err
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		path = filepath.Join(dir, "bench.db")
	} else if _, err := os.Stat(path); err == nil {
		seeded = true
	}
	// HERALD_MMAP_SIZE compares the readers' mapping caps (docs/memory.md).
	db, err := sqldb.Open(ctx, path, sqldb.WithMmapSize(int64(apptest.BenchSize("HERALD_MMAP_SIZE", sqldb.DefaultMmapSize))))
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		return nil, err
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: readBenchKey}, io.Discard)
	if err != nil {
		return nil, err
	}
	tenant := envs[0].Tenant()
	if !seeded {
		if err := seedReadData(ctx, db, tenant, nSubs, nMessages); err != nil {
			return nil, err
		}
	}

	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	wctx, cancel := context.WithCancel(ctx)
	b.Cleanup(cancel)
	secret := []byte("read-bench-secret-0123456789abcdef0123")
	inbox := platform.NewSubscriberAuth(db, secret, time.Now)
	metrics := platform.NewMetrics(db)
	mux := http.NewServeMux()
	platform.AddRoutes(mux, db, inbox)
	_, err = app.Start(wctx, mux, app.Deps{DB: db, Logger: logger, Secret: secret,
		Now: time.Now, Environments: envs, Inbox: inbox, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	// As `herald serve` serves, with the metrics every request updates, but
	// sessions unlimited: the benchmark opens hundreds from one address.
	h := platform.NewHandler(logger, db, mux, platform.ServerConfig{Secret: secret, Metrics: metrics, Inbox: inbox,
		Limits: platform.RateLimits{Sessions: 1e9, NewSessions: 1e9}})
	return &readBenchServer{handler: h, subscribers: nSubs, app: envs[0].Identifier}, nil
}

// get serves one GET in-process and fails the benchmark unless it is a 200.
func (s *readBenchServer) get(b *testing.B, path string) []byte {
	return s.getAs(b, path, "ApiKey "+readBenchKey)
}

// getAs is get with the Authorization header auth.
func (s *readBenchServer) getAs(b *testing.B, path, auth string) []byte {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// inboxTokens opens an inbox session for each of the first n subscribers
// and returns their "Bearer <token>" headers.
func (s *readBenchServer) inboxTokens(b *testing.B, n int) []string {
	out := make([]string, 0, n)
	for i := range min(n, s.subscribers) {
		body := fmt.Sprintf(`{"applicationIdentifier":%q,"subscriber":{"subscriberId":"s%07d"}}`, s.app, i)
		req := httptest.NewRequest("POST", "/v1/inbox/session", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		var session struct {
			Data struct {
				Token string `json:"token"`
			} `json:"data"`
		}
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &session) != nil {
			b.Fatalf("inbox session: %d %s", rec.Code, rec.Body)
		}
		out = append(out, "Bearer "+session.Data.Token)
	}
	return out
}

// BenchmarkReads measures the read scenarios of bench/ (feed, search by
// subscriberId, email and name substring, cursor paging through 1,000
// results) in-process, with as many goroutines as bench/ has clients:
//
//	go test -run '^$' -bench Reads -cpuprofile cpu.out ./messaging
func BenchmarkReads(b *testing.B) {
	apptest.ServerGC(b)
	srv := startReadBench(b)
	var seq atomic.Uint64
	sub := func() int { return int(rand.Uint64N(uint64(srv.subscribers))) }
	for _, bc := range []struct {
		name string
		path func() string
	}{
		{"feed", func() string { return fmt.Sprintf("/v1/subscribers/s%07d/notifications/feed?limit=20", sub()) }},
		{"subscriberId", func() string { return fmt.Sprintf("/v2/subscribers?limit=10&subscriberId=s%07d", sub()) }},
		{"email", func() string { return fmt.Sprintf("/v2/subscribers?limit=10&email=user%06d", sub()/10) }},
		{"name", func() string {
			return "/v2/subscribers?limit=10&name=" + url.QueryEscape(fmt.Sprintf("Given%d F", sub()))
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cpu0 := cpuTime()
			b.SetParallelism(32) // 64 goroutines on 2 cores, as bench/ runs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					srv.get(b, bc.path())
				}
			})
			// The process's CPU per request, which bench/'s "server CPU per
			// request" counts: on shared cores ns/op follows the load.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
	// The inbox's newest 20, as bench/'s peer-shaped scenario reads them,
	// each request with a random one of 200 sessions.
	b.Run("inbox", func(b *testing.B) {
		tokens := srv.inboxTokens(b, 200)
		b.ResetTimer()
		cpu0 := cpuTime()
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				srv.getAs(b, "/v1/inbox/notifications?limit=20", tokens[rand.IntN(len(tokens))])
			}
		})
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	})
	b.Run("cursor_paging", func(b *testing.B) {
		groups := max(srv.subscribers/1000, 1)
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			path := ""
			for pb.Next() {
				if path == "" {
					path = "/v2/subscribers?limit=100&name=" + url.QueryEscape(fmt.Sprintf("Family%04d", int(seq.Add(1))%groups))
				}
				var page struct {
					Next *string `json:"next"`
				}
				body := srv.get(b, path)
				if err := json.Unmarshal(body, &page); err != nil {
					b.Fatal(err)
				}
				if page.Next == nil {
					path = ""
					continue
				}
				u, _ := url.Parse(path)
				q := u.Query()
				q.Set("after", *page.Next)
				u.RawQuery = q.Encode()
				path = u.String()
			}
		})
	})
}

// BenchmarkFeedLargeInbox reads one inbox of 20,000 in-app messages
// (HERALD_BENCH_INBOX_MESSAGES overrides the size) as an inbox's tabs read
// it: all, unread (every message) and read (none, so the page query passes
// over every message). A full page is counted, so each request counts its
// filter's matches too.
func BenchmarkFeedLargeInbox(b *testing.B) {
	bench := apptest.StartBench(b)
	addMessages(b, bench, apptest.BenchSize("HERALD_BENCH_INBOX_MESSAGES", 20_000), 1)
	benchPages(b, bench, "/v1/subscribers/s0/notifications/feed?limit=20", []benchPage{
		{"all", ""}, {"unread", "&read=false"}, {"read", "&read=true"},
	})
}

// BenchmarkMessagesList reads GET /v1/messages pages of 100 over 20,000
// in-app messages to 200 subscribers: all, one subscriber's, the oldest
// transaction's, and by channel where every message matches (in_app) and
// where none does (email).
func BenchmarkMessagesList(b *testing.B) {
	bench := apptest.StartBench(b)
	addMessages(b, bench, 20_000, 200)
	var sub, tx string
	bench.Scan(b, `SELECT external_subscriber, transaction_id FROM messages ORDER BY created_at LIMIT 1`, &sub, &tx)
	benchPages(b, bench, "/v1/messages?limit=100", []benchPage{
		{"all", ""}, {"subscriber", "&subscriberId=" + sub}, {"transaction", "&transactionId=" + tx},
		{"channel_all_match", "&channel=in_app"}, {"channel_none_match", "&channel=email"},
	})
}

// BenchmarkNotificationsList reads GET /v1/notifications pages over 20,000
// notifications to 200 subscribers: all, the newest transaction's, one
// subscriber's and one workflow's, and those of one trigger before all the
// others, found by each filter: its subscriber (also by email, and by a
// search for part of it), its workflow, severity, channel and context key,
// and its two subscribers or its workflow and another.
func BenchmarkNotificationsList(b *testing.B) {
	bench := apptest.StartBench(b)
	// The rare workflow is the only one of high severity with a chat step,
	// triggered once for two subscribers of a rare tenant before 20,000
	// other notifications.
	rare := `{"name":"Rare","workflowId":"rare","active":true,"severity":"high","steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}},
		{"name":"Chat","type":"chat","controlValues":{"body":"Hi"}}]}`
	if code := bench.Post("/v2/workflows", []byte(rare)); code != http.StatusCreated {
		b.Fatalf("create workflow: %d", code)
	}
	lone := `{"name":"rare","to":[{"subscriberId":"lone","email":"lone@example.com"},{"subscriberId":"lone2"}],
		"context":{"tenant":"rare"}}`
	if code := bench.Post("/v1/events/trigger", []byte(lone)); code != http.StatusCreated {
		b.Fatalf("trigger: %d", code)
	}
	addMessages(b, bench, 20_000, 200)
	var tx, workflow, rareWorkflow string
	bench.Scan(b, `SELECT transaction_id, template_id FROM notifications ORDER BY created_at DESC LIMIT 1`, &tx, &workflow)
	bench.Scan(b, `SELECT template_id FROM notifications ORDER BY created_at LIMIT 1`, &rareWorkflow)
	benchPages(b, bench, "/v1/notifications?page=0", []benchPage{
		{"all", ""}, {"transaction", "&transactionId=" + tx}, {"subscriber", "&subscriberIds=s1"},
		{"workflow", "&templates=" + workflow}, {"subscriber_rare", "&subscriberIds=lone"},
		{"workflow_rare", "&templates=" + rareWorkflow}, {"email_rare", "&emails=lone@example.com"},
		{"search_rare", "&search=lone@"}, {"severity_rare", "&severity=high"}, {"channel_rare", "&channels=chat"},
		{"subscribers_rare", "&subscriberIds=lone&subscriberIds=lone2"},
		{"workflows_rare", "&templates=" + rareWorkflow + "&templates=" + sqldb.NewID()},
		{"context_rare", "&contextKeys=tenant:rare"},
	})
}

// addMessages triggers the in-app workflow n times, in turn for
// subscribers s0 to s(subscribers-1), which the triggers create.
func addMessages(b *testing.B, bench *apptest.Bench, n, subscribers int) {
	for i := range n {
		body := fmt.Appendf(nil, `{"name":"bench-inbox","to":"s%d","payload":{"n":%d}}`, i%subscribers, i)
		if code := bench.Post("/v1/events/trigger", body); code != http.StatusCreated {
			b.Fatalf("trigger: %d", code)
		}
	}
}

// benchPage is one case of benchPages: a name and what it adds to the path.
type benchPage struct{ name, query string }

// benchPages runs a sub-benchmark per page, each reading path+query.
func benchPages(b *testing.B, bench *apptest.Bench, path string, pages []benchPage) {
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for range b.N {
				if code := bench.Get(path + p.query); code != http.StatusOK {
					b.Fatalf("GET %s: %d", path+p.query, code)
				}
			}
		})
	}
}

// seedReadData creates nSubs subscribers and delivers nMessages in-app
// messages to random ones of them, through the stores the server uses.
func seedReadData(ctx context.Context, db *sqldb.DB, tenant platform.Tenant, nSubs, nMessages int) error {
	subs := subscribers.NewStore(db, nil, nil)
	var docs []subscribers.Subscriber
	for start := 0; start < nSubs; start += 1000 {
		bodies := make([]json.RawMessage, 0, 1000)
		for i := start; i < min(start+1000, nSubs); i++ {
			bodies = append(bodies, json.RawMessage(fmt.Sprintf(
				`{"subscriberId":"s%07d","email":"user%07d@bench.example","firstName":"Given%d","lastName":"Family%04d","data":{"plan":"pro"}}`,
				i, i, i, i/1000)))
		}
		created, err := subs.UpsertSubscribers(ctx, tenant, bodies, nil)
		if err != nil {
			return err
		}
		docs = append(docs, created...)
	}
	engine := messaging.NewDeliverer(messaging.NewStore(db, messaging.Sources{}), nil)
	rng := rand.New(rand.NewPCG(1, 42))
	for i := range nMessages {
		_, write, err := engine.Deliver(ctx, &messaging.Delivery{
			JobID: sqldb.NewID(), NotificationID: sqldb.NewID(),
			EnvironmentID: tenant.EnvironmentID, OrganizationID: tenant.OrganizationID,
			TransactionID: fmt.Sprintf("seed-%d", i), Channel: "in_app",
			StepID: "inbox", StepDatabaseID: sqldb.NewID(),
			WorkflowDatabaseID: sqldb.NewID(), WorkflowID: "bench-inbox",
			Subscriber: docs[rng.IntN(len(docs))],
			Controls:   map[string]any{"subject": "Order {{payload.n}}", "body": "Your order {{payload.n}} has shipped."},
			Payload:    fmt.Appendf(nil, `{"n":%d,"kind":%q}`, i, []string{"a", "b", "c"}[i%3]),
			Overrides:  json.RawMessage(`{}`), Tags: []string{"bench"},
			Actor: json.RawMessage(`{"type":"none","data":null}`),
		})
		if err == nil {
			err = db.Tx(ctx, func(tx *sql.Tx) error { return write(ctx, tx) })
		}
		if err != nil {
			return fmt.Errorf("seed message %d: %w", i, err)
		}
	}
	return nil
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

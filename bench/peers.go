package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// Scenario 16 runs the workload the single-binary notification servers
// users would pick instead are compared on: users, single-step in-app
// notifications to them from 64 closed-loop clients, then reads of a random
// user's newest 20, through the API's feed and through the inbox. Its
// figures are the ones such a comparison prints: accepted/s, server CPU
// per notification and per read (and, on a local PostgreSQL, the database
// server's own CPU), reads/s with their p50 and p99, bytes on disk per
// notification once the WAL is checkpointed (or the tables vacuumed), and
// the server's peak memory.

const peersScenario = "16 peer-shaped"

func (b *bench) peers(ctx context.Context) error {
	users, notifications, reads := b.sz.peerUsers, b.sz.peerNotifications, b.sz.peerReads
	db, err := b.database(ctx, "peers")
	if err != nil {
		return err
	}
	// Every user's inbox session comes from this one address.
	srv, err := startPinned(ctx, b.pin.server, b.bin, db, "HERALD_INBOX_SESSIONS=0")
	if err != nil {
		return err
	}
	defer srv.stop()
	pg := b.postgresCPU(db)
	defer pg.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(benchWorkflow)}); err != nil || status != 201 {
		return fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	b.logf("scenario 16: %d users", users)
	made := c.run(ctx, b.sz.clients, users, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201,
			body: fmt.Appendf(nil, `{"subscriberId":"p%d","firstName":"P%d","email":"p%d@bench.example"}`, i, i, i)}
	})
	if made.Errors > 0 {
		return fmt.Errorf("create users: %s", made)
	}
	before, err := b.storedBytes(ctx, db)
	if err != nil {
		return err
	}

	b.logf("scenario 16: %d notifications from %d clients", notifications, b.sz.clients)
	cpu0, pg0 := srv.cpu(), pg.total()
	sent := c.run(ctx, b.sz.clients, notifications, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"p%d","payload":{"n":%d}}`, rand.IntN(users), i)}
	})
	accepted := sent.Requests - sent.Errors
	if _, _, err := waitDelivered(ctx, c, accepted, 0); err != nil {
		return err
	}
	perNotification := perOp(srv.cpu()-cpu0, accepted)
	pgPerNotification := perOp(pg.total()-pg0, accepted)
	b.rep.add(row{Scenario: peersScenario, Metric: fmt.Sprintf("notifications accepted/s (%d to %d users, %d clients, %d errors)", sent.Requests, users, b.sz.clients, sent.Errors),
		Value: sent.PerSec, Unit: "req/s", Target: "reported"})
	b.rep.add(row{Scenario: peersScenario, Metric: "server CPU per notification (until every one is in a feed)", Value: perNotification, Unit: "us", Target: "reported"})
	if pg.local {
		b.rep.add(row{Scenario: peersScenario, Metric: "PostgreSQL's own CPU per notification (its backends for this database)", Value: pgPerNotification, Unit: "us", Target: "reported"})
	}
	after, err := b.storedBytes(ctx, db)
	if err != nil {
		return err
	}
	perBytes := float64(after-before) / float64(max(accepted, 1))
	target, limit := "<= 2,000 B", 2000.0
	if b.store == storePostgres {
		target, limit = "<= 3,000 B", 3000.0
	}
	b.rep.add(row{Scenario: peersScenario, Metric: "bytes on disk per notification (tables and indexes, after a checkpoint or VACUUM)", Value: perBytes, Unit: "B",
		Target: target, Pass: b.result(perBytes <= limit)})

	tokens, err := b.peerSessions(ctx, c, users)
	if err != nil {
		return err
	}
	routes := []struct {
		name string
		req  func(user int) request
	}{
		{"feed", func(u int) request {
			return request{method: "GET", path: fmt.Sprintf("/v1/subscribers/p%d/notifications/feed?limit=20", u), want: 200}
		}},
		{"inbox", func(u int) request {
			return request{method: "GET", path: "/v1/inbox/notifications?limit=20", want: 200, auth: "Bearer " + tokens[u]}
		}},
	}
	for _, route := range routes {
		b.logf("scenario 16: %d reads of the newest 20 through the %s", reads, route.name)
		size, err := answerBytes(ctx, c, route.req(0))
		if err != nil {
			return fmt.Errorf("%s: %w", route.name, err)
		}
		cpu0, pg0 := srv.cpu(), pg.total()
		r := c.run(ctx, b.sz.clients, reads, func(int) request { return route.req(rand.IntN(users)) })
		b.rep.add(row{Scenario: peersScenario, Metric: fmt.Sprintf("%s reads/s, newest 20 of a random user (%d reads, %d errors, %.1f KB each)", route.name, r.Requests, r.Errors, float64(size)/1024),
			Value: r.PerSec, Unit: "req/s", Target: "reported"})
		b.rep.add(row{Scenario: peersScenario, Metric: fmt.Sprintf("%s read p99 at %d clients (p50 %.2f ms)", route.name, b.sz.clients, ms(r.P50)),
			Value: ms(r.P99), Unit: "ms", Target: "reported"})
		b.rep.add(row{Scenario: peersScenario, Metric: fmt.Sprintf("server CPU per %s read", route.name), Value: perOp(srv.cpu()-cpu0, r.Requests), Unit: "us", Target: "reported"})
		if pg.local {
			b.rep.add(row{Scenario: peersScenario, Metric: fmt.Sprintf("PostgreSQL's own CPU per %s read", route.name), Value: perOp(pg.total()-pg0, r.Requests), Unit: "us", Target: "reported"})
		}
	}
	_, hwm := srv.rssMB()
	b.rep.add(row{Scenario: peersScenario, Metric: "server peak memory (VmHWM, since start)", Value: hwm, Unit: "MB", Target: "reported"})
	return nil
}

// perOp is d in µs per op.
func perOp(d time.Duration, ops int) float64 {
	if ops == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(ops)
}

// answerBytes is the size of the body r is answered with.
func answerBytes(ctx context.Context, c *loadClient, r request) (int, error) {
	status, body, err := c.do(ctx, r)
	if err != nil || status != r.want {
		return 0, fmt.Errorf("%s %s: %d %s %v", r.method, r.path, status, body, err)
	}
	return len(body), nil
}

// peerSessions opens an inbox session for each user and answers their
// tokens, by user.
func (b *bench) peerSessions(ctx context.Context, c *loadClient, users int) ([]string, error) {
	ident, err := environmentIdentifier(ctx, c)
	if err != nil {
		return nil, err
	}
	tokens := make([]string, users)
	var failed atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range b.sz.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < users; i = int(next.Add(1)) - 1 {
				status, body, err := c.do(ctx, request{method: "POST", path: "/v1/inbox/session",
					body: fmt.Appendf(nil, `{"applicationIdentifier":%q,"subscriber":{"subscriberId":"p%d"}}`, ident, i)})
				var s struct {
					Data struct {
						Token string `json:"token"`
					} `json:"data"`
				}
				if err != nil || status != 201 || json.Unmarshal(body, &s) != nil {
					failed.Add(1)
					continue
				}
				tokens[i] = s.Data.Token
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return nil, fmt.Errorf("%d inbox sessions failed", failed.Load())
	}
	return tokens, nil
}

// storedBytes is what the database at db holds once its writes are
// settled: on SQLite, the pages in use after the WAL is checkpointed into
// the file; on PostgreSQL, every table of the database with its indexes
// and TOAST after a VACUUM.
func (b *bench) storedBytes(ctx context.Context, db string) (int64, error) {
	if b.store == storePostgres {
		conn, err := sql.Open("pgx", db)
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
			return 0, err
		}
		var n int64
		err = conn.QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()`).Scan(&n)
		return n, err
	}
	conn, err := sqldb.Open(ctx, db)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// A reader of the running server may keep the checkpoint from
	// finishing; the page counts are the database as a new transaction
	// sees it, its pages in the WAL included, so they hold either way.
	var busy, logged, moved int64
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &moved); err != nil {
		return 0, err
	}
	var pages, free, size int64
	for q, v := range map[string]*int64{`PRAGMA page_count`: &pages, `PRAGMA freelist_count`: &free, `PRAGMA page_size`: &size} {
		if err := conn.QueryRowContext(ctx, q).Scan(v); err != nil {
			return 0, err
		}
	}
	return (pages - free) * size, nil
}

// pgCPU sums the CPU time of the PostgreSQL processes serving one database
// (its backends and autovacuum workers), read from /proc when the database
// server runs on this machine. A backend's time is kept after it exits as
// of its last sample, taken every 100 ms.
type pgCPU struct {
	local bool
	name  string // the database's name, as the processes' titles show it
	mu    sync.Mutex
	seen  map[int]time.Duration
	quit  chan struct{}
	done  chan struct{}
}

// postgresCPU starts sampling the PostgreSQL processes of db, when db is a
// PostgreSQL database on this machine; otherwise its total stays 0.
func (b *bench) postgresCPU(db string) *pgCPU {
	p := &pgCPU{seen: map[int]time.Duration{}, quit: make(chan struct{}), done: make(chan struct{})}
	u, err := url.Parse(db)
	if b.store != storePostgres || err != nil || !isLoopback(u.Hostname()) {
		close(p.done)
		return p
	}
	p.local, p.name = true, strings.TrimPrefix(u.Path, "/")
	go func() {
		defer close(p.done)
		for {
			p.sample()
			select {
			case <-p.quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return p
}

func isLoopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// sample reads the CPU time of every postgres process whose title names
// the database.
func (p *pgCPU) sample() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.HasPrefix(string(title), "postgres: ") || !strings.Contains(string(title), " "+p.name+" ") {
			continue
		}
		cpu := processCPU(pid)
		p.mu.Lock()
		p.seen[pid] = max(p.seen[pid], cpu)
		p.mu.Unlock()
	}
}

// total samples now and answers the CPU time seen so far.
func (p *pgCPU) total() time.Duration {
	if !p.local {
		return 0
	}
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum time.Duration
	for _, d := range p.seen {
		sum += d
	}
	return sum
}

func (p *pgCPU) stop() {
	if p.local {
		close(p.quit)
	}
	<-p.done
}

package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for CREATE and DROP DATABASE
)

// With -db postgres://…, the scenarios that drive a server over HTTP run a
// second time on PostgreSQL, each on a fresh database of that server, and
// their figures are printed beside SQLite's from the same run.
// Scenario 10 runs 1, 2 and 3 Herald processes on one database.

// The stores a run measures; a row says which one it was measured on when
// the run has both.
const (
	storeSQLite   = "sqlite"
	storePostgres = "postgresql"
)

// pgServer creates and drops the PostgreSQL databases of one run.
type pgServer struct {
	url   string // -db, as given: its database is used only to create others
	admin *sql.DB
	made  []string
}

func openPGServer(ctx context.Context, dsn string) (*pgServer, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, fmt.Errorf("-db %q: want a postgres:// URL", dsn)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("-db: %w", err)
	}
	warnAutovacuumOff(ctx, admin)
	return &pgServer{url: dsn, admin: admin}, nil
}

// warnAutovacuumOff says so when the server runs without autovacuum: its
// fresh databases are then never analysed, the plans Herald's connections
// cache while the tables are empty stay sequential scans, and every figure
// of a scenario that grows its tables measures that instead.
func warnAutovacuumOff(ctx context.Context, admin *sql.DB) {
	var on string
	if err := admin.QueryRowContext(ctx, `SHOW autovacuum`).Scan(&on); err == nil && on != "on" {
		fmt.Fprintln(os.Stderr, "bench: warning: autovacuum is off on the -db server; its figures are not a real installation's")
	}
}

// create makes a fresh, empty database for one scenario and returns its
// URL. It has the C collation Herald's keyset paging expects; Herald
// migrates it at start.
func (p *pgServer) create(ctx context.Context, name string) (string, error) {
	db := fmt.Sprintf("herald_bench_%s_%d", strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(name)), time.Now().UnixNano()%1_000_000_000)
	if _, err := p.admin.ExecContext(ctx, `CREATE DATABASE `+db+` TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`); err != nil {
		return "", fmt.Errorf("create database %s: %w", db, err)
	}
	p.made = append(p.made, db)
	u, err := url.Parse(p.url)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}

// close drops every database the run made.
func (p *pgServer) close() {
	for _, db := range p.made {
		p.admin.Exec(`DROP DATABASE IF EXISTS ` + db + ` WITH (FORCE)`)
	}
	p.admin.Close()
}

// database is where a scenario's server keeps its data in the store being
// measured: a file in the run's directory, or a fresh PostgreSQL database.
func (b *bench) database(ctx context.Context, name string) (string, error) {
	if b.store != storePostgres {
		return filepath.Join(b.dir, name+".db"), nil
	}
	return b.pg.create(ctx, name)
}

// onPostgres runs step with every database on PostgreSQL. A step that fails
// there is reported as a row and the run goes on: the SQLite figures
// beside it are still worth printing.
func (b *bench) onPostgres(name string, step func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		b.logf("on PostgreSQL: %s", name)
		b.store, b.rep.store = storePostgres, storePostgres
		defer func() { b.store, b.rep.store = storeSQLite, storeSQLite }()
		if err := step(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			b.rep.add(row{Scenario: name, Metric: "error: " + err.Error(), Target: "reported"})
		}
		return nil
	}
}

// instances runs scenario 10: scenario 1's triggers spread round-robin
// over 1, 2 and 3 Herald processes on one fresh PostgreSQL database each
// time, every process on the server's CPUs. Target, on a machine of 8 or
// more cores: 3 instances deliver at least 2.1 times what one does. On
// fewer cores the processes and PostgreSQL share them, and the figures are
// reported.
func (b *bench) instances(ctx context.Context) error {
	b.store, b.rep.store = storePostgres, storePostgres
	defer func() { b.store, b.rep.store = storeSQLite, storeSQLite }()
	const scenario = "10 instances"
	var one float64
	for count := 1; count <= 3; count++ {
		b.logf("scenario 10: %d triggers through %d instance(s) on one PostgreSQL database", b.sz.instanceTriggers, count)
		perSec, sent, cpu, err := b.instancesRun(ctx, count, b.sz.instanceTriggers)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("%d instance(s): error: %v", count, err), Target: "reported"})
			return nil
		}
		r := row{Scenario: scenario, Metric: fmt.Sprintf("in-app messages delivered/s, %d instance(s) on one database (%d triggers, %d errors)", count, sent.Requests, sent.Errors),
			Value: perSec, Unit: "msg/s", Target: "reported"}
		switch {
		case count == 1:
			one = perSec
		case count == 3 && runtime.NumCPU() >= 8:
			r.Floor, r.Target, r.Pass = one, ">= 2.1x one instance", b.result(perSec >= 2.1*one && sent.Errors == 0)
		case count == 3:
			r.Floor, r.Target = one, fmt.Sprintf("not judged: %d cores (>= 2.1x one on 8+)", runtime.NumCPU())
		default:
			r.Floor = one
		}
		b.rep.add(r)
		b.rep.add(row{Scenario: scenario, Metric: fmt.Sprintf("server CPU per trigger, %d instance(s) together", count), Value: cpu, Unit: "us", Target: "reported"})
	}
	return nil
}

// instancesRun starts count servers on a fresh database, creates the
// workflow and recipients through the first, sends n triggers round-robin
// from the run's clients and waits until every accepted one is in a feed.
// It answers in-app messages delivered per second and the servers' CPU per
// trigger.
func (b *bench) instancesRun(ctx context.Context, count, n int) (float64, loadResult, float64, error) {
	db, err := b.database(ctx, fmt.Sprintf("instances%d", count))
	if err != nil {
		return 0, loadResult{}, 0, err
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	var clients []*loadClient
	for range count {
		// One after another: the first migrates and bootstraps the
		// database, the others find it ready.
		srv, err := startPinned(ctx, b.pin.server, b.bin, db)
		if err != nil {
			return 0, loadResult{}, 0, err
		}
		servers = append(servers, srv)
		clients = append(clients, newLoadClient(srv.base, benchKey, b.sz.clients))
	}
	c := clients[0]
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(benchWorkflow)}); err != nil || status != 201 {
		return 0, loadResult{}, 0, fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	made := c.run(ctx, b.sz.clients, b.sz.recipients, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201,
			body: fmt.Appendf(nil, `{"subscriberId":"r%d","firstName":"R%d"}`, i, i)}
	})
	if made.Errors > 0 {
		return 0, loadResult{}, 0, fmt.Errorf("create recipients: %s", made)
	}
	var cpu0 time.Duration
	for _, s := range servers {
		cpu0 += s.cpu()
	}
	start := time.Now()
	sent := runSpread(ctx, clients, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d}}`, i%b.sz.recipients, i)}
	})
	delivered, at, err := waitDelivered(ctx, c, sent.Requests-sent.Errors, 0)
	if err != nil {
		return 0, sent, 0, err
	}
	var cpu time.Duration
	for _, s := range servers {
		cpu += s.cpu()
	}
	perTrigger := 0.0
	if sent.Requests > 0 {
		perTrigger = float64((cpu - cpu0).Microseconds()) / float64(sent.Requests)
	}
	return float64(delivered) / at.Sub(start).Seconds(), sent, perTrigger, nil
}

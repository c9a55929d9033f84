package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// The storage figures: the bytes on disk a notification costs
// by the steps it runs, and the retention sweeper deleting expired
// notifications while scenario 1 runs.

// stepKinds are the workflows the footprint is measured for, one step
// type each (a delay or digest before an in-app step), and the channel of
// the message each notification ends in.
var stepKinds = []struct {
	name, steps, channel string
}{
	{"in_app", `{"name":"Inbox","type":"in_app","controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}}`, "in_app"},
	{"email", `{"name":"Mail","type":"email","controlValues":{"subject":"Order {{payload.n}}","body":"<p>Your order <b>{{payload.n}}</b> has shipped.</p>"}}`, "email"},
	{"chat", `{"name":"Chat","type":"chat","controlValues":{"body":"Your order {{payload.n}} has shipped."}}`, "chat"},
	{"delay + in_app", `{"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":1,"unit":"seconds"}},
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Your order {{payload.n}} has shipped."}}`, "in_app"},
	{"digest + in_app", `{"name":"Digest","type":"digest","controlValues":{"amount":1,"unit":"seconds"}},
		{"name":"Inbox","type":"in_app","controlValues":{"body":"{{steps.digest.eventCount}} orders shipped."}}`, "in_app"},
}

// footprint measures, for each step kind on a fresh database, the bytes
// on disk (SQLite's dbstat: the pages every table and index holds) that
// its notifications added, per notification.
func (b *bench) footprint(ctx context.Context) error {
	n := b.sz.footprintTriggers
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer receiver.Close()
	for i, kind := range stepKinds {
		b.logf("footprint: %d notifications of %s", n, kind.name)
		path := filepath.Join(b.dir, fmt.Sprintf("footprint-%d.db", i))
		perNotification, err := b.footprintOf(ctx, path, kind.steps, kind.channel, receiver.URL, n)
		if err != nil {
			return fmt.Errorf("footprint of %s: %w", kind.name, err)
		}
		r := row{Scenario: "6 footprint", Metric: fmt.Sprintf("bytes on disk per %s notification (%d notifications)", kind.name, n),
			Value: perNotification, Unit: "B", Target: "reported"}
		if kind.name == "in_app" {
			r.Target, r.Pass = "<= 3 KB", b.result(perNotification <= 3072)
		}
		b.rep.add(r)
		os.Remove(path)
	}
	return nil
}

// footprintOf starts a server on path, triggers n notifications of one
// workflow for 100 subscribers, waits until they end in messages of
// channel (or their count settles) and answers the bytes added per
// notification.
func (b *bench) footprintOf(ctx context.Context, path, steps, channel, receiver string, n int) (float64, error) {
	srv, err := startServer(ctx, b.bin, path)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	setup := []request{
		{method: "POST", path: "/v2/workflows", want: 201, body: []byte(`{"name":"Kind","workflowId":"kind","active":true,"steps":[` + steps + `]}`)},
		{method: "POST", path: "/v1/integrations", want: 201, body: []byte(`{"providerId":"email-webhook","channel":"email","active":true,"primary":true,"credentials":{"webhookUrl":"` + receiver + `"}}`)},
		{method: "POST", path: "/v1/integrations", want: 201, body: []byte(`{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook","credentials":{"webhookUrl":"` + receiver + `"}}`)},
	}
	const recipients = 100
	for i := range recipients {
		setup = append(setup,
			request{method: "POST", path: "/v1/subscribers", want: 201, body: fmt.Appendf(nil, `{"subscriberId":"f%d","email":"f%d@bench.example","firstName":"F%d"}`, i, i, i)},
			request{method: "PATCH", path: fmt.Sprintf("/v1/subscribers/f%d/credentials", i), want: 200, body: []byte(`{"providerId":"chat-webhook","credentials":{"webhookUrl":"` + receiver + `"}}`)})
	}
	for _, r := range setup {
		if status, body, err := c.do(ctx, r); err != nil || status != r.want {
			return 0, fmt.Errorf("%s %s: %d %s %v", r.method, r.path, status, body, err)
		}
	}
	before, err := dbBytes(ctx, path)
	if err != nil {
		return 0, err
	}
	sent := c.run(ctx, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"kind","to":"f%d","payload":{"n":%d}}`, i%recipients, i)}
	})
	if sent.Errors > 0 {
		return 0, fmt.Errorf("triggers: %s", sent)
	}
	// A digest merges notifications into fewer messages: wait until the
	// count reaches n or stays the same for five seconds.
	last, since := -1, time.Now()
	for time.Since(since) < 5*time.Second {
		status, body, err := c.do(ctx, request{method: "GET", path: "/v1/messages?limit=1&channel=" + channel})
		if err != nil || status != 200 {
			return 0, fmt.Errorf("count messages: %d %s %v", status, body, err)
		}
		count, _ := strconv.Atoi(strings.SplitN(strings.SplitN(string(body), `"totalCount":`, 2)[1], ",", 2)[0])
		if count >= n {
			break
		}
		if count != last {
			last, since = count, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	after, err := dbBytes(ctx, path)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

// dbBytes is the bytes the tables and indexes of the database at path
// hold, by SQLite's dbstat, read beside the running server.
func dbBytes(ctx context.Context, path string) (int64, error) {
	return queryInt(ctx, path, `SELECT sum(pgsize) FROM dbstat`)
}

// queryInt answers a query of one integer on the database at path.
func queryInt(ctx context.Context, path, query string) (int64, error) {
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}

// memoryRows reports the server's memory as an operator's tools show it
// (VmRSS, VmHWM) and split as the kernel counts it: RssAnon is the
// process's own memory (the Go heap and runtime), RssFile the pages of the
// database file its readers map (the page cache, docs/memory.md).
func (b *bench) memoryRows(srv *server, scenario, when string) {
	fields := map[string]float64{}
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.cmd.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				fields[strings.TrimSuffix(f[0], ":")] = kb / 1024
			}
		}
	}
	b.rep.add(row{Scenario: scenario, Metric: "VmRSS " + when, Value: fields["VmRSS"], Unit: "MB", Target: "<= 300 MB", Pass: b.result(fields["VmRSS"] <= 300)})
	b.rep.add(row{Scenario: scenario, Metric: "VmHWM " + when, Value: fields["VmHWM"], Unit: "MB", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: "RssAnon (heap and runtime) " + when, Value: fields["RssAnon"], Unit: "MB", Target: "reported"})
	b.rep.add(row{Scenario: scenario, Metric: "RssFile (mapped database pages) " + when, Value: fields["RssFile"], Unit: "MB", Target: "reported"})
}

// seedExpired writes n notifications of the Development environment, each
// with its in-app job, the two execution details of its delivery and its
// transaction's claim, all 400 days old: what the retention sweeper of a
// server started on path deletes at once. (Their messages are not
// seeded: scenario 1 counts in-app messages as it runs.)
func seedExpired(ctx context.Context, path string, n int) error {
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	at := sqldb.FormatTime(time.Now().AddDate(0, 0, -400))
	const batch = 50_000
	for from := 0; from < n; from += batch {
		to := min(from+batch, n)
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			for _, q := range []string{
				`INSERT INTO activity_transactions (environment_id, transaction_id, created_at)
					SELECT e.id, printf('expired-%d', i), ?3 FROM n, e`,
				`INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
					template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags,
					severity, critical, preferences, actor, created_at, updated_at)
					SELECT printf('e%023x', i), e.id, e.organization_id, 'expired-subscriber', '{}', 'expired-workflow',
						'bench-inbox', printf('expired-%d', i), '["in_app"]', '{}', printf('{"n":%d}', i), '{}', '{}', '[]',
						'none', 0, '{}', '{"type":"none","data":null}', ?3, ?3 FROM n, e`,
				`INSERT INTO jobs (id, environment_id, notification_id,
					position, type, step_id, step, provider_id, status, created_at, updated_at)
					SELECT printf('j%023x', i), e.id, printf('e%023x', i), 1, 'in_app', 'inbox',
						'{"controlVariables":{}}', 'service', 'completed', ?3, ?3
					FROM n, e`,
				`INSERT INTO execution_details (notification_id, seq, id, job_id, kind, provider_id)
					SELECT printf('e%023x', i), k + 1, printf('d%023x', 2 * i + k), printf('j%023x', i), k + 2, 'service'
					FROM n, e, (SELECT 0 AS k UNION ALL SELECT 1)`,
			} {
				q = `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?2),
					e AS (SELECT id, organization_id FROM environments WHERE name = 'Development') ` + q
				if _, err := tx.ExecContext(ctx, q, from, to, at); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed expired notifications: %w", err)
		}
	}
	return nil
}

// sweepDuringScenario1 stops the delivery server, seeds expired
// notifications into its database and runs scenario 1's triggers twice
// more, each on a server started afresh: first with retention off, then
// with the sweeper deleting them. A restarted server on a larger file is
// slower than scenario 1's warm one with or without a sweep, so the sweep
// is judged against the first.
func (b *bench) sweepDuringScenario1(ctx context.Context, srv *server, path string, base int) error {
	srv.stop()
	n := b.sz.expired
	b.logf("scenario 1 with the sweeper: seeding %d expired notifications", n)
	if err := seedExpired(ctx, path, n); err != nil {
		return err
	}
	b.logf("scenario 1 restarted, retention off: %d triggers", b.sz.triggers)
	without, base, err := b.scenario1Again(ctx, path, base, "HERALD_ACTIVITY_RETENTION=0")
	if err != nil {
		return err
	}
	b.logf("scenario 1 restarted, the sweeper deleting: %d triggers", b.sz.triggers)
	with, _, err := b.scenario1Again(ctx, path, base)
	if err != nil {
		return err
	}
	left, err := queryInt(ctx, path, `SELECT count(*) FROM notifications WHERE transaction_id LIKE 'expired-%'`)
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "1 trigger throughput", Metric: "in-app messages delivered/s, server restarted on the expired records, retention off",
		Value: without, Unit: "msg/s", Target: "reported"})
	b.rep.add(row{Scenario: "1 trigger throughput", Metric: fmt.Sprintf("in-app messages delivered/s, server restarted, the sweeper deleting expired notifications (%d of %d deleted by the end)", int64(n)-left, n),
		Value: with, Unit: "msg/s", Floor: without, Target: ">= 90% of retention off", Pass: b.result(with >= 0.9*without)})
	return nil
}

// scenario1Again starts a server on path with the extra variables, runs
// scenario 1's triggers and stops it; it answers the delivery rate and the
// in-app message count reached.
func (b *bench) scenario1Again(ctx context.Context, path string, base int, extra ...string) (float64, int, error) {
	srv, err := startServer(ctx, b.bin, path, extra...)
	if err != nil {
		return 0, 0, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	start := time.Now()
	sent := c.run(ctx, b.sz.clients, b.sz.triggers, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-inbox","to":"r%d","payload":{"n":%d}}`, i%b.sz.recipients, i)}
	})
	delivered, at, err := waitDelivered(ctx, c, sent.Requests-sent.Errors, base)
	if err != nil {
		return 0, 0, err
	}
	return float64(delivered) / at.Sub(start).Seconds(), base + delivered, nil
}

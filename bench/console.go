package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// consoleAdmin signs the benchmark in to the console.
const (
	consoleEmail    = "bench@example.com"
	consolePassword = "bench console password"
)

const consoleWorkflow = `{"name":"Bench console","workflowId":"bench-console","active":true,
	"steps":[{"name":"Inbox","type":"in_app","controlValues":{"subject":"Order {{ payload.n }}","body":"Order {{ payload.n }} shipped"}}]}`

// console runs scenario 14: the console's Activity list, filtered and not,
// and a notification's page, each read by one client at a time so the
// latency is the server's time, with b.sz.consoleRows notifications in the
// database; and the bytes the console's first load transfers. SQLite only:
// the notifications are seeded into its file.
func (b *bench) console(ctx context.Context) error {
	path := filepath.Join(b.dir, "console.db")
	srv, err := startServer(ctx, b.bin, path)
	if err != nil {
		return err
	}
	c := newLoadClient(srv.base, benchKey, 8)
	if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(consoleWorkflow)}); err != nil || status != 201 {
		srv.stop()
		return fmt.Errorf("create workflow: %d %s %v", status, body, err)
	}
	made := c.run(ctx, 8, 100, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201,
			body: fmt.Appendf(nil, `{"subscriberId":"c%d","firstName":"C%d","email":"c%d@example.com"}`, i, i, i)}
	})
	sent := c.run(ctx, 8, 200, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201,
			body: fmt.Appendf(nil, `{"name":"bench-console","to":"c%d","payload":{"n":%d}}`, i%100, i)}
	})
	srv.stop()
	if made.Errors+sent.Errors > 0 {
		return fmt.Errorf("console scenario's setup: %s; %s", made, sent)
	}
	b.logf("scenario 14: seeding %d notifications", b.sz.consoleRows)
	if err := seedConsole(ctx, path, b.sz.consoleRows); err != nil {
		return err
	}
	users := exec.CommandContext(ctx, b.bin, "users", "create", "-db", path, "-email", consoleEmail, "-name", "Bench",
		"-role", "admin", "-password-stdin")
	users.Stdin = strings.NewReader(consolePassword + "\n")
	if out, err := users.CombinedOutput(); err != nil {
		return fmt.Errorf("herald users create: %v: %s", err, out)
	}
	if srv, err = startServer(ctx, b.bin, path); err != nil {
		return err
	}
	defer srv.stop()
	cookie, env, err := consoleSignIn(ctx, srv.base)
	if err != nil {
		return err
	}
	cc := newLoadClient(srv.base, "", 1)
	cc.cookie = cookie
	return b.measureConsole(ctx, cc, env)
}

// measureConsole reads the console's pages and reports their latency and
// its first load's bytes.
func (b *bench) measureConsole(ctx context.Context, c *loadClient, env string) error {
	rows := b.sz.consoleRows
	activity := "/console/env/" + env + "/activity"
	n := max(b.sz.readRequests/10, 200)
	for _, page := range []struct{ name, query string }{
		{"Activity list", ""},
		{"Activity list by subscriber", "?subscriberIds=c7"},
		{"Activity list by workflow and channel", "?channels=in_app&search=c7@example.com"},
		{"Activity list, page 10", "?page=9"},
	} {
		r := c.run(ctx, 1, n, func(int) request {
			return request{method: "GET", path: activity + page.query, want: 200}
		})
		b.rep.add(row{Scenario: "14 console", Metric: fmt.Sprintf("%s p99, %d notifications (p50 %s, %d errors)", page.name, rows, r.P50, r.Errors),
			Value: ms(r.P99), Unit: "ms", Target: "<= 50 ms", Pass: b.result(r.P99 <= 50*time.Millisecond && r.Errors == 0)})
	}
	r := c.run(ctx, 1, n, func(int) request {
		return request{method: "GET", path: activity + fmt.Sprintf("/c%023x", rand.IntN(rows)), want: 200}
	})
	b.rep.add(row{Scenario: "14 console", Metric: fmt.Sprintf("a notification's page p99, %d notifications (p50 %s, %d errors)", rows, r.P50, r.Errors),
		Value: ms(r.P99), Unit: "ms", Target: "<= 50 ms", Pass: b.result(r.P99 <= 50*time.Millisecond && r.Errors == 0)})

	bytes, err := firstLoad(ctx, c, "/console/env/"+env+"/")
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "14 console", Metric: "first load: the overview with its scripts, styles and icon, as transferred (gzip)",
		Value: float64(bytes) / 1024, Unit: "KB", Target: "<= 200 KB", Pass: b.result(bytes <= 200*1024)})
	return nil
}

var assetRef = regexp.MustCompile(`(?:href|src)="(/console/assets/[^"]+)"`)

// firstLoad is the bytes a browser with an empty cache transfers to show
// page: the page, and each asset it names, gzipped where served so.
func firstLoad(ctx context.Context, c *loadClient, page string) (int64, error) {
	total, body, err := transfer(ctx, c, page)
	if err != nil {
		return 0, err
	}
	for _, m := range assetRef.FindAllStringSubmatch(body, -1) {
		n, _, err := transfer(ctx, c, strings.ReplaceAll(m[1], "&amp;", "&"))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// transfer fetches path as a browser would, and says how many bytes of
// body came over the wire.
func transfer(ctx context.Context, c *loadClient, path string) (int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Cookie", c.cookie)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand, so the transport leaves the body as sent
	res, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return 0, "", fmt.Errorf("GET %s: %d", path, res.StatusCode)
	}
	return int64(len(b)), string(b), err
}

// consoleSignIn signs the benchmark's admin in and returns the session's
// cookie and the Development environment's id.
func consoleSignIn(ctx context.Context, base string) (cookie, env string, err error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"email": {consoleEmail}, "password": {consolePassword}}
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/console/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err := client.Do(req)
	if err != nil {
		return "", "", err
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "herald_session" {
			cookie = ck.Name + "=" + ck.Value
		}
	}
	if cookie == "" {
		return "", "", fmt.Errorf("console sign-in answered %d without a session", res.StatusCode)
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", base+"/console/", nil)
	req.Header.Set("Cookie", cookie)
	if res, err = client.Do(req); err != nil {
		return "", "", err
	}
	res.Body.Close()
	env = strings.Trim(strings.TrimPrefix(res.Header.Get("Location"), "/console/env/"), "/")
	return cookie, env, nil
}

// seedConsole writes n notifications of the console workflow for its 100
// subscribers, one a second up to now, each with its in-app job, the
// two execution details of its delivery and its transaction's claim: what a busy
// environment's Activity list reads.
func seedConsole(ctx context.Context, path string, n int) error {
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	var wf string
	if err := db.QueryRowContext(ctx, `SELECT id FROM workflows WHERE workflow_id = 'bench-console'`).Scan(&wf); err != nil {
		return err
	}
	tmpl := `{"_id":"` + wf + `","name":"Bench console","origin":"external","triggers":[{"type":"event","identifier":"bench-console","variables":[]}]}`
	const batch = 50_000
	for from := 0; from < n; from += batch {
		to := min(from+batch, n)
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			for _, q := range []string{
				`INSERT INTO activity_transactions (environment_id, transaction_id, created_at)
					SELECT e.id, printf('console-%d', i), t FROM n, e`,
				`INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
					template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags,
					severity, critical, preferences, actor, created_at, updated_at)
					SELECT printf('c%023x', i), e.id, e.organization_id, s.id, '{}', ?5,
						'bench-console', printf('console-%d', i), '["in_app"]', ?4, printf('{"n":%d}', i), '{}', '{}', '[]',
						'none', 0, '{}', '{"type":"none","data":null}', t, t FROM n, e JOIN s ON s.sk = i % 100`,
				`INSERT INTO jobs (id, environment_id, notification_id,
					position, type, step_id, step, provider_id, status, created_at, updated_at)
					SELECT printf('j%023x', i), e.id, printf('c%023x', i), 1, 'in_app', 'inbox',
						'{"name":"Inbox","type":"in_app"}', 'service', 'completed', t, t
					FROM n, e`,
				`INSERT INTO execution_details (notification_id, seq, id, job_id, kind, provider_id)
					SELECT printf('c%023x', i), k + 1, printf('d%023x', 2 * i + k), printf('j%023x', i), k + 2, 'service'
					FROM n, e, (SELECT 0 AS k UNION ALL SELECT 1)`,
			} {
				q = `WITH RECURSIVE r(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM r WHERE i + 1 < ?2),
					n AS (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('-%d seconds', ?3 - i)) AS t FROM r),
					e AS (SELECT id, organization_id FROM environments WHERE name = 'Development'),
					s AS (SELECT id, CAST(substr(subscriber_id, 2) AS INTEGER) AS sk FROM subscribers WHERE subscriber_id LIKE 'c%') ` + q
				if _, err := tx.ExecContext(ctx, q, from, to, n, tmpl, wf); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed console notifications: %w", err)
		}
	}
	return nil
}

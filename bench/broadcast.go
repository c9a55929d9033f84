package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// broadcastStorage runs scenario 11: the database growth of one broadcast
// of a 500 KB payload to 1,000 subscribers against the same broadcast of a
// 100-byte payload, each on a fresh database, with an in-app template that
// renders a small field of the payload, then one that renders all of it,
// then 500 KB overrides with the small payload. Targets: the large payload
// adds at most 1 MB to what the small one grows; rendered, at most 1.2
// times the rendered bytes; the large overrides, at most 1 MB.
func (b *bench) broadcastStorage(ctx context.Context) error {
	const subscribers, large = 1_000, 500 << 10
	small, err := b.broadcastGrowth(ctx, "bsmall", `{{payload.name}}`, subscribers, 100, "payload")
	if err != nil {
		return err
	}
	big, err := b.broadcastGrowth(ctx, "blarge", `{{payload.name}}`, subscribers, large, "payload")
	if err != nil {
		return err
	}
	// What the rendered broadcast stores is past the default request
	// storage limit, which would refuse it: the server is given room.
	rendered, err := b.broadcastGrowth(ctx, "brendered", `{{payload.name}} {{payload.blob}}`, subscribers, large, "payload",
		"HERALD_MAX_REQUEST_STORAGE="+strconv.FormatInt(2<<30, 10))
	if err != nil {
		return err
	}
	overrides, err := b.broadcastGrowth(ctx, "boverrides", `{{payload.name}}`, subscribers, large, "overrides")
	if err != nil {
		return err
	}
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.rep.add(row{Scenario: "11 broadcast storage", Metric: fmt.Sprintf("database growth, 100-byte payload to %d subscribers", subscribers),
		Value: mb(small), Unit: "MB", Target: "reported"})
	b.rep.add(row{Scenario: "11 broadcast storage", Metric: "database growth, 500 KB payload (not rendered)",
		Value: mb(big), Unit: "MB", Floor: mb(small), Target: "<= 1 MB more than 100-byte", Pass: b.result(big-small <= 1<<20)})
	renderedBytes := int64(subscribers) * large
	b.rep.add(row{Scenario: "11 broadcast storage", Metric: "database growth, 500 KB payload rendered in every message",
		Value: mb(rendered), Unit: "MB", Floor: mb(small), Target: "<= 1.2x rendered bytes more than 100-byte",
		Pass: b.result(float64(rendered-small) <= 1.2*float64(renderedBytes))})
	b.rep.add(row{Scenario: "11 broadcast storage", Metric: "database growth, 500 KB overrides (100-byte payload)",
		Value: mb(overrides), Unit: "MB", Floor: mb(small), Target: "<= 1 MB more than 100-byte", Pass: b.result(overrides-small <= 1<<20)})
	return nil
}

// broadcastGrowth starts a server on a fresh database, creates n
// subscribers and an in-app workflow whose body is body, broadcasts a
// payload, or overrides beside a small payload (what), of about size bytes
// (the server started with the HERALD_* variables env), waits until every
// message is stored and answers the bytes the database grew by.
func (b *bench) broadcastGrowth(ctx context.Context, name, body string, n, size int, what string, env ...string) (int64, error) {
	wf := `{"name":"Big","workflowId":"big","active":true,"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hello ` + body + `"}}]}`
	db, err := b.database(ctx, name)
	if err != nil {
		return 0, err
	}
	srv, c, err := b.serverOn(ctx, db, env, wf)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	if res := c.run(ctx, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201, body: fmt.Appendf(nil, `{"subscriberId":"b%05d"}`, i)}
	}); res.Errors > 0 {
		return 0, fmt.Errorf("create subscribers: %s", res)
	}
	before, err := b.databaseBytes(ctx, db)
	if err != nil {
		return 0, err
	}
	b.logf("scenario 11: broadcast of %d bytes of %s to %d subscribers (%s)", size, what, n, body)
	// Random, so that PostgreSQL's compression of large values does not
	// hide a copy.
	blob := make([]byte, max(size-30, 2)/2)
	rand.Read(blob)
	trigger := `{"name":"big","payload":{"name":"Ada","blob":"` + hex.EncodeToString(blob) + `"}}`
	if what == "overrides" {
		trigger = `{"name":"big","payload":{"name":"Ada"},"overrides":{"blob":"` + hex.EncodeToString(blob) + `"}}`
	}
	slow := newLoadClient(srv.base, benchKey, 1)
	slow.http.Timeout = 10 * time.Minute
	if status, res, err := slow.do(ctx, request{method: "POST", path: "/v1/events/trigger/broadcast",
		body: []byte(trigger)}); err != nil || status != 200 {
		return 0, fmt.Errorf("broadcast: %d %.300s %v", status, res, err)
	}
	// A message whose rendering fails is not stored: the growth is measured
	// once the count stops moving, and the shortfall logged.
	if got, _, err := waitDelivered(ctx, c, n, 0); err != nil {
		b.logf("scenario 11: %d of %d messages stored: %v", got, n, err)
	}
	after, err := b.databaseBytes(ctx, db)
	return after - before, err
}

// databaseBytes is what the database at db holds: SQLite's dbstat pages,
// or PostgreSQL's size of the database, its TOAST and indexes included.
func (b *bench) databaseBytes(ctx context.Context, db string) (int64, error) {
	if b.store != storePostgres {
		return dbBytes(ctx, db)
	}
	conn, err := sql.Open("pgx", db)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var n int64
	err = conn.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
	return n, err
}

package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// noopFloor measures what the HTTP stack alone allows: bench/noopserver, a
// handler that answers {} behind the same middleware (logging, auth,
// idempotency), run as its own process as Herald is, driven by the same
// load generator, in requests/s.
func noopFloor(ctx context.Context, dir string, clients, n int) (_ loadResult, cpuPerRequest float64, _ error) {
	bin := filepath.Join(dir, "noopserver")
	if err := build(ctx, "./bench/noopserver", bin); err != nil {
		return loadResult{}, 0, fmt.Errorf("build noopserver: %w", err)
	}
	srv, err := startServer(ctx, bin, filepath.Join(dir, "noop.db"))
	if err != nil {
		return loadResult{}, 0, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, clients)
	cpu0 := srv.cpu()
	r := c.run(ctx, clients, n, func(int) request { return request{method: "GET", path: "/v1/noop", want: 200} })
	return r, srv.perRequest(cpu0, r), nil
}

// sqliteFloor measures what the storage allows: the rows one in-app delivery
// must write at minimum (its notification, its step's job, the two
// execution details of the delivery and the message), inserted raw in batched
// transactions through the same driver and pragmas, as deliveries/s. Each
// row carries a document of about 90 bytes, where Herald's rows are 0.2 to
// 1.3 KB: what Herald stores beyond the minimum is part of the gap. Every
// delivery has an environment and subscriber of its own, so each index
// grows at its end; scenario 1's deliveries share one environment and
// 1,000 subscribers, whose feed entries land in the middle of the index,
// and with those keys the floor would measure lower.
func sqliteFloor(ctx context.Context, dir string, deliveries, batch int) (float64, error) {
	db, err := sqldb.Open(ctx, filepath.Join(dir, "floor.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	for _, ddl := range []string{
		`CREATE TABLE n (id TEXT PRIMARY KEY, env TEXT, sub TEXT, tx TEXT, doc TEXT, created TEXT)`,
		`CREATE INDEX n_env ON n (env, created DESC, id DESC)`,
		`CREATE TABLE j (id TEXT PRIMARY KEY, env TEXT, n TEXT, parent TEXT, status TEXT, run_at TEXT, doc TEXT)`,
		`CREATE INDEX j_due ON j (status, run_at)`,
		`CREATE TABLE d (id TEXT PRIMARY KEY, j TEXT, status TEXT, detail TEXT, created TEXT)`,
		`CREATE INDEX d_job ON d (j, created)`,
		`CREATE TABLE m (id TEXT PRIMARY KEY, env TEXT, sub TEXT, j TEXT UNIQUE, content TEXT, payload TEXT, created TEXT)`,
		`CREATE INDEX m_feed ON m (env, sub, created DESC, id DESC)`,
	} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return 0, fmt.Errorf("floor schema: %w", err)
		}
	}
	doc := `{"payload":{"name":"` + strings.Repeat("x", 64) + `"},"step":{"type":"in_app"}}`
	start := time.Now()
	for done := 0; done < deliveries; done += batch {
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			for i := 0; i < batch; i++ {
				if err := insertDelivery(ctx, tx, doc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return float64(deliveries) / time.Since(start).Seconds(), nil
}

func insertDelivery(ctx context.Context, tx *sql.Tx, doc string) error {
	now := sqldb.FormatTime(time.Now())
	env, sub, n := sqldb.NewID(), sqldb.NewID(), sqldb.NewID()
	j := sqldb.NewID()
	stmts := []struct {
		q    string
		args []any
	}{
		{`INSERT INTO n VALUES (?, ?, ?, ?, ?, ?)`, []any{n, env, sub, n, doc, now}},
		{`INSERT INTO j VALUES (?, ?, ?, '', 'completed', NULL, ?)`, []any{j, env, n, doc}},
		{`INSERT INTO m VALUES (?, ?, ?, ?, 'Hello there', ?, ?)`, []any{sqldb.NewID(), env, sub, j, doc, now}},
	}
	for _, d := range []string{"Message created", "Message sent"} {
		stmts = append(stmts, struct {
			q    string
			args []any
		}{`INSERT INTO d VALUES (?, ?, 'Success', ?, ?)`, []any{sqldb.NewID(), j, d, now}})
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	return nil
}

package sqldb

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL plans a prepared statement, and each foreign-key check, once
// per connection and keeps the plan until something invalidates it: an
// ANALYZE of a table it reads, say. Herald's connections prepare their
// statements on a fresh database, while the tables are empty, where a
// sequential scan is the cheapest plan; autovacuum analyses each table
// once it has grown, and the plans are made again for the table's size.
// Without autovacuum nothing does, and every trigger then scans the
// notifications whole, slower with every row.
//
// So Herald analyses, once, each table that has grown from empty without
// ever being analysed (by autovacuum or anyone): past analyzeRows changed
// rows, which on a fresh database comes within seconds of the first
// traffic. Later analyses stay autovacuum's: a plan made for a table of a
// thousand rows reads it by its indexes, and stays right as it grows.
// An installation without autovacuum also needs it for the space of
// updated and deleted rows, which Herald does not give back; it is warned
// at start.
const (
	analyzeEvery = 5 * time.Second
	analyzeRows  = 1000
)

// neverAnalysedSQL names the tables of Herald's schema that changed
// analyzeRows rows or more and were never analysed.
const neverAnalysedSQL = `SELECT relname FROM pg_stat_user_tables
	WHERE schemaname = current_schema() AND last_analyze IS NULL AND last_autoanalyze IS NULL
		AND n_mod_since_analyze >= ?
	ORDER BY relname`

// KeepAnalysed warns when the PostgreSQL server runs without autovacuum
// and, until ctx ends, analyses each table that grew from empty without
// being analysed (see analyzeEvery). It does nothing on SQLite, whose
// planner reads no statistics Herald does not keep itself.
func (db *DB) KeepAnalysed(ctx context.Context, logger *slog.Logger) {
	if !db.Postgres {
		return
	}
	var on string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('autovacuum')`).Scan(&on); err == nil && on != "on" {
		logger.Warn("PostgreSQL runs without autovacuum: Herald analyses each table once as it fills, but nothing returns the space of deleted rows; see docs/postgres.md")
	}
	go func() {
		t := time.NewTicker(analyzeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := db.analyzeGrown(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("analyse new tables", "error", err)
			}
		}
	}()
}

// analyzeGrown analyses the tables that grew without ever being analysed
// and returns their names.
func (db *DB) analyzeGrown(ctx context.Context) ([]string, error) {
	rows, err := db.QueryContext(ctx, neverAnalysedSQL, analyzeRows)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(tables) == 0 {
		return nil, err
	}
	// A connection of its own: the readers' transactions are read-only,
	// and the writer's one connection serves the writes meanwhile.
	conn, err := pgx.ConnectConfig(ctx, db.pgConfig)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, t := range tables {
		if _, err := conn.Exec(ctx, `ANALYZE `+pgx.Identifier{t}.Sanitize()); err != nil {
			return nil, fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return tables, nil
}

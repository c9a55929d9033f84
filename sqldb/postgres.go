package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgresURL reports whether a HERALD_DB value names a PostgreSQL
// database rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// connectTimeout bounds the first connection when the URL sets none, so an
// unreachable server is an error at start instead of a hang.
const connectTimeout = 10 * time.Second

// openPG opens Herald's pools on the PostgreSQL database at dsn.
//
// The writer pool keeps one connection, as on SQLite: within one process,
// writes still queue in Go and read-then-write logic stays serialised. What
// several processes must agree on is locked in the database (LockKey) or
// claimed with SKIP LOCKED.
func openPG(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("HERALD_DB is not a valid PostgreSQL URL: %s", pgParseReason(err))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	where := fmt.Sprintf("PostgreSQL at %s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	wire := &wireCounts{}
	w := openPostgres(cfg, wire)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("reach %s: %w", where, err)
	}
	r := openPostgres(cfg, nil)
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	return &DB{w: w, r: r, Postgres: true, pgConfig: cfg, wire: wire, instance: NewID()}, nil
}

// pgParseReason is why pgx refused a URL, without the URL itself: it may
// hold a password. A url.Error quotes the URL whole, so only its cause is
// kept; pgx's own text is "cannot parse `<the URL, password masked>`:
// <reason>", and only the reason is kept ("invalid port", "invalid
// connect_timeout (…)"), so even a URL pgx could not mask is never printed.
func pgParseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "cannot parse it"
	}
	var ue *url.Error
	if errors.As(pe, &ue) {
		return ue.Err.Error()
	}
	if _, reason, ok := strings.Cut(pe.Error(), "`: "); ok && !strings.Contains(reason, "`: ") {
		return reason
	}
	return "cannot parse it"
}

// isPGCode reports whether err is PostgreSQL refusing a statement with one
// of codes (SQLSTATE).
func isPGCode(err error, codes ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	for _, c := range codes {
		if pe.Code == c {
			return true
		}
	}
	return false
}

// SQLSTATEs Herald reacts to.
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// IsRetryable reports whether err is a transaction PostgreSQL rolled back
// to break a deadlock or a serialization conflict: run again, it succeeds.
func IsRetryable(err error) bool {
	return isPGCode(err, pgSerializationFailure, pgDeadlockDetected)
}

// postgresMigrations is the folder of a migration source that holds the
// PostgreSQL migrations.
const postgresMigrations = "postgres"

// newMigratePG builds a migrator for PostgreSQL on a connection pool of its
// own, which speaks PostgreSQL's SQL untranslated; golang-migrate's pgx
// driver holds an advisory lock while it runs, so instances starting
// together migrate one at a time.
func newMigratePG(db *DB, src fs.FS) (*migrate.Migrate, func(), error) {
	sub, err := fs.Sub(src, postgresMigrations)
	if err != nil {
		return nil, nil, err
	}
	source, err := iofs.New(sub, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("migration source: %w", err)
	}
	conn := stdlib.OpenDB(*db.pgConfig)
	driver, err := migratepgx.WithInstance(conn, &migratepgx.Config{})
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("migration driver: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", source, "pgx", driver)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return m, func() { m.Close() }, nil
}

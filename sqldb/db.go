package sqldb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// MemoryPath is the HERALD_DB value that selects a private in-memory database.
const MemoryPath = ":memory:"

// DB is Herald's database, SQLite or PostgreSQL, reached through two pools.
// SQLite allows one writer at a time, so the writer pool has a single
// connection and every write queues on it in Go instead of spinning on
// SQLITE_BUSY; the read pool serves reads concurrently (WAL lets them run
// beside the writer). On PostgreSQL the pools keep that shape (see openPG).
// Callers never pick a pool: a statement runs on the one its kind calls for
// (see pool), a transaction of Tx on the writer, and a read inside it on
// that transaction, so it sees the transaction's own writes.
type DB struct {
	w *sql.DB // the one writer connection
	r *sql.DB // read-only pool

	// Postgres is true on PostgreSQL, where several Herald processes may
	// share the database; the stores ask the Dialect (sqldialect.go), not
	// it, for what differs.
	Postgres bool
	pgConfig *pgx.ConnConfig // how to reach it, for connections of its own
	instance string          // this process's ID among those sharing it
	listen   listeners       // its LISTEN connection (notify.go)

	dsn          string        // how to open another connection to a SQLite database (Backup)
	checkpointer *sql.DB       // the connection that checkpoints the WAL; nil in memory
	stop         chan struct{} // closed by Close to stop checkpointing
	stopped      chan struct{} // closed when checkpointing stopped
	stmts        readStmts     // prepared reads on r, by query text (see ReadStmt)
	writes       writeStmts    // prepared writes on w, by query text (see PrepareWrites)
	commits      afterCommits  // what runs once a transaction of Tx commits
	wire         *wireCounts   // the writer's traffic on PostgreSQL (pipeline.go)

	wideMu sync.Mutex
	wide   map[any]any // what every user of the database in this process shares (ProcessWide)
}

// ProcessWide returns the value under key that every user of db in this
// process shares, made by make on first use. State that describes the
// database's content, such as a cache its writes invalidate, belongs
// here rather than to one store: two stores of one kind on one database
// (a test's restart, say) then see each other's writes.
func (db *DB) ProcessWide(key any, make func() any) any {
	db.wideMu.Lock()
	defer db.wideMu.Unlock()
	v, ok := db.wide[key]
	if !ok {
		if db.wide == nil {
			db.wide = map[any]any{}
		}
		v = make()
		db.wide[key] = v
	}
	return v
}

// checkpointEvery is how often the WAL is copied back into the database
// file, and walAutocheckpoint the WAL size, in pages, past which the writer
// checkpoints on its own, fsyncs included. A sustained burst of writes
// reaches it within the second, and then the writer pays for some
// checkpoints itself; a larger limit or more frequent background
// checkpoints did not raise the benchmark's trigger rate (bench/README.md).
const (
	checkpointEvery   = time.Second
	walAutocheckpoint = 10000
)

// Open opens the database at path: a PostgreSQL URL (IsPostgresURL), a
// SQLite file, or a fresh in-memory SQLite database for MemoryPath.
//
// A bare ":memory:" would give every connection its own empty database, so an
// in-memory database is opened through SQLite's memdb VFS under a unique name
// starting with "/", which all connections of this process share, with real
// locking between them.
func Open(ctx context.Context, path string, opts ...OpenOption) (*DB, error) {
	if IsPostgresURL(path) {
		return openPG(ctx, path)
	}
	o := openOptions{mmapSize: DefaultMmapSize}
	for _, opt := range opts {
		opt(&o)
	}
	base, memory := "file:"+path, false
	if path == MemoryPath {
		base, memory = "file:/herald-"+randomHex(8)+"?vfs=memdb", true
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	// busy_timeout covers the moments a reader holds a lock the writer needs;
	// foreign_keys is off by default in SQLite; _txlock=immediate takes the
	// write lock at BEGIN so a transaction never fails half-way on upgrade.
	// temp_store(MEMORY) keeps statement and savepoint journals in memory:
	// on disk, every page a savepoint first touches is also written to a
	// temporary file, which the worker's per-job savepoints paid for.
	// auto_vacuum(INCREMENTAL) lets retention give the pages it frees back
	// to the file system (Vacuum); it takes effect only on a new file,
	// before its first table, so it comes first.
	common := base + sep + "_pragma=auto_vacuum(2)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)"
	if !memory {
		// WAL lets readers run while the writer commits; NORMAL sync is safe
		// with WAL (a power loss can drop the last commits, never corrupt).
		common += "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	}
	// A checkpoint fsyncs the WAL and the database file. Left to the
	// writer (SQLite's default, every 1,000 pages), those fsyncs stall
	// every write queued behind it; so the writer checkpoints only past
	// walAutocheckpoint pages, and a connection of its own checkpoints in
	// the background (PASSIVE: it never blocks the writer or readers).
	wDSN := common + "&_txlock=immediate"
	if !memory {
		wDSN += fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", walAutocheckpoint)
	}
	w, err := sql.Open("sqlite", wDSN)
	if err != nil {
		return nil, fmt.Errorf("open writer: %w", err)
	}
	w.SetMaxOpenConns(1)
	// An in-memory database lives only while a connection is open: keep the
	// writer's connection forever.
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}

	// Readers copy the pages they read into SQLite's page cache with a
	// read system call unless told to map the file (mmap_size). A mapping
	// saves a feed request some CPU, but SQLite maps the file once per
	// connection, and the kernel counts a mapped page in the resident set
	// once per mapping that touched it: with every reader mapping, the
	// process shows the same page cache several times over, up to readers
	// × mmap_size more than its own memory (docs/memory.md).
	r, err := sql.Open("sqlite", common+fmt.Sprintf("&_pragma=query_only(1)&_pragma=mmap_size(%d)", o.mmapSize))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open readers: %w", err)
	}
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	db := &DB{w: w, r: r, instance: NewID(), dsn: common}
	if !memory {
		ck, err := sql.Open("sqlite", common)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open checkpointer: %w", err)
		}
		ck.SetMaxOpenConns(1)
		ck.SetMaxIdleConns(1)
		db.checkpointer, db.stop, db.stopped = ck, make(chan struct{}), make(chan struct{})
		go db.checkpoint()
	}
	return db, nil
}

// DefaultMmapSize is how much of the database file each reader connection
// maps into memory unless told otherwise (HERALD_MMAP_SIZE): none, so that
// Herald's resident memory is its own and not the file's pages counted once
// per reader.
const DefaultMmapSize = 0

// An OpenOption changes how Open opens the database.
type OpenOption func(*openOptions)

type openOptions struct {
	mmapSize int64
}

// WithMmapSize sets how many bytes of the file each reader maps (SQLite's
// mmap_size); 0 maps none.
func WithMmapSize(n int64) OpenOption {
	return func(o *openOptions) { o.mmapSize = n }
}

// checkpoint copies the WAL back into the database file every
// checkpointEvery, until Close.
func (db *DB) checkpoint() {
	defer close(db.stopped)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-tick.C:
			// An error (the database is busy, say) is retried at the next tick.
			db.checkpointer.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// Close stops checkpointing and closes the pools.
func (db *DB) Close() error {
	db.closeListen()
	db.closeStmts()
	var errs []error
	if db.checkpointer != nil {
		close(db.stop)
		<-db.stopped
		errs = append(errs, db.checkpointer.Close())
	}
	return errors.Join(append(errs, db.r.Close(), db.w.Close())...)
}

// Ping checks that both pools can reach the database.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.w.PingContext(ctx); err != nil {
		return err
	}
	return db.r.PingContext(ctx)
}

// Tx runs fn inside a write transaction, committing when fn returns nil and
// rolling back otherwise.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	db.commits.begin(tx)
	defer db.commits.end(tx)
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	db.commits.run(tx)
	return nil
}

// ExecContext runs a statement that writes, on the writer.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.w.ExecContext(ctx, query, args...)
}

// QueryContext runs query on the pool its kind calls for (see pool).
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.pool(query).QueryContext(ctx, query, args...)
}

// QueryRowContext is QueryContext for at most one row; errors surface at
// Scan.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return db.pool(query).QueryRowContext(ctx, query, args...)
}

// pool is the pool a statement outside a transaction runs on: a SELECT
// only reads, and runs on the read pool beside the writer; any other
// statement (an UPDATE … RETURNING, a PRAGMA) may write, and queues for the
// writer.
func (db *DB) pool(query string) *sql.DB {
	q := strings.TrimLeft(query, " \t\r\n")
	if len(q) >= 6 && strings.EqualFold(q[:6], "SELECT") {
		return db.r
	}
	return db.w
}

// WriterStats reports the writer pool: how often and how long statements
// waited for its one connection.
func (db *DB) WriterStats() sql.DBStats { return db.w.Stats() }

// Collectors report both pools to Prometheus, labelled writer and reader.
func (db *DB) Collectors() []prometheus.Collector {
	return []prometheus.Collector{collectors.NewDBStatsCollector(db.w, "writer"), collectors.NewDBStatsCollector(db.r, "reader")}
}

// Migrate applies every up migration in src that the database lacks; on
// PostgreSQL, those in src's postgres folder. A database whose schema is
// newer than src is refused: this binary would not know its tables.
func Migrate(db *DB, src fs.FS) error {
	m, done, err := newMigrate(db, src)
	if err != nil {
		return err
	}
	defer done()
	if err := refuseNewer(m, db, src); err != nil {
		return err
	}
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// MigrateDown reverts every migration; the migration test uses it to prove
// each down file undoes its up file.
func MigrateDown(db *DB, src fs.FS) error {
	m, done, err := newMigrate(db, src)
	if err != nil {
		return err
	}
	defer done()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// newMigrate builds a migrator, and done to call when it has run. On SQLite
// it runs on the writer pool and is never Closed: that would close the pool
// it was given.
func newMigrate(db *DB, src fs.FS) (m *migrate.Migrate, done func(), err error) {
	if db.Postgres {
		return newMigratePG(db, src)
	}
	source, err := iofs.New(src, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("migration source: %w", err)
	}
	driver, err := migratesqlite.WithInstance(db.w, &migratesqlite.Config{})
	if err != nil {
		return nil, nil, fmt.Errorf("migration driver: %w", err)
	}
	m, err = migrate.NewWithInstance("iofs", source, "sqlite", driver)
	return m, func() {}, err
}

// refuseNewer fails when the database was migrated past the last version in
// src, by a newer Herald.
func refuseNewer(m *migrate.Migrate, db *DB, src fs.FS) error {
	have, _, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if db.Postgres {
		if src, err = fs.Sub(src, postgresMigrations); err != nil {
			return err
		}
	}
	latest, err := latestVersion(src)
	if err != nil {
		return err
	}
	if have > latest {
		return fmt.Errorf("the database's schema is at version %d, newer than this Herald's %d: run the Herald that migrated it, or a newer one", have, latest)
	}
	return nil
}

// latestVersion is the highest migration version in src.
func latestVersion(src fs.FS) (uint, error) {
	names, err := fs.Glob(src, "*.up.sql")
	if err != nil {
		return 0, err
	}
	var latest uint
	for _, name := range names {
		var v uint
		if _, err := fmt.Sscanf(name, "%d_", &v); err == nil && v > latest {
			latest = v
		}
	}
	return latest, nil
}

// Placeholders is n bound parameters for an IN list, "?, ?, ?"; n must be
// at least 1.
func Placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// IsUniqueViolation reports whether err is the database refusing a
// duplicate key. It reads the result code, never the message text.
func IsUniqueViolation(err error) bool {
	if isPGCode(err, pgUniqueViolation) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

package sqldbtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of pgAdmin

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// DatabaseURL is TEST_DATABASE_URL: when set, NewDB gives each test a fresh
// PostgreSQL database on that server instead of an in-memory SQLite one.
var DatabaseURL = os.Getenv("TEST_DATABASE_URL")

// OnPostgres reports whether tests run on PostgreSQL.
func OnPostgres() bool { return DatabaseURL != "" }

// SQLiteOnly skips a test that means something on SQLite alone (a query
// plan, a PRAGMA, a file on disk), saying why.
func SQLiteOnly(t testing.TB, why string) {
	t.Helper()
	if OnPostgres() {
		t.Skip("SQLite only: " + why)
	}
}

// NewPostgresURL creates a fresh database migrated to the latest schema on
// TEST_DATABASE_URL's server, dropped by t.Cleanup, and returns its URL.
// Each is a copy of a template migrated once per schema.
func NewPostgresURL(t testing.TB) string {
	t.Helper()
	tmpl, err := pgTemplate()
	if err != nil {
		t.Fatalf("postgres template: %v", err)
	}
	name := "herald_test_" + randomName()
	admin := pgAdmin()
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + tmpl); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() { admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) })
	return withDatabase(DatabaseURL, name)
}

var (
	adminOnce sync.Once
	adminDB   *sql.DB
	tmplOnce  sync.Once
	tmplName  string
	tmplErr   error
)

// pgAdmin is a pool on TEST_DATABASE_URL's own database, for CREATE and
// DROP DATABASE.
func pgAdmin() *sql.DB {
	adminOnce.Do(func() {
		adminDB, _ = sql.Open("pgx", DatabaseURL)
		adminDB.SetMaxOpenConns(4)
	})
	return adminDB
}

// pgTemplate returns the template database holding the migrated schema,
// named by a digest of the migrations so a changed schema gets its own. Test
// binaries of several packages run at once: an advisory lock lets one of
// them create it, and it is migrated under a temporary name and renamed
// when complete, so a template that exists is whole.
func pgTemplate() (string, error) {
	tmplOnce.Do(func() {
		tmplName, tmplErr = makeTemplate()
	})
	return tmplName, tmplErr
}

func makeTemplate() (string, error) {
	h := sha256.New()
	fs.WalkDir(migrations.FS, "postgres", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(migrations.FS, path)
			h.Write([]byte(path))
			h.Write(b)
		}
		return nil
	})
	name := "herald_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]
	ctx := context.Background()
	conn, err := pgAdmin().Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7316110)`); err != nil {
		return "", err
	}
	defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock(7316110)`)
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		return name, err
	}
	building := name + "_building"
	conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`)
	// The C locale and UTF-8, whatever the server's default.
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+building+` TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`); err != nil {
		return "", err
	}
	db, err := sqldb.Open(ctx, withDatabase(DatabaseURL, building))
	if err != nil {
		return "", err
	}
	err = sqldb.Migrate(db, migrations.FS)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	// Every pooled connection to it must be gone before it can be copied.
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	_, err = conn.ExecContext(ctx, `ALTER DATABASE `+name+` WITH IS_TEMPLATE true`)
	return name, err
}

// withDatabase is the URL u with its database replaced by name.
func withDatabase(u, name string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		panic("TEST_DATABASE_URL: " + err.Error())
	}
	parsed.Path = "/" + name
	return parsed.String()
}

func randomName() string {
	return strings.ToLower(sqldb.NewID())
}

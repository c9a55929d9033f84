package migrations_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestAPIKeyRevocation checks that 000023 gives the keys a database already
// has an id in the ObjectId layout, from their creation second, and keeps
// them working.
func TestAPIKeyRevocation(t *testing.T) {
	is := is.New(t)
	db := openAt(t, "000022")
	_, err := db.ExecContext(context.Background(), `
		INSERT INTO organizations (id, name, created_at) VALUES ('o', 'Herald', '2026-01-01T00:00:00.000Z');
		INSERT INTO users (id, organization_id, first_name, last_name, email, created_at) VALUES ('u', 'o', 'H', 'S', 's@h', '2026-01-01T00:00:00.000Z');
		INSERT INTO environments (id, organization_id, name, identifier, created_at) VALUES ('e', 'o', 'Development', 'dev', '2026-01-01T00:00:00.000Z');
		INSERT INTO api_keys (hash, environment_id, user_id, hint, created_at) VALUES ('h1', 'e', 'u', 'abcd', '2026-11-21T10:04:05.123Z');
		INSERT INTO api_keys (hash, environment_id, user_id, hint, created_at) VALUES ('h2', 'e', 'u', 'efgh', '2026-11-21T10:04:05.123Z')`)
	is.NoErr(err) // keys of release 22

	is.NoErr(sqldb.Migrate(db, migrations.FS)) // up to revocable keys
	ids := column(t, db, `SELECT id FROM api_keys ORDER BY hash`)
	is.Equal(len(ids), 2)                                                                                      // both keys kept
	objectID := regexp.MustCompile(`^6b016c95[0-9a-f]{16}$`)                                                   // 2026-11-21T10:04:05Z
	is.True(objectID.MatchString(ids[0]))                                                                      // an id from the creation second
	is.True(ids[0] != ids[1])                                                                                  // and unique
	is.Equal(count(t, db, `SELECT count(*) FROM api_keys WHERE revoked_at IS NULL AND source = 'unknown'`), 2) // working, of unknown source
	is.Equal(count(t, db, `SELECT CAST(value AS INTEGER) FROM settings WHERE name = 'api_keys_revoked'`), 0)   // no revocation yet
}

package migrations_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// upTo is the migrations up to and including version, so a test can stand
// a database where an older release left it.
type upTo struct {
	fs.FS
	version string // six digits
}

func (u upTo) ReadDir(name string) ([]fs.DirEntry, error) {
	all, err := fs.ReadDir(u.FS, name)
	var kept []fs.DirEntry
	for _, e := range all {
		if e.Name()[:6] <= u.version {
			kept = append(kept, e)
		}
	}
	return kept, err
}

// every is a version past the last migration: openAt(t, every) applies them all.
const every = "999999"

// openAt opens an in-memory database migrated as release version left it.
func openAt(t *testing.T, version string) *sqldb.DB {
	t.Helper()
	db, err := sqldb.Open(context.Background(), sqldb.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(db, upTo{migrations.FS, version}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestLeanDetails_KeepsRows checks that 000009's rebuild of
// execution_details keeps every row and its order, and that details
// written after it still sort after the old ones.
func TestLeanDetails_KeepsRows(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000008")

	_, err := db.ExecContext(ctx, `
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_ref, subscriber_snapshot,
			template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity,
			critical, preferences, actor, created_at, updated_at)
		VALUES ('n1', 'e', 'o', 's', 'ref', '{}', 't', 'w', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', 'now', 'now');
		INSERT INTO jobs (id, environment_id, organization_id, notification_id, transaction_id, subscriber_id, template_id,
			position, type, step_id, step, controls, provider_id, status, created_at, updated_at)
		VALUES ('j1', 'e', 'o', 'n1', 'tx', 's', 't', 0, 'trigger', 'trigger', '{}', '{}', 'service', 'completed', 'now', 'now');
		INSERT INTO execution_details (id, environment_id, notification_id, job_id, status, detail, source, provider_id, created_at)
		VALUES ('d1', 'e', 'n1', 'j1', 'Pending', 'Step queued', 'Internal', 'service', 'now'),
		       ('d2', 'e', 'n1', 'j1', 'Success', 'Step done', 'Internal', 'service', 'now');`)
	is.NoErr(err) // rows of release 8

	is.NoErr(sqldb.Migrate(db, upTo{migrations.FS, "000062"})) // up to the lean table, before 000063 made it leaner
	_, err = db.ExecContext(ctx, `
		INSERT INTO execution_details (id, environment_id, notification_id, job_id, status, detail, source, provider_id, created_at)
		VALUES ('d3', 'e', 'n1', 'j1', 'Success', 'Later', 'Internal', 'service', 'now')`)
	is.NoErr(err) // a detail written after the rebuild

	rows, err := db.QueryContext(ctx, `SELECT id FROM execution_details WHERE notification_id = 'n1' ORDER BY seq`)
	is.NoErr(err) // read back
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		is.NoErr(rows.Scan(&id)) // scan
		ids = append(ids, id)
	}
	is.Equal(strings.Join(ids, ","), "d1,d2,d3") // old rows kept, in order, new one after them
}

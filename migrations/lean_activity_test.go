package migrations_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// leanActivityRows are a notification with two jobs and their details as
// a release before 000062 wrote them: a detail of a known kind written
// with the notification, one of a known kind written later, one of its
// own words, and an in-app message with its stored feed item.
const leanActivityRows = `
	INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
		template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity,
		critical, preferences, actor, created_at, updated_at)
	VALUES ('n1', 'e', 'o', 's', '{}', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', 't0', 't0');
	INSERT INTO jobs (id, environment_id, organization_id, notification_id, transaction_id, subscriber_id, template_id,
		position, type, step_id, step, provider_id, status, created_at, updated_at)
	VALUES ('j1', 'e', 'o', 'n1', 'tx', 's', 'w', 0, 'trigger', 'trigger', '{}', 'service', 'completed', 't0', 't0'),
	       ('j2', 'e', 'o', 'n1', 'tx', 's', 'w', 1, 'in_app', 'inbox', '{}', 'service', 'completed', 't0', 't1');
	INSERT INTO execution_details (id, environment_id, notification_id, job_id, status, detail, source, provider_id, raw, created_at)
	VALUES ('d1', 'e', 'n1', 'j1', 'Pending', 'Step queued', 'Internal', 'service', NULL, 't0'),
	       ('d2', 'e', 'n1', 'j2', 'Success', 'Message sent', 'Internal', 'service', NULL, 't1'),
	       ('d3', 'e', 'n1', 'j2', 'Failed', 'Subscriber not found', 'Internal', 'service', '{"x":1}', 't1');
	INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id, subscriber_id, external_subscriber,
		transaction_id, channel, status, created_at, updated_at, feed_item)
	VALUES ('m1', 'e', 'o', 'j2', 'n1', 's', 'ada', 'tx', 'in_app', 'sent', 't1', 't1', '{"_id":"m1"}');`

// TestLeanActivity_KeepsWhatIsRead checks that 000062 to 000064 keep every
// value a notification's jobs, details and messages are read with, each
// once, and that their down files put each copy back where a release
// before them reads it.
func TestLeanActivity_KeepsWhatIsRead(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000061")
	_, err := db.ExecContext(ctx, leanActivityRows)
	is.NoErr(err) // rows of release 61

	is.NoErr(sqldb.Migrate(db, upTo{migrations.FS, "000064"}))
	is.Equal(column(t, db, `SELECT id || ' ' || kind || ' ' || coalesce(status, '-') || ' ' || coalesce(detail, '-') || ' ' ||
		coalesce(source, '-') || ' ' || coalesce(created_at, '-') || ' ' || coalesce(raw, '-') FROM execution_details ORDER BY seq`),
		[]string{"d1 1 - - - - -", "d2 3 - - - t1 -", `d3 0 Failed Subscriber not found Internal t1 {"x":1}`}) // known texts as their kind, the notification's time as NULL
	for _, gone := range []string{`pragma_table_info('execution_details') WHERE name = 'environment_id'`,
		`pragma_table_info('messages') WHERE name = 'feed_item'`,
		`pragma_table_info('jobs') WHERE name IN ('organization_id', 'transaction_id', 'subscriber_id', 'template_id')`} {
		is.Equal(count(t, db, `SELECT count(*) FROM `+gone), 0) // the copy is gone
	}
	is.Equal(column(t, db, `SELECT id || ' ' || notification_id || ' ' || position FROM jobs ORDER BY id`), []string{"j1 n1 0", "j2 n1 1"})
	is.Equal(count(t, db, `SELECT count(*) FROM messages WHERE id = 'm1'`), 1) // the message stays

	for _, name := range []string{"000064_lean_jobs.down.sql", "000063_lean_execution_details.down.sql", "000062_message_feed_items.down.sql"} {
		down, err := fs.ReadFile(migrations.FS, name)
		is.NoErr(err)
		_, err = db.ExecContext(ctx, string(down))
		is.NoErr(err) // the down file runs
	}
	is.Equal(column(t, db, `SELECT id || ' ' || environment_id || ' ' || status || ' ' || detail || ' ' || source || ' ' || created_at FROM execution_details ORDER BY seq`),
		[]string{"d1 e Pending Step queued Internal t0", "d2 e Success Message sent Internal t1", "d3 e Failed Subscriber not found Internal t1"})
	is.Equal(column(t, db, `SELECT id || ' ' || organization_id || ' ' || transaction_id || ' ' || subscriber_id || ' ' || template_id FROM jobs ORDER BY id`),
		[]string{"j1 o tx s w", "j2 o tx s w"})
	is.Equal(count(t, db, `SELECT count(*) FROM messages WHERE feed_item IS NULL`), 1) // built from its columns by the release before
}

// TestLeanActivity_Postgres checks 000062 to 000064 on PostgreSQL the way
// TestLeanActivity_KeepsWhatIsRead does on SQLite: from a database taken
// down to 000061 and holding rows of then, up, then down again.
func TestLeanActivity_Postgres(t *testing.T) {
	if sqldbtest.DatabaseURL == "" {
		t.Skip("needs TEST_DATABASE_URL")
	}
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, sqldbtest.NewPostgresURL(t))
	is.NoErr(err)
	defer db.Close()
	run := postgresRunner(t, db)
	run("000066_execution_details_by_notification.down.sql")
	run("000064_lean_jobs.down.sql")
	run("000063_lean_execution_details.down.sql")
	run("000062_message_feed_items.down.sql")
	_, err = db.ExecContext(ctx, leanActivityRows)
	is.NoErr(err) // rows of release 61
	run("000062_message_feed_items.up.sql")
	run("000063_lean_execution_details.up.sql")
	run("000064_lean_jobs.up.sql")
	is.Equal(column(t, db, `SELECT id || ' ' || kind || ' ' || coalesce(status, '-') || ' ' || coalesce(detail, '-') || ' ' ||
		coalesce(source, '-') || ' ' || coalesce(created_at, '-') || ' ' || coalesce(raw, '-') FROM execution_details ORDER BY seq`),
		[]string{"d1 1 - - - - -", "d2 3 - - - t1 -", `d3 0 Failed Subscriber not found Internal t1 {"x":1}`}) // known texts as their kind, the notification's time as NULL
	run("000064_lean_jobs.down.sql")
	run("000063_lean_execution_details.down.sql")
	run("000062_message_feed_items.down.sql")
	is.Equal(column(t, db, `SELECT id || ' ' || environment_id || ' ' || status || ' ' || detail || ' ' || source || ' ' || created_at FROM execution_details ORDER BY seq`),
		[]string{"d1 e Pending Step queued Internal t0", "d2 e Success Message sent Internal t1", "d3 e Failed Subscriber not found Internal t1"})
	is.Equal(column(t, db, `SELECT id || ' ' || organization_id || ' ' || transaction_id || ' ' || subscriber_id || ' ' || template_id FROM jobs ORDER BY id`),
		[]string{"j1 o tx s w", "j2 o tx s w"}) // each job's copies back
}

// postgresRunner returns a function running one of PostgreSQL's migration
// files, by name, on db.
func postgresRunner(t *testing.T, db *sqldb.DB) func(name string) {
	return func(name string) {
		t.Helper()
		b, err := fs.ReadFile(migrations.FS, "postgres/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(context.Background(), string(b)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

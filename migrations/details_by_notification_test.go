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

// numberedDetails are two notifications' details as a release before
// 000066 numbered them: one sequence across both, interleaved.
const numberedDetails = `
	INSERT INTO execution_details (seq, id, notification_id, job_id, kind, provider_id)
	VALUES (7, 'a1', 'na', 'j', 1, 'service'), (8, 'b1', 'nb', 'j', 1, 'service'),
	       (9, 'a2', 'na', 'j', 2, 'service'), (12, 'b2', 'nb', 'j', 3, 'service')`

// nextDetail adds a detail to na numbered as the writer numbers it since
// 000066: the largest of its notification's plus one.
const nextDetail = `
	INSERT INTO execution_details (notification_id, seq, id, job_id, kind, provider_id)
	VALUES ('na', (SELECT coalesce(max(seq), 0) + 1 FROM execution_details WHERE notification_id = 'na'), 'a3', 'j', 3, 'service')`

// inOrder is each notification's details in the order they read.
const inOrder = `SELECT id FROM execution_details ORDER BY notification_id, seq`

// TestDetailsByNotification_KeepsOrder checks that 000066 keeps every
// detail in its notification's order, that one numbered after it sorts
// last, and that its down file gives back a table numbering its rows
// itself, in the same order.
func TestDetailsByNotification_KeepsOrder(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000065")
	_, err := db.ExecContext(ctx, numberedDetails)
	is.NoErr(err) // rows of release 65

	is.NoErr(sqldb.Migrate(db, migrations.FS))
	is.Equal(column(t, db, inOrder), []string{"a1", "a2", "b1", "b2"}) // kept, in order
	_, err = db.ExecContext(ctx, nextDetail)
	is.NoErr(err)                                                            // a detail written after
	is.Equal(column(t, db, inOrder), []string{"a1", "a2", "a3", "b1", "b2"}) // after its notification's others

	down, err := fs.ReadFile(migrations.FS, "000066_execution_details_by_notification.down.sql")
	is.NoErr(err)
	_, err = db.ExecContext(ctx, string(down))
	is.NoErr(err) // the down file runs
	_, err = db.ExecContext(ctx, `INSERT INTO execution_details (id, notification_id, job_id, kind, provider_id) VALUES ('b3', 'nb', 'j', 1, 'service')`)
	is.NoErr(err) // numbered by the table, as a release before writes
	is.Equal(column(t, db, inOrder), []string{"a1", "a2", "a3", "b1", "b2", "b3"})
}

// TestDetailsByNotification_Postgres checks 000066 on PostgreSQL the same
// way, from a database taken down to 000065.
func TestDetailsByNotification_Postgres(t *testing.T) {
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
	_, err = db.ExecContext(ctx, numberedDetails)
	is.NoErr(err) // rows of release 65

	run("000066_execution_details_by_notification.up.sql")
	_, err = db.ExecContext(ctx, nextDetail)
	is.NoErr(err) // a detail written after
	is.Equal(column(t, db, inOrder), []string{"a1", "a2", "a3", "b1", "b2"})
	_, err = db.ExecContext(ctx, `INSERT INTO execution_details (id, notification_id, job_id, kind, provider_id) VALUES ('x', 'nb', 'j', 1, 'service')`)
	is.True(err != nil) // nothing numbers a row but its writer

	run("000066_execution_details_by_notification.down.sql")
	_, err = db.ExecContext(ctx, `INSERT INTO execution_details (id, notification_id, job_id, kind, provider_id) VALUES ('b3', 'nb', 'j', 1, 'service')`)
	is.NoErr(err) // numbered by the table again, past every row
	is.Equal(column(t, db, inOrder), []string{"a1", "a2", "a3", "b1", "b2", "b3"})
}

// TestJobsWithoutParent checks that 000067 drops the column naming a job's
// parent, and that its down file names each parent that is stored again.
func TestJobsWithoutParent(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000066")
	_, err := db.ExecContext(ctx, insertNotifications+`('n', 'e', 'o', 's', '{}', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', 't', 't'),
		       ('m', 'e', 'o', 's', '{}', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', 't', 't');
		INSERT INTO jobs (id, environment_id, notification_id, parent_id, position, type, step_id, step, provider_id, status, created_at, updated_at)
		VALUES ('j0', 'e', 'n', '', 0, 'trigger', 'trigger', '{}', 'service', 'completed', 't', 't'),
		       ('j1', 'e', 'n', 'j0', 1, 'in_app', 'inbox', '{}', 'service', 'completed', 't', 't'),
		       ('k1', 'e', 'm', 'k0', 1, 'in_app', 'inbox', '{}', 'service', 'completed', 't', 't')`)
	is.NoErr(err) // jobs of release 66, the last of a notification whose trigger job is derived

	is.NoErr(sqldb.Migrate(db, migrations.FS))
	is.Equal(count(t, db, `SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'parent_id'`), 0) // gone

	down, err := fs.ReadFile(migrations.FS, "000067_jobs_without_parent.down.sql")
	is.NoErr(err)
	_, err = db.ExecContext(ctx, string(down))
	is.NoErr(err) // the down file runs
	is.Equal(column(t, db, `SELECT id || ':' || parent_id FROM jobs ORDER BY id`), []string{"j0:", "j1:j0", "k1:"})
}

// TestDeletedSubscribers_DownKeepsCopies checks that 000068's down file
// gives each notification written without a copy of its subscriber one:
// the summary kept at the subscriber's deletion, or its _id alone.
func TestDeletedSubscribers_DownKeepsCopies(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, every)
	_, err := db.ExecContext(ctx, insertNotifications+`('n1', 'e', 'o', 'gone', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't', ''),
		       ('n2', 'e', 'o', 'live', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't', ''),
		       ('n3', 'e', 'o', 'old', '{"_id":"old"}', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't', '');
		INSERT INTO deleted_subscribers (environment_id, subscriber_id, summary) VALUES ('e', 'gone', '{"_id":"gone","subscriberId":"g"}');`)
	is.NoErr(err) // rows of release 68

	down, err := fs.ReadFile(migrations.FS, "000068_deleted_subscribers.down.sql")
	is.NoErr(err)
	_, err = db.ExecContext(ctx, string(down))
	is.NoErr(err) // the down file runs
	is.Equal(column(t, db, `SELECT subscriber_snapshot FROM notifications ORDER BY id`),
		[]string{`{"_id":"gone","subscriberId":"g"}`, `{"_id":"live"}`, `{"_id":"old"}`})
}

// TestLeftOutValues_DownWritesThem checks that 000069's down file writes
// out each value a row leaves out.
func TestLeftOutValues_DownWritesThem(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, every)
	_, err := db.ExecContext(ctx, insertNotifications+`('n1', 'e', 'o', 's', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't0', ''),
		       ('n2', 'e', 'o', 's', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{"type":"user","data":"a"}', 't0', 't1');
		INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id, subscriber_id, external_subscriber,
			transaction_id, channel, status, actor, created_at, updated_at)
		VALUES ('m1', 'e', 'o', 'j1', 'n1', 's', 'ada', 'tx', 'in_app', 'sent', '', 't0', 't0');
		UPDATE messages SET cta = '', updated_at = '', delivered_at = '';`)
	is.NoErr(err) // rows of release 69

	down, err := fs.ReadFile(migrations.FS, "000069_left_out_values.down.sql")
	is.NoErr(err)
	_, err = db.ExecContext(ctx, string(down))
	is.NoErr(err) // the down file runs
	is.Equal(column(t, db, `SELECT actor || ' ' || updated_at FROM notifications ORDER BY id`),
		[]string{`{"type":"none","data":null} t0`, `{"type":"user","data":"a"} t1`})
	is.Equal(column(t, db, `SELECT actor || ' ' || cta || ' ' || updated_at || ' ' || delivered_at FROM messages`),
		[]string{`{"type":"none","data":null} {"data":{},"type":"redirect"} t0 ["t0"]`})
}

// insertNotifications begins an INSERT of notifications with the columns a
// release since 000066 requires, up to its VALUES.
const insertNotifications = `
	INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
		template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity,
		critical, preferences, actor, created_at, updated_at)
	VALUES `

// TestLeftOutOrganizations_DownWritesThem checks that 000071's down file,
// on each store, writes out the organization a notification and a message leave out.
func TestLeftOutOrganizations_DownWritesThem(t *testing.T) {
	downOnEachStore(t, "000071_left_out_organizations.down.sql", func(t *testing.T, db *sqldb.DB, down func()) {
		is := is.New(t)
		_, err := db.ExecContext(context.Background(), `
		INSERT INTO organizations (id, name, created_at) VALUES ('o', 'Herald', 't0');
		INSERT INTO environments (id, organization_id, name, identifier, created_at) VALUES ('e', 'o', 'Development', 'dev', 't0');`+
			insertNotifications+`('n1', 'e', '', 's', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't0', ''),
		       ('n2', 'e', 'p', 's', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't0', '');
		INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id, subscriber_id, external_subscriber,
			transaction_id, channel, status, created_at, updated_at)
		VALUES ('m1', 'e', '', 'j1', 'n1', 's', 'ada', 'tx', 'in_app', 'sent', 't0', '')`)
		is.NoErr(err) // rows of release 71
		down()
		is.Equal(column(t, db, `SELECT organization_id FROM notifications ORDER BY id`), []string{"o", "p"})
		is.Equal(column(t, db, `SELECT organization_id FROM messages`), []string{"o"})
	})
}

// TestLeftOutJobValues_DownWritesThem checks that 000070's down file, on
// each store, writes out the times a job leaves out and the _id and job a
// detail does.
func TestLeftOutJobValues_DownWritesThem(t *testing.T) {
	const nid = "6b0c38550f7d92d1a5968c4e"
	rows := insertNotifications + `('` + nid + `', 'e', 'o', 's', '', 'w', 'wf', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '', 't0', '');
		INSERT INTO jobs (id, environment_id, notification_id, position, type, step_id, step, provider_id, status, created_at, updated_at)
		VALUES ('j1', 'e', '` + nid + `', 1, 'in_app', 'inbox', '{}', 'service', 'completed', '', ''),
		       ('j2', 'e', '` + nid + `', 2, 'digest', 'digest', '{}', 'service', 'pending', 't1', 't2');
		INSERT INTO execution_details (notification_id, seq, id, job_id, kind, provider_id)
		VALUES ('` + nid + `', 1, '', '', 2, 'service'), ('` + nid + `', 2, 'd2', 'j2', 3, 'service')`
	check := func(t *testing.T, db *sqldb.DB, down func()) {
		is := is.New(t)
		_, err := db.ExecContext(context.Background(), rows)
		is.NoErr(err) // rows of release 70
		down()
		is.Equal(column(t, db, `SELECT id || ' ' || created_at || ' ' || updated_at FROM jobs ORDER BY id`), []string{"j1 t0 t0", "j2 t1 t2"})
		is.Equal(column(t, db, `SELECT job_id FROM execution_details ORDER BY seq`), []string{"j1", "j2"})
		ids := column(t, db, `SELECT id FROM execution_details ORDER BY seq`)
		is.True(sqldb.IsID(ids[0]) && ids[0][:8] == nid[:8]) // an _id of its notification's seconds
		is.Equal(ids[1], "d2")
	}
	downOnEachStore(t, "000070_left_out_job_values.down.sql", check)
}

// downOnEachStore runs check on a SQLite database at the last version and,
// with TEST_DATABASE_URL, on a PostgreSQL one, each time with down running
// the store's own down file of that name.
func downOnEachStore(t *testing.T, name string, check func(t *testing.T, db *sqldb.DB, down func())) {
	t.Run("sqlite", func(t *testing.T) {
		db := openAt(t, every)
		check(t, db, func() {
			b, err := fs.ReadFile(migrations.FS, name)
			if err == nil {
				_, err = db.ExecContext(context.Background(), string(b))
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		if sqldbtest.DatabaseURL == "" {
			t.Skip("needs TEST_DATABASE_URL")
		}
		db, err := sqldb.Open(context.Background(), sqldbtest.NewPostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, db, func() { postgresRunner(t, db)(name) })
	})
}

package migrations_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestNotificationsIndexes checks that 000019 keeps every notification and
// keys notifications_subscriber by the subscriber's _id, that 000020 carries
// the list's filters at the end of notifications_list, and that their down
// files bring each notification's subscriberId back from its snapshot.
func TestNotificationsIndexes(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000018")
	_, err := db.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_ref,
			subscriber_snapshot, template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient,
			tags, severity, critical, preferences, actor, created_at, updated_at)
		SELECT printf('n%03d', i), 'e', 'o', printf('id%d', i % 7), printf('sub%d', i % 7),
			json_object('subscriberId', printf('sub%d', i % 7)), 't', 'w', printf('tx%d', i), '["in_app"]', '{}', '{}',
			'{}', '{}', '[]', 'none', 0, '{}', '{}', printf('2026-11-24T00:00:00.%03dZ', i), 'now'
		FROM n`)
	is.NoErr(err) // notifications at 000018

	is.NoErr(sqldb.Migrate(db, migrations.FS))                        // up to the latest
	is.Equal(count(t, db, `SELECT count(*) FROM notifications`), 100) // every row kept
	is.Equal(count(t, db, `SELECT count(*) FROM notifications INDEXED BY notifications_subscriber
		WHERE environment_id = 'e' AND subscriber_id = 'id3'`), 14) // found by _id through the index
	is.Equal(count(t, db, `SELECT count(*) FROM pragma_table_info('notifications') WHERE name = 'subscriber_ref'`), 0) // the subscriberId copy gone
	is.Equal(column(t, db, `SELECT name FROM pragma_index_info('notifications_list') ORDER BY seqno`),
		[]string{"environment_id", "created_at", "id", "severity", "channels", "template_id", "subscriber_id"})

	for _, name := range []string{"000020_notifications_list_filters.down.sql", "000019_notifications_by_subscriber_id.down.sql"} {
		down, err := fs.ReadFile(migrations.FS, name)
		is.NoErr(err)
		_, err = db.ExecContext(ctx, string(down))
		is.NoErr(err) // down, newest first
	}
	is.Equal(count(t, db, `SELECT count(*) FROM notifications INDEXED BY notifications_subscriber
		WHERE environment_id = 'e' AND subscriber_ref = 'sub3'`), 14) // down: the subscriberIds back, from the snapshots
}

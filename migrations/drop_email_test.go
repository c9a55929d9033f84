package migrations_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestDropNotificationEmail checks that 000018 keeps every notification and
// its indexes while it drops the address copied at trigger time.
func TestDropNotificationEmail(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000017")
	_, err := db.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_ref, subscriber_email,
			subscriber_snapshot, template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient,
			tags, severity, critical, preferences, actor, created_at, updated_at)
		SELECT printf('n%03d', i), 'e', 'o', 's', printf('sub%d', i % 7), 'a@example.com', '{}', 't', 'w', printf('tx%d', i),
			'[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', printf('2026-11-24T00:00:00.%03dZ', i), 'now'
		FROM n`)
	is.NoErr(err) // notifications at 000017

	is.NoErr(sqldb.Migrate(db, upTo{migrations.FS, "000018"}))
	is.Equal(count(t, db, `SELECT count(*) FROM notifications`), 100) // every row kept
	is.Equal(count(t, db, `SELECT count(*) FROM notifications INDEXED BY notifications_subscriber
		WHERE environment_id = 'e' AND subscriber_ref = 'sub3'`), 14) // and found through the indexes
	is.Equal(count(t, db, `SELECT count(*) FROM pragma_table_info('notifications') WHERE name = 'subscriber_email'`), 0) // the column gone
	is.Equal(count(t, db, `SELECT count(*) FROM sqlite_schema
		WHERE type = 'index' AND tbl_name = 'notifications' AND sql IS NOT NULL`), 4) // list, transaction, subscriber and workflow
}

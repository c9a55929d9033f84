package migrations_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// TestNotificationContexts checks that 000021 gives every context key of
// the notifications a database already has an entry, in the list's order.
func TestNotificationContexts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000020")
	_, err := db.ExecContext(ctx, `
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot, template_id,
			workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity, critical,
			preferences, actor, context_keys, created_at, updated_at)
		VALUES
			('n1', 'e', 'o', 's', '{}', 't', 'w', 'tx1', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}',
				'["team:ops","tenant:acme"]', '2026-11-25T00:00:01.000Z', 'now'),
			('n2', 'e', 'o', 's', '{}', 't', 'w', 'tx2', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}',
				'[]', '2026-11-25T00:00:02.000Z', 'now'),
			('n3', 'e', 'o', 's', '{}', 't', 'w', 'tx3', '[]', '{}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}',
				'["tenant:acme"]', '2026-11-25T00:00:03.000Z', 'now')`)
	is.NoErr(err) // notifications at 000020

	is.NoErr(sqldb.Migrate(db, migrations.FS)) // up to the latest
	is.Equal(column(t, db, `SELECT notification_id FROM notification_contexts
		WHERE environment_id = 'e' AND context_key = 'tenant:acme' ORDER BY created_at DESC`), []string{"n3", "n1"})
	is.Equal(column(t, db, `SELECT context_key || '/' || notification_id FROM notification_contexts
		ORDER BY context_key, created_at`), []string{"team:ops/n1", "tenant:acme/n1", "tenant:acme/n3"})
}

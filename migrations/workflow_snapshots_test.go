package migrations_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
)

// TestWorkflowSnapshots_DownPutsTheCopiesBack checks that 000061's down
// file writes each value a job or notification names by key back into
// its row, so that a release before it reads them.
func TestWorkflowSnapshots_DownPutsTheCopiesBack(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000061")
	foreignKeys := func(on string) {
		_, err := db.ExecContext(ctx, `PRAGMA foreign_keys = `+on)
		is.NoErr(err)
	}
	foreignKeys("OFF") // rows of their own, without the environment and workflow they name
	_, err := db.ExecContext(ctx, `
		INSERT INTO workflow_snapshots (id, body) VALUES ('#s', '{"name":"trigger"}'), ('#t', '{"_id":"w"}'), ('#p', '{"all":{}}');
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
			template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity,
			critical, preferences, actor, created_at, updated_at)
		VALUES ('n1', 'e', 'o', 's', '{}', 'w', 'wf', 'tx', '[]', '#t', '{}', '{}', '{}', '[]', 'none', 0, '#p', '{}', 'now', 'now'),
		       ('n2', 'e', 'o', 's', '{}', 'w', 'wf', 'tx2', '[]', '{"_id":"old"}', '{}', '{}', '{}', '[]', 'none', 0, '{}', '{}', 'now', 'now');
		INSERT INTO jobs (id, environment_id, organization_id, notification_id, transaction_id, subscriber_id, template_id,
			position, type, step_id, step, provider_id, status, created_at, updated_at)
		VALUES ('j1', 'e', 'o', 'n1', 'tx', 's', 'w', 0, 'trigger', 'trigger', '#s', 'service', 'completed', 'now', 'now'),
		       ('j2', 'e', 'o', 'n2', 'tx2', 's', 'w', 0, 'trigger', 'trigger', '{"name":"old"}', 'service', 'completed', 'now', 'now');`)
	is.NoErr(err)
	foreignKeys("ON")

	down, err := fs.ReadFile(migrations.FS, "000061_workflow_snapshots.down.sql")
	is.NoErr(err)
	_, err = db.ExecContext(ctx, string(down))
	is.NoErr(err)
	is.Equal(column(t, db, `SELECT step FROM jobs ORDER BY id`), []string{`{"name":"trigger"}`, `{"name":"old"}`})
	is.Equal(column(t, db, `SELECT template || ' ' || preferences FROM notifications ORDER BY id`),
		[]string{`{"_id":"w"} {"all":{}}`, `{"_id":"old"} {}`})
	is.Equal(count(t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'workflow_snapshots'`), 0)
}

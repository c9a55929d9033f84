package migrations_test

import (
	"context"
	"testing"

	"github.com/matryer/is"
)

// TestTimeIndexes_StayDenseAsRowsArrive writes messages and notifications
// in time order, as deliveries write them, for one subscriber and one
// workflow, and checks that every index read newest first keeps its pages
// full. 000011 made them ascending: ordered DESC, each new entry went in
// front of the last and every full leaf was split in half, leaving the
// pages about half empty.
func TestTimeIndexes_StayDenseAsRowsArrive(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, every)

	_, err := db.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
		INSERT INTO messages (id, environment_id, organization_id, job_id, notification_id, subscriber_id,
			external_subscriber, transaction_id, channel, status, created_at, updated_at)
		SELECT printf('m%06d', i), 'e', 'o', printf('j%06d', i), printf('n%06d', i), 's', 'sub', 'tx',
			'in_app', 'sent', printf('2026-11-24T00:%02d:%02d.%03dZ', i / 60000, i / 1000 % 60, i % 1000), 'now'
		FROM n;
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id, subscriber_snapshot,
			template_id, workflow_id, transaction_id, channels, template, payload, overrides, recipient, tags, severity,
			critical, preferences, actor, created_at, updated_at)
		SELECT printf('n%06d', i), 'e', 'o', 's', '{}', 't', 'w', 'tx', '[]', '{}', '{}', '{}', '{}', '[]', 'none',
			0, '{}', '{}', printf('2026-11-24T00:%02d:%02d.%03dZ', i / 60000, i / 1000 % 60, i % 1000), 'now'
		FROM n;`)
	is.NoErr(err) // rows in time order

	for _, index := range []string{"messages_feed", "messages_list", "notifications_list",
		"notifications_subscriber", "notifications_template"} {
		var pages int
		var unused float64
		err := db.QueryRowContext(ctx, `SELECT count(*), sum(unused) * 1.0 / sum(pgsize) FROM dbstat
			WHERE name = ? AND pagetype = 'leaf'`, index).Scan(&pages, &unused)
		is.NoErr(err)       // dbstat
		is.True(pages > 10) // enough entries to split leaves
		if unused > 0.2 {
			t.Errorf("%s: %.0f%% of its %d leaves unused, want at most 20%%", index, 100*unused, pages)
		}
	}
}

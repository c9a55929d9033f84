package activity_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

// TestRetention_SweepKeepsUpWhileTriggersArrive: with every retention a
// minute, a sweep removes every expired notification and message, batch
// by batch, while triggers keep arriving; it keeps what arrives, pauses
// for the busy writer at most half of its interval in all, so it ends
// before the next sweep is due, and leaves no record half-deleted; on
// PostgreSQL it vacuums the tables it deleted from.
func TestRetention_SweepKeepsUpWhileTriggersArrive(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv, sweeper := retentionServer(t, app.Retention{Activity: time.Minute, InApp: time.Minute, Messages: time.Minute})
	count := func(query string, args ...any) (n int) {
		t.Helper()
		is.NoErr(srv.App.DB.QueryRowContext(ctx, query, args...).Scan(&n))
		return n
	}
	settled := func(messages int) {
		t.Helper()
		platformtest.Eventually(t, 10*time.Second, func() bool {
			return count(`SELECT count(*) FROM messages`) == messages &&
				count(`SELECT count(*) FROM jobs WHERE status <> 'completed' OR run_at IS NOT NULL`) == 0
		}, "every trigger to be delivered")
	}
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	const expired = 24
	for i := range expired {
		apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"n":`+strconv.Itoa(i)+`}}`)
	}
	settled(expired)
	srv.App.Clock.Advance(2 * time.Minute)

	// A trigger arrives before each batch, and the worker delivers it while
	// the next batches run.
	arrived := 0
	for i, task := range sweeper.Tasks {
		sweep := task.Sweep
		sweeper.Tasks[i].Sweep = func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
			apptest.Trigger(t, srv, `{"name":"hello","to":"bob","payload":{"n":1}}`)
			arrived++
			return sweep(ctx, before, cursor, limit)
		}
	}
	sweeper.Batch, sweeper.Every = 3, 100*time.Millisecond
	var paused time.Duration
	sweeper.SetPause(func(_ context.Context, d time.Duration) { paused += d; time.Sleep(d) })
	is.NoErr(sweeper.Sweep(ctx))   // swept
	is.True(arrived > 2*expired/3) // in batches, triggers arriving between them
	settled(arrived)

	removed := sweeper.Removed()
	is.Equal(removed["notifications"], int64(expired)) // every expired notification
	is.Equal(removed["messages"], int64(expired))      // and message went
	before := sqldb.FormatTime(srv.App.Clock.Now().Add(-time.Minute))
	is.Equal(count(`SELECT count(*) FROM notifications WHERE created_at < ?`, before), 0)                                                          // nothing expired is left
	is.Equal(count(`SELECT count(*) FROM notifications`), arrived)                                                                                 // what arrived stays
	is.Equal(count(`SELECT count(*) FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = j.notification_id)`), 0)              // no job left of a deleted notification
	is.Equal(count(`SELECT count(*) FROM execution_details d WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.notification_id)`), 0) // nor an execution detail
	is.True(paused <= 50*time.Millisecond)                                                                                                         // paused for the busy writer half its interval at most
	if srv.App.DB.Postgres {
		// A deleted row's space is reused once a vacuum has passed, which
		// the sweep runs rather than wait for autovacuum, off on some servers.
		platformtest.Eventually(t, 10*time.Second, func() bool {
			return count(`SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = current_schema()
				AND relname IN ('notifications', 'jobs', 'execution_details', 'messages') AND vacuum_count > 0`) == 4
		}, "the sweep to vacuum the tables it deleted from")
	}
}

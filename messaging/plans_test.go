package messaging

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
)

// TestFeedCond_CountsOnTheIndex checks that a feed's count, filtered by
// read or seen state as an inbox's tabs filter it, reads the messages_feed
// index alone. Before 000016 those columns were only in the table, and
// counting an inbox of 20,000 messages sought every one of them there.
func TestFeedCond_CountsOnTheIndex(t *testing.T) {
	ctx := context.Background()
	db, err := platform.Open(ctx, platform.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := platform.Migrate(db, migrations.FS); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	for _, f := range []feedFilter{
		{subscriberID: "s"},
		{subscriberID: "s", read: &no},
		{subscriberID: "s", seen: &yes},
		{subscriberID: "s", read: &no, seen: &no},
	} {
		is := is.New(t)
		cond, args := feedCond("e", f)
		// countPage's query.
		rows, err := db.R.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT count(*) FROM messages WHERE `+cond, args...)
		is.NoErr(err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			is.NoErr(rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		is.NoErr(rows.Err())
		got := strings.Join(plan, "; ")
		if !strings.Contains(got, "USING COVERING INDEX messages_feed") {
			t.Errorf("count of %s: plan %q, want it covered by messages_feed", cond, got)
		}
	}
}

package activity

import (
	"strings"
	"testing"

	"github.com/herald-notify/herald/platform/platformtest"
)

// TestNotificationsQuery_ReadsTheTransactionsIndex checks GET
// /v1/notifications filtered by transactionId: the page is read through
// notifications_transaction (notificationsQuery), not through
// notifications_list, which holds the whole environment.
func TestNotificationsQuery_ReadsTheTransactionsIndex(t *testing.T) {
	for _, f := range []listFilter{
		{transactionID: []string{"t1"}},
		{transactionID: []string{"t1", "t2"}, subscriberIDs: []string{"s"}},
	} {
		from, cond, args := notificationsQuery("e", f)
		plan := platformtest.QueryPlan(t, `SELECT id FROM `+from+` WHERE `+cond+` ORDER BY created_at DESC, id DESC LIMIT 10`, args...)
		if !strings.Contains(plan, "INDEX notifications_transaction") {
			t.Errorf("%s: plan %q, want it read through notifications_transaction", cond, plan)
		}
	}
}

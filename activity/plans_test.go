package activity

import (
	"slices"
	"strings"
	"testing"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestNotificationsQuery_ReadsTheFiltersIndex checks GET /v1/notifications
// filtered by transactionId, by one subscriber or by one workflow: the page
// is read through that filter's index (notificationsSQL.query), not through
// notifications_list, which holds the whole environment. A transaction has
// a few notifications, sorted; a subscriber or a workflow may have any
// number, so its index gives the order, as a context key's entries do.
// Other filters read notifications_list in its order.
func TestNotificationsQuery_ReadsTheFiltersIndex(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "reads SQLite's query plans")
	n := newNotificationsSQL(sqldbtest.NewDB(t).Dialect())
	for _, c := range []struct {
		f       listFilter
		index   string
		ordered bool
	}{
		{listFilter{transactionID: []string{"t1"}}, "notifications_transaction", false},
		{listFilter{transactionID: []string{"t1", "t2"}, subscribers: []string{"s"}}, "notifications_transaction", false},
		{listFilter{subscribers: []string{"s"}, channels: []string{"email"}}, "notifications_subscriber", true},
		{listFilter{subscribers: []string{"s"}, templates: []string{"w"}}, "notifications_subscriber", true},
		{listFilter{templates: []string{"w"}, severity: []string{"high"}}, "notifications_template", true},
		// A search may match more subscribers than SQLite takes parameters.
		{listFilter{subscribers: slices.Repeat([]string{"s"}, 40_000)}, "notifications_list", true},
		// Filters without an index of their own are tested on the columns
		// notifications_list carries, in its order.
		{listFilter{severity: []string{"high", "low"}, channels: []string{"chat"}}, "notifications_list", true},
		{listFilter{templates: []string{"w1", "w2"}, subscribers: []string{"s1", "s2"}}, "notifications_list", true},
		{listFilter{contextKeys: []string{"k1", "k2"}, severity: []string{"low", "none"}}, "notifications_list", true},
		{listFilter{severity: []string{"high"}, channels: []string{"chat"}}, "notifications_severity", true},
		{listFilter{severity: []string{"none"}}, "notifications_list", true},
		// One context key's notifications are read through its entries.
		{listFilter{contextKeys: []string{"k"}, severity: []string{"high"}}, "notification_contexts", true},
		{listFilter{contextKeys: []string{"k"}, templates: []string{"w"}}, "notification_contexts", true},
		// So are a topic's.
		{listFilter{topicKey: "t", contextKeys: []string{"k1", "k2"}}, "notification_topics", true},
		{listFilter{topicKey: "t", templates: []string{"w"}}, "notification_topics", true},
	} {
		query, args := n.query("e", c.f)
		plan := sqldbtest.QueryPlan(t, query+` LIMIT 10`, args...)
		if !strings.Contains(plan, "INDEX "+c.index+" ") && !strings.Contains(plan, "SEARCH "+c.index+" USING PRIMARY KEY") {
			t.Errorf("%s: plan %q, want it read through %s", query, plan, c.index)
		}
		if c.ordered && strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: plan %q sorts every match, want the index's order", query, plan)
		}
	}
}

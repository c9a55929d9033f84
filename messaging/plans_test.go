package messaging

import (
	"slices"
	"strings"
	"testing"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// The tests here check which index SQLite reads a hot query through
// (sqldbtest.QueryPlan); each names the migration or code that fixed the
// plan it guards.

// TestFeedCond_CountsOnTheIndex checks that a feed's count, filtered by
// read or seen state as an inbox's tabs filter it, reads the messages_feed
// index alone. Before 000016 those columns were only in the table, and
// counting an inbox of 20,000 messages sought every one of them there.
func TestFeedCond_CountsOnTheIndex(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "a SQLite query plan")
	yes, no := true, false
	for _, f := range []feedFilter{
		{subscriberID: "s"},
		{subscriberID: "s", read: &no},
		{subscriberID: "s", seen: &yes},
		{subscriberID: "s", read: &no, seen: &no},
	} {
		cond, args := feedCond(sqldbtest.NewDB(t).Dialect(), "e", f)
		// countPage's query.
		if plan := sqldbtest.QueryPlan(t, `SELECT count(*) FROM messages WHERE `+cond, args...); !strings.Contains(plan, "USING COVERING INDEX messages_feed") {
			t.Errorf("count of %s: plan %q, want it covered by messages_feed", cond, plan)
		}
	}
}

// TestInboxFilter_CountsOnTheIndex checks that an inbox's count, which
// tests the session's context as well as read or seen, reads the
// messages_feed index alone: 000049 carries the context there.
func TestInboxFilter_CountsOnTheIndex(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "a SQLite query plan")
	q := newQueries(sqldbtest.NewDB(t).Dialect())
	yes, no := true, false
	for _, f := range []inboxFilter{{}, {read: &no}, {seen: &no}, {read: &yes, seen: &yes}} {
		for _, box := range []inboxScope{{env: "e", subscriberID: "s"}, {env: "e", subscriberID: "s", context: "tenant:acme"}} {
			cond, args := f.cond(q, box, nil)
			if plan := sqldbtest.QueryPlan(t, `SELECT count(*) FROM (SELECT 1 FROM messages WHERE `+cond+` LIMIT 100) AS page`, args...); !strings.Contains(plan, "USING COVERING INDEX messages_feed") {
				t.Errorf("count of %s: plan %q, want it covered by messages_feed", cond, plan)
			}
		}
	}
}

// TestListQuery_ReadsTheFiltersIndex checks GET /v1/messages: a page of a
// transaction's or a subscriber's messages is read through that filter's
// index (queries.listQuery), not through messages_list, which holds the whole
// environment. (A page by channel does read messages_list, which carries
// the channel since 000017 so that it is tested there; a plan does not show
// that, BenchmarkMessagesList does.)
func TestListQuery_ReadsTheFiltersIndex(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "a SQLite query plan")
	for _, tc := range []struct {
		name  string
		f     listFilter
		index string
	}{
		{"transaction", listFilter{transactionIDs: []string{"t1", "t2"}}, "messages_transaction"},
		{"transaction and subscriber", listFilter{transactionIDs: []string{"t1"}, subscriberID: "s"}, "messages_transaction"},
		{"subscriber", listFilter{subscriberID: "s"}, "messages_feed"},
		{"subscriber and channel", listFilter{subscriberID: "s", channel: "in_app"}, "messages_feed"},
	} {
		from, cond, args := newQueries(sqldbtest.NewDB(t).Dialect()).listQuery("e", tc.f)
		plan := sqldbtest.QueryPlan(t, `SELECT id FROM `+from+` WHERE `+cond+` ORDER BY created_at DESC, id DESC LIMIT 10`, args...)
		if !strings.Contains(plan, "INDEX "+tc.index) {
			t.Errorf("%s: plan %q, want it read through %s", tc.name, plan, tc.index)
		}
	}
}

// TestListSQL_PlansAsPageAndCountApart checks GET /v1/messages's one
// statement (listSQL): its page is read through the filter's index, as
// TestListQuery_ReadsTheFiltersIndex checks for the page alone, and its
// count, a scalar subquery run once, is planned as the count alone is:
// joining them costs neither an index nor a sort.
func TestListSQL_PlansAsPageAndCountApart(t *testing.T) {
	sqldbtest.SQLiteOnly(t, "a SQLite query plan")
	for _, tc := range []struct {
		name  string
		f     listFilter
		index string
	}{
		{"all", listFilter{}, "messages_list"},
		{"channel", listFilter{channel: "in_app"}, "messages_list"},
		{"transaction", listFilter{transactionIDs: []string{"t1", "t2"}}, "messages_transaction"},
		{"transaction and subscriber", listFilter{transactionIDs: []string{"t1"}, subscriberID: "s"}, "messages_transaction"},
		{"subscriber", listFilter{subscriberID: "s"}, "messages_feed"},
		{"subscriber and channel", listFilter{subscriberID: "s", channel: "in_app"}, "messages_feed"},
	} {
		from, cond, args := newQueries(sqldbtest.NewDB(t).Dialect()).listQuery("e", tc.f)
		both := append(append(append([]any{}, args...), args...), 10, 0)
		plan := sqldbtest.QueryPlan(t, listSQL(from, cond), both...)
		pagePlan := sqldbtest.QueryPlan(t, `SELECT `+messageColumns+` FROM `+from+` WHERE `+cond+`
			ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(append([]any{}, args...), 10, 0)...)
		countPlan := sqldbtest.QueryPlan(t, `SELECT count(*) FROM messages WHERE `+cond, args...)
		if !strings.Contains(pagePlan, "INDEX "+tc.index) {
			t.Errorf("%s: page plan %q, want it read through %s", tc.name, pagePlan, tc.index)
		}
		// The same steps, in any order, and the count's subquery.
		var steps []string
		subqueries := 0
		for _, step := range strings.Split(plan, "; ") {
			if strings.HasPrefix(step, "SCALAR SUBQUERY") { // not CORRELATED: run once
				subqueries++
			} else {
				steps = append(steps, step)
			}
		}
		apart := append(strings.Split(pagePlan, "; "), strings.Split(countPlan, "; ")...)
		slices.Sort(steps)
		slices.Sort(apart)
		if subqueries != 1 || !slices.Equal(steps, apart) {
			t.Errorf("%s: plan %q, want the page's %q and the count's %q", tc.name, plan, pagePlan, countPlan)
		}
	}
}

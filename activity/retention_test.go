package activity

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

// sweepAll runs SweepFinished over the Development environment to the end,
// in batches of limit, and sums what it removed.
func (h *harness) sweepAll(ctx context.Context, before time.Time, limit int) (map[string]int64, error) {
	total, cursor := map[string]int64{}, ""
	for {
		next, removed, err := h.store.SweepFinished(ctx, h.App.Development.ID, before, cursor, limit)
		if err != nil {
			return total, err
		}
		for k, n := range removed {
			total[k] += n
		}
		if next == "" {
			return total, nil
		}
		cursor = next
	}
}

// TestSweepFinished_KeepsNewerAndPending: a sweep deletes the finished
// notifications older than its time, with their jobs and details, and
// keeps newer ones and those with work still to do (a delay).
func TestSweepFinished_KeepsNewerAndPending(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	env := h.App.Development.ID
	h.wf.add(t, env, "hello", nil, step("inbox", "in_app", nil))
	h.wf.add(t, env, "later", nil,
		step("wait", "delay", map[string]any{"type": "regular", "amount": 100, "unit": "days"}),
		step("inbox", "in_app", nil))
	var old []string
	for i := range 5 { // each with a transactionId of the client's, which is claimed
		old = append(old, h.trigger(t, fmt.Sprintf(`{"name":"hello","to":"ada","payload":{"k":1},"transactionId":"old-%d"}`, i)))
	}
	pending := h.trigger(t, `{"name":"later","to":"ada"}`)
	h.waitStatuses(t, pending, "trigger:completed", "delay:delayed", "in_app:pending")
	for _, tx := range old {
		h.waitStatuses(t, tx, "trigger:completed", "in_app:completed")
	}
	h.App.Clock.Advance(40 * 24 * time.Hour)
	newer := h.trigger(t, `{"name":"hello","to":"ada"}`)
	h.waitStatuses(t, newer, "trigger:completed", "in_app:completed")

	removed, err := h.sweepAll(context.Background(), h.App.Clock.Now().Add(-30*24*time.Hour), 2)
	is.NoErr(err)                                        // swept
	is.Equal(removed["notifications"], int64(5))         // the five old finished notifications
	is.Equal(removed["jobs"], int64(5))                  // with their in-app jobs (their trigger jobs are derived)
	is.Equal(removed["execution_details"] > 0, true)     // and details
	is.Equal(removed["activity_transactions"], int64(5)) // and their transactions' claims
	for _, tx := range old {
		is.Equal(len(h.notifications(t, "transactionId="+tx)), 0) // an old one is gone
	}
	h.waitStatuses(t, pending, "trigger:completed", "delay:delayed", "in_app:pending") // the pending one stays whole
	h.waitStatuses(t, newer, "trigger:completed", "in_app:completed")                  // the newer one stays whole
	is.Equal(len(h.notifications(t, "")), 2)                                           // and nothing else is listed
}

// TestSweepFinished_CancelledMidBatchResumes: a sweep stopped inside a
// batch's transaction deletes nothing of that batch (the details it had
// deleted come back), and the next sweep deletes exactly the expired.
func TestSweepFinished_CancelledMidBatchResumes(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	env := h.App.Development.ID
	h.wf.add(t, env, "hello", nil, step("inbox", "in_app", nil))
	var old []string
	for range 3 {
		old = append(old, h.trigger(t, `{"name":"hello","to":"ada"}`))
	}
	for _, tx := range old {
		h.waitStatuses(t, tx, "trigger:completed", "in_app:completed")
	}
	h.App.Clock.Advance(time.Hour)
	newer := h.trigger(t, `{"name":"hello","to":"ada"}`)
	h.waitStatuses(t, newer, "trigger:completed", "in_app:completed")
	count := func(table string) int {
		var n int
		is.NoErr(h.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n)) // counted
		return n
	}
	details := count("execution_details")

	ctx, cancel := context.WithCancel(context.Background())
	h.store.swept = func(table string) {
		if table == "jobs" {
			cancel() // after the details and jobs of the batch are deleted
		}
	}
	before := h.App.Clock.Now().Add(-30 * time.Minute)
	_, err := h.sweepAll(ctx, before, 2)
	is.True(errors.Is(err, context.Canceled))                     // the sweep stopped
	is.Equal(count("notifications"), 4)                           // no notification deleted
	is.Equal(count("jobs"), 4)                                    // no job
	is.Equal(count("execution_details"), details)                 // no detail: the batch rolled back
	is.Equal(len(h.notifications(t, "transactionId="+old[0])), 1) // and the first still reads whole

	h.store.swept = nil
	removed, err := h.sweepAll(context.Background(), before, 2)
	is.NoErr(err)                                                     // the next sweep runs to the end
	is.Equal(removed["notifications"], int64(3))                      // deleting the expired
	is.Equal(count("notifications"), 1)                               // and only those
	h.waitStatuses(t, newer, "trigger:completed", "in_app:completed") // the newer one whole
}

// TestSweepFinished_KeepsEventsOfAnOpenDigest: a notification merged into
// a digest is finished, but the digest reads it when it fires, so it is
// kept while the digest waits, and goes once the digest has fired.
func TestSweepFinished_KeepsEventsOfAnOpenDigest(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "digest", nil,
		step("collect", "digest", map[string]any{"amount": 40, "unit": "days"}),
		step("inbox", "in_app", map[string]any{"body": "{{steps.collect.eventCount}} updates"}))
	lead := h.trigger(t, `{"name":"digest","to":"ada","payload":{"n":1}}`)
	h.waitStatuses(t, lead, "trigger:completed", "digest:delayed", "in_app:pending")
	merged := h.trigger(t, `{"name":"digest","to":"ada","payload":{"n":2}}`)
	h.waitStatuses(t, merged, "trigger:completed", "digest:merged", "in_app:skipped")

	h.App.Clock.Advance(35 * 24 * time.Hour)
	removed, err := h.sweepAll(context.Background(), h.App.Clock.Now().Add(-30*24*time.Hour), 10)
	is.NoErr(err)                                // swept
	is.Equal(removed["notifications"], int64(0)) // neither the digest nor the event merged into it
	h.waitStatuses(t, merged, "trigger:completed", "digest:merged", "in_app:skipped")

	h.App.Clock.Advance(6 * 24 * time.Hour)
	h.wakeAll()
	h.waitStatuses(t, lead, "trigger:completed", "digest:completed", "in_app:completed")
	sent := h.msg.sent()
	is.Equal(len(sent), 1)                                     // one digest
	is.Equal(sent[0].Variables.Steps["collect"].EventCount, 2) // with both events
	removed, err = h.sweepAll(context.Background(), h.App.Clock.Now().Add(-30*24*time.Hour), 10)
	is.NoErr(err)                                // swept again
	is.Equal(removed["notifications"], int64(2)) // both go once the digest has fired
}

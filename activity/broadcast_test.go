package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
)

// smallBatches makes a broadcast write two subscribers per transaction, so
// that five make three batches: a first, a middle and a last.
func smallBatches(s *Store) { s.broadcastBatch = 2 }

// addSubscribers creates subscribers of the Development environment.
func (h *harness) addSubscribers(t *testing.T, ids ...string) {
	t.Helper()
	tenant := platform.Tenant{OrganizationID: h.App.Development.OrganizationID, EnvironmentID: h.App.Development.ID}
	for _, id := range ids {
		if _, err := h.subs.UpsertSubscribers(context.Background(), tenant, []json.RawMessage{fmt.Appendf(nil, `{"subscriberId":%q}`, id)}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// unfinished lists the recorded broadcasts as "transactionId after
// subscriberId".
func (h *harness) unfinished(t *testing.T) []string {
	t.Helper()
	rows, err := h.App.DB.QueryContext(context.Background(), `SELECT transaction_id, last_subscriber_id FROM activity_broadcasts ORDER BY transaction_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var tx, after string
		if err := rows.Scan(&tx, &after); err != nil {
			t.Fatal(err)
		}
		out = append(out, tx+" after "+after)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// resume runs ResumeBroadcasts, as the next start would, and waits for it.
func (h *harness) resume(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ResumeBroadcasts(ctx, h.store, h.wf, h.subs, h.logger)(ctx)
	if ctx.Err() != nil {
		t.Fatal("resume did not finish")
	}
}

// perSubscriber counts notifications by subscriberId.
func perSubscriber(ns []apiNotification) map[string]int {
	out := map[string]int{}
	for _, n := range ns {
		out[n.Subscriber.SubscriberID]++
	}
	return out
}

// deliveredTo counts stored messages by subscriberId.
func (h *harness) deliveredTo() map[string]int {
	out := map[string]int{}
	for _, d := range h.msg.sent() {
		out[d.Subscriber.SubscriberID]++
	}
	return out
}

// failListingAfter makes the subscriber listing fail past subscriberId
// after, as a process that dies there stops.
func failListingAfter(after string) func(context.Context, string) error {
	return func(_ context.Context, from string) error {
		if from == after {
			return errors.New("subscribers unavailable")
		}
		return nil
	}
}

var everyone = map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1, "s5": 1}

// newBroadcastHarness returns a harness whose broadcasts write two
// subscribers a batch, with an in-app workflow "news" and everyone's five
// subscribers.
func newBroadcastHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, smallBatches)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	h.addSubscribers(t, "s1", "s2", "s3", "s4", "s5")
	return h
}

func TestBroadcast_Finished(t *testing.T) {
	for _, tc := range []struct {
		name        string
		subscribers []string
	}{
		{"OKNoSubscribers", nil},
		{"OKOneBatch", []string{"s1"}},
		{"OKFullBatches", []string{"s1", "s2", "s3", "s4"}},
		{"OKShortLastBatch", []string{"s1", "s2", "s3", "s4", "s5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, smallBatches)
			h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
			h.addSubscribers(t, tc.subscribers...)

			res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"all"}`)
			is.Equal(res.Status, http.StatusOK) // broadcast answered
			var ack triggerAck
			res.Decode(t, &ack)
			is.True(ack.Acknowledged)             // acknowledged
			is.Equal(ack.Status, "processed")     // processed
			is.Equal(ack.TransactionID, "all")    // under its transactionId
			is.Equal(h.unfinished(t), []string{}) // a finished broadcast leaves nothing to resume
			want := map[string]int{}
			for _, id := range tc.subscribers {
				want[id] = 1
			}
			is.Equal(perSubscriber(h.notifications(t, "transactionId=all")), want) // every subscriber once

			again := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"all"}`)
			is.Equal(again.Status, http.StatusConflict) // the transactionId stays claimed
		})
	}
}

func TestBroadcast_ResumeAfterInterruption(t *testing.T) {
	is := is.New(t)
	h := newBroadcastHarness(t)

	// The process stops after the first batch…
	h.subs.onList(failListingAfter("s2"))
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","payload":{"n":1},"transactionId":"cut"}`)
	is.Equal(res.Status, http.StatusInternalServerError)                                               // cut short
	is.Equal(h.unfinished(t), []string{"cut after s2"})                                                // recorded with the first batch's last subscriber
	is.Equal(perSubscriber(h.notifications(t, "transactionId=cut")), map[string]int{"s1": 1, "s2": 1}) // the first batch is committed

	// …the next start stops after the second…
	h.subs.onList(failListingAfter("s4"))
	h.resume(t)
	is.Equal(h.unfinished(t), []string{"cut after s4"})                                                                  // the cursor moved with the second batch
	is.Equal(perSubscriber(h.notifications(t, "transactionId=cut")), map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1}) // and so did the notifications

	// …and the one after that finishes it.
	h.subs.onList(nil)
	h.resume(t)
	is.Equal(h.unfinished(t), []string{}) // finished
	h.resume(t)                           // nothing left to resume
	got := h.waitStatuses(t, "cut", "trigger:completed", "in_app:completed")
	is.Equal(perSubscriber(got), everyone) // each subscriber written once
	is.Equal(h.deliveredTo(), everyone)    // and delivered to once
	for _, d := range h.msg.sent() {
		is.Equal(d.Variables.Payload["n"], float64(1)) // the resumed batches carry the broadcast's payload
	}

	again := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"cut"}`)
	is.Equal(again.Status, http.StatusConflict) // the transactionId stays claimed
}

func TestBroadcast_ResumeWithoutWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(h *harness)
	}{
		{"ErrWorkflowDeleted", func(h *harness) { h.wf.remove(t, "news") }},
		{"ErrWorkflowInactive", func(h *harness) {
			h.wf.add(t, h.App.Development.ID, "news", map[string]any{"active": false}, step("inbox", "in_app", nil))
		}},
		{"ErrPayloadRefused", func(h *harness) {
			h.wf.add(t, h.App.Development.ID, "news", map[string]any{"validatePayload": true, "payloadSchema": map[string]any{
				"type": "object", "required": []string{"name"}}}, step("inbox", "in_app", nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := newBroadcastHarness(t)
			h.subs.onList(failListingAfter("s2"))
			res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"gone"}`)
			is.Equal(res.Status, http.StatusInternalServerError) // cut after the first batch
			h.subs.onList(nil)

			tc.change(h)
			h.resume(t)
			is.Equal(h.unfinished(t), []string{}) // finished, not retried forever
			got := h.waitStatuses(t, "gone", "trigger:completed", "in_app:completed")
			is.Equal(perSubscriber(got), map[string]int{"s1": 1, "s2": 1}) // nobody after the cut
		})
	}
}

func TestBroadcast_OutlivesClient(t *testing.T) {
	is := is.New(t)
	h := newBroadcastHarness(t)

	tenant := platform.Tenant{OrganizationID: h.App.Development.OrganizationID, EnvironmentID: h.App.Development.ID}
	ctx, hangUp := context.WithCancel(platform.WithTenant(context.Background(), tenant))
	defer hangUp()
	// The client hangs up once the first batch is committed; the listing
	// then fails as the subscribers store does on a canceled context.
	h.subs.onList(func(listCtx context.Context, after string) error {
		if after != "" {
			hangUp()
		}
		return listCtx.Err()
	})
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/events/trigger/broadcast",
		strings.NewReader(`{"name":"news","transactionId":"hung-up"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	handleTriggerBroadcast(&triggerer{store: h.store, workflows: h.wf, subscribers: h.subs}).ServeHTTP(rec, req)

	is.Equal(rec.Code, http.StatusOK)     // the fan-out ran to its end
	is.True(ctx.Err() != nil)             // after the client had gone
	is.Equal(h.unfinished(t), []string{}) // finished
	got := h.waitStatuses(t, "hung-up", "trigger:completed", "in_app:completed")
	is.Equal(perSubscriber(got), everyone) // every subscriber got it
}

func TestBroadcast_CutShortReplaysItsAnswer(t *testing.T) {
	is := is.New(t)
	h := newBroadcastHarness(t)
	h.subs.onList(failListingAfter("s2"))
	body := `{"name":"news","transactionId":"keyed"}`
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", body, "Idempotency-Key", "b1")
	is.Equal(res.Status, http.StatusInternalServerError) // cut after the first batch
	h.subs.onList(nil)

	again := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", body, "Idempotency-Key", "b1")
	is.Equal(again.Status, http.StatusOK)                    // the retry is told the broadcast was accepted,
	is.Equal(again.Header.Get("Idempotency-Replay"), "true") // as recorded with its first batch,
	is.True(strings.Contains(string(again.Body), `"transactionId":"keyed"`))
	is.Equal(h.unfinished(t), []string{"keyed after s2"}) // and it is left to the resume, not begun again
	h.resume(t)
	is.Equal(perSubscriber(h.waitStatuses(t, "keyed", "trigger:completed", "in_app:completed")), everyone)
}

func TestBroadcast_Cancel(t *testing.T) {
	t.Run("OKWhileFanningOut", func(t *testing.T) {
		is := is.New(t)
		h := newBroadcastHarness(t)
		var canceled string
		h.subs.onList(func(_ context.Context, after string) error {
			if after == "s2" && canceled == "" { // between the first batch and the second
				canceled = string(h.Dev.Do(t, "DELETE", "/v1/events/trigger/stop", "").Body)
			}
			return nil
		})
		res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"stop"}`)
		is.Equal(res.Status, http.StatusOK)                                                                 // accepted before it was canceled
		is.Equal(strings.TrimSpace(canceled), "true")                                                       // the cancel found the broadcast
		is.Equal(h.unfinished(t), []string{})                                                               // nothing left to resume
		is.Equal(perSubscriber(h.notifications(t, "transactionId=stop")), map[string]int{"s1": 1, "s2": 1}) // nobody after the cancel
	})
	t.Run("OKAfterACrash", func(t *testing.T) {
		is := is.New(t)
		h := newBroadcastHarness(t)
		h.subs.onList(failListingAfter("s2"))
		is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"cut"}`).Status, 500)
		h.subs.onList(nil)
		is.Equal(h.Dev.Do(t, "DELETE", "/v1/events/trigger/cut", "").Status, http.StatusOK)
		h.resume(t)
		is.Equal(h.unfinished(t), []string{})                                                              // canceled, so not resumed
		is.Equal(perSubscriber(h.notifications(t, "transactionId=cut")), map[string]int{"s1": 1, "s2": 1}) // nobody after the cut
	})
}

// TestBroadcast_ResumeKeepsItsFiles cuts a broadcast with a file short
// after its first batch: the batches a later start writes send the file
// too, read from the notifications already written, since the request the
// broadcast keeps to resume from holds no files.
func TestBroadcast_ResumeKeepsItsFiles(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, smallBatches)
	h.wf.add(t, h.App.Development.ID, "bill", nil, step("mail", "email", nil))
	h.addSubscribers(t, "s1", "s2", "s3", "s4", "s5")
	h.subs.onList(failListingAfter("s2"))
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"bill","transactionId":"cut","payload":{"n":1,
		"attachments":[{"file":"aGVsbG8=","mime":"text/plain","name":"a.txt","channels":["email"]}]}}`)
	is.Equal(res.Status, http.StatusInternalServerError) // cut short
	var request string
	is.NoErr(h.App.DB.QueryRowContext(context.Background(), `SELECT request FROM activity_broadcasts`).Scan(&request))
	is.True(!strings.Contains(request, "aGVsbG8=")) // the request kept to resume from holds no file

	h.subs.onList(nil)
	h.resume(t)
	h.waitStatuses(t, "cut", "trigger:completed", "email:completed")
	is.Equal(h.deliveredTo(), everyone) // every subscriber's email sent
	for _, d := range h.msg.sent() {
		is.Equal(d.Attachments, []string{"a.txt:hello"}) // with the file, before and after the resume
	}
}

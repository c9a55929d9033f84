package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

func TestDelay_RunsAfterItsTime(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "later", nil,
		step("wait", "delay", map[string]any{"type": "regular", "amount": 1, "unit": "hours"}),
		step("inbox", "in_app", nil))
	tx := h.trigger(t, `{"name":"later","to":"ada"}`)
	h.waitStatuses(t, tx, "trigger:completed", "delay:delayed", "in_app:pending")

	h.App.Clock.Advance(59 * time.Minute)
	is.True(!h.anyDue(t))          // nothing is due a minute before the delay ends
	is.Equal(h.msg.callCount(), 0) // nothing delivered yet

	h.App.Clock.Advance(2 * time.Minute)
	h.wakeAll()
	n := h.waitStatuses(t, tx, "trigger:completed", "delay:completed", "in_app:completed")[0]
	is.Equal(n.details("delay"), []string{"Step queued", "Step delayed", "Delay is finished"}) // delay details
	is.Equal(h.msg.callCount(), 1)                                                             // delivered once
}

// The workflow API takes regular and timed delays only; the worker also
// runs a scheduled one (a time read from the payload) that a workflow holds.
func TestDelay_Scheduled(t *testing.T) {
	h := newHarness(t)
	h.wf.inject(t, "at", nil,
		step("wait", "delay", map[string]any{"type": "scheduled", "delayPath": "sendAt"}),
		step("inbox", "in_app", nil))
	at := h.App.Clock.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	tx := h.trigger(t, `{"name":"at","to":"ada","payload":{"sendAt":"`+at+`"}}`)
	h.waitStatuses(t, tx, "trigger:completed", "delay:delayed", "in_app:pending")
	h.App.Clock.Advance(3*time.Hour + time.Second)
	h.wakeAll()
	h.waitStatuses(t, tx, "trigger:completed", "delay:completed", "in_app:completed")
}

// A delay it cannot compute fails its step and cancels the rest, saying why.
func TestDelay_InvalidConfiguration(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, payload, detail string
		controls              map[string]any
	}{
		{"ErrScheduledTimeNotInPayload", `{"sendAt":"soon"}`, "Invalid delay configuration",
			map[string]any{"type": "scheduled", "delayPath": "sendAt"}},
		// "TZ=UTC" alone made the cron parser panic.
		{"ErrTimedCronUnreadable", `{}`, `Invalid delay configuration: cron "TZ=UTC"`,
			map[string]any{"type": "timed", "cron": "TZ=UTC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			if tc.controls["type"] == "scheduled" { // see TestDelay_Scheduled
				h.wf.inject(t, tc.name, nil, step("wait", "delay", tc.controls), step("inbox", "in_app", nil))
			} else {
				h.wf.add(t, h.App.Development.ID, tc.name, nil, step("wait", "delay", tc.controls), step("inbox", "in_app", nil))
			}
			tx := h.trigger(t, `{"name":"`+tc.name+`","to":"ada","payload":`+tc.payload+`}`)
			n := h.waitStatuses(t, tx, "trigger:completed", "delay:failed", "in_app:canceled")[0]
			is.True(strings.HasPrefix(n.details("delay")[1], tc.detail)) // says why
		})
	}
}

func TestDigest_MergesEvents(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "digest", nil,
		step("collect", "digest", map[string]any{"amount": 10, "unit": "minutes", "digestKey": "orderId"}),
		step("inbox", "in_app", map[string]any{"body": "{{steps.collect.eventCount}} updates"}))
	first := h.trigger(t, `{"name":"digest","to":"ada","payload":{"orderId":"1","n":1}}`)
	h.waitStatuses(t, first, "trigger:completed", "digest:delayed", "in_app:pending")
	var merged []string
	for i := 2; i <= 3; i++ {
		tx := h.trigger(t, fmt.Sprintf(`{"name":"digest","to":"ada","payload":{"orderId":"1","n":%d}}`, i))
		merged = append(merged, tx)
		h.waitStatuses(t, tx, "trigger:completed", "digest:merged", "in_app:skipped")
	}
	other := h.trigger(t, `{"name":"digest","to":"ada","payload":{"orderId":"2","n":9}}`)
	h.waitStatuses(t, other, "trigger:completed", "digest:delayed", "in_app:pending")
	bob := h.trigger(t, `{"name":"digest","to":"bob","payload":{"orderId":"1","n":7}}`)
	h.waitStatuses(t, bob, "trigger:completed", "digest:delayed", "in_app:pending")
	is.Equal(h.msg.callCount(), 0) // nothing sent while the windows are open

	h.App.Clock.Advance(11 * time.Minute)
	h.wakeAll()
	master := h.waitStatuses(t, first, "trigger:completed", "digest:completed", "in_app:completed")[0]
	h.waitStatuses(t, other, "trigger:completed", "digest:completed", "in_app:completed")
	h.waitStatuses(t, bob, "trigger:completed", "digest:completed", "in_app:completed")
	is.Equal(master.details("digest"), []string{"Step queued", "Step digested", "Digest triggered events"}) // master details
	is.Equal(len(master.Jobs[1].Digest.Events), 3)                                                          // the master job lists every event

	for _, tx := range merged {
		n := h.notifications(t, "transactionId="+tx)[0]
		is.Equal(n.DigestedNotificationID, master.ID)                                                 // points at the master
		is.Equal(n.details("digest"), []string{"Step queued", "Digest was merged with other digest"}) // merge detail
	}
	counts := map[string]int{}
	for _, d := range h.msg.sent() {
		ev := d.Variables.Steps["collect"]
		is.Equal(ev.EventCount, len(ev.Events)) // eventCount matches the events
		counts[fmt.Sprint(d.Subscriber.SubscriberID, "/", d.Payload["orderId"])] = ev.EventCount
		if ev.EventCount == 3 {
			for i, e := range ev.Events {
				is.Equal(e.Payload["n"], float64(i+1)) // events in trigger order
			}
		}
	}
	is.Equal(counts, map[string]int{"ada/1": 3, "ada/2": 1, "bob/1": 1}) // one delivery per key and subscriber
}

func TestDigest_Backoff(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "backoff", nil,
		step("collect", "digest", map[string]any{"amount": 5, "unit": "minutes", "lookBackWindow": map[string]any{"amount": 1, "unit": "minutes"}}),
		step("inbox", "in_app", nil))
	first := h.trigger(t, `{"name":"backoff","to":"ada"}`)
	n := h.waitStatuses(t, first, "trigger:completed", "digest:skipped", "in_app:completed")[0]
	is.Equal(n.details("digest")[1], "Digest was skipped, first backoff event") // the first event goes at once

	h.App.Clock.Advance(10 * time.Second)
	second := h.trigger(t, `{"name":"backoff","to":"ada"}`)
	h.waitStatuses(t, second, "trigger:completed", "digest:delayed", "in_app:pending") // a second one inside the window waits
	third := h.trigger(t, `{"name":"backoff","to":"ada"}`)
	h.waitStatuses(t, third, "trigger:completed", "digest:merged", "in_app:skipped")

	h.App.Clock.Advance(6 * time.Minute)
	h.wakeAll()
	h.waitStatuses(t, second, "trigger:completed", "digest:completed", "in_app:completed")
	is.Equal(h.msg.callCount(), 2) // the first alone, then the two digested
}

func TestThrottle_SkipsOverLimit(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "throttled", nil,
		step("limit", "throttle", map[string]any{"amount": 1, "unit": "hours", "threshold": 2}),
		step("inbox", "in_app", nil))
	for i := 0; i < 2; i++ {
		tx := h.trigger(t, `{"name":"throttled","to":"ada"}`)
		h.waitStatuses(t, tx, "trigger:completed", "throttle:completed", "in_app:completed")
	}
	over := h.trigger(t, `{"name":"throttled","to":"ada"}`)
	n := h.waitStatuses(t, over, "trigger:completed", "throttle:skipped", "in_app:skipped")[0]
	is.Equal(n.details("in_app")[1], "Step skipped because the throttle limit was reached") // says why
	bob := h.trigger(t, `{"name":"throttled","to":"bob"}`)
	h.waitStatuses(t, bob, "trigger:completed", "throttle:completed", "in_app:completed") // counted per subscriber

	h.App.Clock.Advance(61 * time.Minute)
	again := h.trigger(t, `{"name":"throttled","to":"ada"}`)
	h.waitStatuses(t, again, "trigger:completed", "throttle:completed", "in_app:completed") // a new window
	is.Equal(h.msg.callCount(), 4)                                                          // over-limit run sent nothing
}

func TestConditions_Skip(t *testing.T) {
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "cond", nil,
		step("maybe", "in_app", map[string]any{"skip": map[string]any{"==": []any{map[string]any{"var": "payload.quiet"}, true}}}),
		step("vip", "email", map[string]any{"subject": "s", "body": "b", "skip": map[string]any{"or": []any{
			map[string]any{"!=": []any{map[string]any{"var": "subscriber.data.plan"}, "pro"}},
			map[string]any{"<=": []any{map[string]any{"var": "payload.amount"}, 100}}}}}))
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"OKBothRun", `{"name":"cond","to":{"subscriberId":"p","data":{"plan":"pro"}},"payload":{"amount":150}}`,
			[]string{"trigger:completed", "in_app:completed", "email:completed"}},
		{"OKSkipped", `{"name":"cond","to":{"subscriberId":"q","data":{"plan":"pro"}},"payload":{"quiet":true,"amount":150}}`,
			[]string{"trigger:completed", "in_app:skipped", "email:completed"}},
		{"OKFilteredByPayload", `{"name":"cond","to":{"subscriberId":"r","data":{"plan":"pro"}},"payload":{"amount":50}}`,
			[]string{"trigger:completed", "in_app:completed", "email:skipped"}},
		{"OKFilteredBySubscriber", `{"name":"cond","to":{"subscriberId":"s","data":{"plan":"free"}},"payload":{"amount":500}}`,
			[]string{"trigger:completed", "in_app:completed", "email:skipped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			n := h.waitStatuses(t, h.trigger(t, tc.body), tc.want...)[0]
			for _, j := range n.Jobs {
				if j.Status == "skipped" {
					last := j.ExecutionDetails[len(j.ExecutionDetails)-1].Detail
					is.True(last == "Step was skipped based on steps conditions" || last == "Step was filtered based on steps filters") // says why
				}
			}
		})
	}
}

func TestPreferences_TurnChannelsOff(t *testing.T) {
	h := newHarness(t)
	env := h.App.Development.ID
	steps := func() []map[string]any {
		return []map[string]any{step("inbox", "in_app", nil), step("mail", "email", map[string]any{"subject": "s", "body": "b"})}
	}
	off := map[string]any{"preferences": map[string]any{"default": map[string]any{
		"all": map[string]any{"enabled": true, "readOnly": false}, "channels": map[string]any{"email": map[string]any{"enabled": false}}}, "user": nil}}
	userOff := map[string]any{"preferences": map[string]any{"default": map[string]any{"all": map[string]any{"enabled": true}},
		"user": map[string]any{"all": map[string]any{"enabled": false}}}}
	critical := map[string]any{"preferences": map[string]any{"default": map[string]any{
		"all": map[string]any{"enabled": false, "readOnly": true}}, "user": nil}}
	h.wf.add(t, env, "off", off, steps()...)
	h.wf.add(t, env, "useroff", userOff, steps()...)
	h.wf.add(t, env, "critical", critical, steps()...)
	for _, tc := range []struct {
		name, workflow, detail string
		want                   []string
	}{
		{"OKEmailOff", "off", "Step filtered by workflow preferences", []string{"trigger:completed", "in_app:completed", "email:skipped"}},
		{"OKUserOff", "useroff", "Step filtered by user preferences", []string{"trigger:completed", "in_app:skipped", "email:skipped"}},
		{"OKCriticalIgnoresThem", "critical", "", []string{"trigger:completed", "in_app:completed", "email:completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			n := h.waitStatuses(t, h.trigger(t, `{"name":"`+tc.workflow+`","to":"ada"}`), tc.want...)[0]
			if tc.detail != "" {
				d := n.details("email")
				is.Equal(d[len(d)-1], tc.detail) // names the preference
			}
			if tc.workflow == "critical" {
				is.True(n.Critical != nil && *n.Critical) // list marks it critical
			}
		})
	}
}

func TestDelivery_RetriesThenFails(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.msg.respond = func(d delivery, attempt int) (string, error) {
		switch d.Subscriber.SubscriberID {
		case "flaky":
			return "retry", nil
		case "broken":
			return "", fmt.Errorf("database is locked")
		case "noint":
			return "error", nil
		}
		return "sent", nil
	}
	h.wf.add(t, h.App.Development.ID, "chatty", nil,
		step("chat", "chat", map[string]any{"body": "hi"}), step("inbox", "in_app", nil))
	flaky := h.trigger(t, `{"name":"chatty","to":["flaky","broken"]}`)
	h.waitStatuses(t, flaky, "trigger:completed", "chat:queued", "in_app:pending")

	// The next notification's jobs run while the failing ones wait to retry.
	fine := h.trigger(t, `{"name":"chatty","to":"fine"}`)
	h.waitStatuses(t, fine, "trigger:completed", "chat:completed", "in_app:completed")

	h.waitFailures(t, flaky, "chat", 1)
	h.App.Clock.Advance(testRetry)
	h.wakeAll()
	h.waitFailures(t, flaky, "chat", 2)
	h.App.Clock.Advance(2 * testRetry)
	h.wakeAll()
	got := h.waitStatuses(t, flaky, "trigger:completed", "chat:failed", "in_app:canceled")
	for _, n := range got {
		var retries, failed int
		for _, j := range n.Jobs {
			if j.Type != "chat" {
				continue
			}
			for _, d := range j.ExecutionDetails {
				if d.IsRetry {
					retries++
				}
				if d.Status == "Failed" {
					failed++
				}
			}
		}
		is.True(retries >= 2)                                                            // attempts 2 and 3 are marked isRetry
		is.True(failed >= 3)                                                             // every attempt's failure is recorded
		is.True(strings.HasPrefix(n.details("in_app")[1], "Step canceled because step")) // the rest is canceled, with the reason
	}

	noint := h.trigger(t, `{"name":"chatty","to":"noint"}`)
	n := h.waitStatuses(t, noint, "trigger:completed", "chat:failed", "in_app:canceled")[0]
	is.Equal(n.details("chat")[1], "Subscriber does not have an active integration") // a final error is not retried
}

func TestWorker_KilledMidRunFinishesOnce(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "crash", nil, step("inbox", "in_app", nil), step("mail", "email", map[string]any{"subject": "s", "body": "b"}))
	block := make(chan struct{})
	h.msg.mu.Lock()
	h.msg.block = block
	h.msg.mu.Unlock()
	tx := h.trigger(t, `{"name":"crash","to":["a","b","c"]}`)
	platformtest.Eventually(t, 5*time.Second, func() bool { return h.msg.callCount() >= 2 }, "deliveries to start")

	h.stop(0) // kill: running jobs are canceled between claim and completion
	h.msg.mu.Lock()
	h.msg.block = nil
	h.msg.mu.Unlock()
	close(block)
	h.startWorker(t) // with the clock unmoved: a restart does not wait out the dead worker's leases
	got := h.waitStatuses(t, tx, "trigger:completed", "in_app:completed", "email:completed")
	is.Equal(len(got), 3)          // every notification finished
	is.Equal(len(h.msg.sent()), 6) // one message per job: none lost, none doubled
	interrupted := 0
	for _, n := range got {
		for _, j := range n.Jobs {
			var sent int
			for _, d := range j.ExecutionDetails {
				if d.Detail == "Message sent" {
					sent++
				}
				if d.Detail == interruptedDetail {
					interrupted++
				}
				is.True(!d.IsRetry) // a delivery the kill cut off has no known outcome: its next run is no retry
			}
			if j.Type != "trigger" {
				is.Equal(sent, 1) // each job recorded its result once
			}
		}
	}
	is.Equal(interrupted, 2) // the two deliveries the kill cut off say so
}

func TestTrigger_Cancel(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "later", nil,
		step("wait", "delay", map[string]any{"amount": 1, "unit": "days"}), step("inbox", "in_app", nil))
	tx := h.trigger(t, `{"name":"later","to":["a","b"]}`)
	h.waitStatuses(t, tx, "trigger:completed", "delay:delayed", "in_app:pending")

	res := h.Dev.Do(t, "DELETE", "/v1/events/trigger/"+tx, "")
	is.Equal(res.Status, 200)                             // cancel answers 200
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // something was canceled
	h.waitStatuses(t, tx, "trigger:completed", "delay:canceled", "in_app:canceled")
	again := h.Dev.Do(t, "DELETE", "/v1/events/trigger/"+tx, "")
	is.Equal(strings.TrimSpace(string(again.Body)), "false") // nothing left to cancel
	unknown := h.Dev.Do(t, "DELETE", "/v1/events/trigger/nope", "")
	is.Equal(strings.TrimSpace(string(unknown.Body)), "false") // unknown transaction
	h.App.Clock.Advance(25 * time.Hour)
	is.True(!h.anyDue(t))          // canceled jobs never come due
	is.Equal(h.msg.callCount(), 0) // nothing sent
}

func TestTrigger_CancelDigestMasterKeepsMerged(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "dg", nil,
		step("collect", "digest", map[string]any{"amount": 10, "unit": "minutes"}), step("inbox", "in_app", nil))
	first := h.trigger(t, `{"name":"dg","to":"ada","payload":{"n":1}}`)
	h.waitStatuses(t, first, "trigger:completed", "digest:delayed", "in_app:pending")
	second := h.trigger(t, `{"name":"dg","to":"ada","payload":{"n":2}}`)
	third := h.trigger(t, `{"name":"dg","to":"ada","payload":{"n":3}}`)
	h.waitStatuses(t, second, "trigger:completed", "digest:merged", "in_app:skipped")
	h.waitStatuses(t, third, "trigger:completed", "digest:merged", "in_app:skipped")

	res := h.Dev.Do(t, "DELETE", "/v1/events/trigger/"+first, "")
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // master canceled
	h.waitStatuses(t, second, "trigger:completed", "digest:delayed", "in_app:pending")
	h.App.Clock.Advance(11 * time.Minute)
	h.wakeAll()
	n := h.waitStatuses(t, second, "trigger:completed", "digest:completed", "in_app:completed")[0]
	is.Equal(n.DigestedNotificationID, "") // the heir is a master now
	sent := h.msg.sent()
	is.Equal(len(sent), 1)                                     // one digest delivery
	is.Equal(sent[0].Variables.Steps["collect"].EventCount, 2) // the surviving events
}

// The reference platform's cancel takes merged jobs too: an event merged
// into a digest that has not fired leaves it. Once the digest has fired,
// the event was delivered and there is nothing left to cancel.
func TestTrigger_CancelMergedEvent(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "dg", nil,
		step("dg", "digest", map[string]any{"type": "regular", "amount": 3, "unit": "seconds"}), step("inbox", "in_app", nil))
	h.trigger(t, `{"name":"dg","to":"ada","payload":{"n":1},"transactionId":"a"}`)
	h.waitStatuses(t, "a", "trigger:completed", "digest:delayed", "in_app:pending")
	for _, tx := range []string{"b", "c"} {
		h.trigger(t, `{"name":"dg","to":"ada","payload":{"n":"`+tx+`"},"transactionId":"`+tx+`"}`)
		h.waitStatuses(t, tx, "trigger:completed", "digest:merged", "in_app:skipped")
	}

	res := h.Dev.Do(t, "DELETE", "/v1/events/trigger/b", "")
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // the merged event is canceled
	b := h.waitStatuses(t, "b", "trigger:completed", "digest:canceled", "in_app:canceled")[0]
	is.Equal(b.details("digest")[2], "Step canceled by request") // each canceled job says why…
	is.Equal(b.details("in_app")[2], "Step canceled by request") // …the skipped step after it too
	is.Equal(b.DigestedNotificationID, "")                       // no longer in the digest

	h.App.Clock.Advance(4 * time.Second)
	h.wakeAll()
	a := h.waitStatuses(t, "a", "trigger:completed", "digest:completed", "in_app:completed")[0]
	sent := h.msg.sent()
	is.Equal(len(sent), 1) // one digest delivery
	var ns []any
	for _, e := range sent[0].Variables.Steps["dg"].Events {
		ns = append(ns, e.Payload["n"])
	}
	is.Equal(ns, []any{float64(1), "c"})                  // the digest lists only the events left…
	is.Equal(sent[0].Variables.Steps["dg"].EventCount, 2) // …and counts them
	is.Equal(len(a.Jobs[1].Digest.Events), 2)             // the master job records the same
	c := h.notifications(t, "transactionId=c")[0]
	is.Equal(c.DigestedNotificationID, a.ID) // c is still in the digest

	res = h.Dev.Do(t, "DELETE", "/v1/events/trigger/c", "")
	is.Equal(strings.TrimSpace(string(res.Body)), "false") // c was delivered in the fired digest
	after := h.notifications(t, "transactionId=c")[0]
	is.Equal(after.statuses(), c.statuses())               // its jobs unchanged…
	is.Equal(after.details("digest"), c.details("digest")) // …with no new detail…
	is.Equal(after.details("in_app"), c.details("in_app")) // …on any of them
	is.Equal(after.DigestedNotificationID, a.ID)           // still in a's digest
}

func TestTrigger_BulkAndBroadcast(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/bulk", `{"events":[
		{"name":"news","to":"ada"},{"name":"missing","to":"bob"},{"name":"news","to":["bob","cy"]}]}`)
	is.Equal(res.Status, 201) // bulk answers 201
	var results []struct {
		Acknowledged  bool     `json:"acknowledged"`
		Status        string   `json:"status"`
		TransactionID string   `json:"transactionId"`
		Error         []string `json:"error"`
	}
	res.Decode(t, &results)
	is.Equal(len(results), 3)                                  // one result per event
	is.Equal(results[0].Status, "processed")                   // first ran
	is.Equal(results[1].Status, "error")                       // unknown workflow reported…
	is.Equal(results[1].Error, []string{"workflow_not_found"}) // …with the reason
	is.Equal(results[2].Status, "processed")                   // and the rest still ran

	for _, tc := range []struct{ name, body string }{
		{"ErrEmpty", `{"events":[]}`},
		{"ErrEventInvalid", `{"events":[{"name":"news"}]}`},
		{"ErrTooMany", `{"events":[` + strings.TrimSuffix(strings.Repeat(`{"name":"news","to":"a"},`, 101), ",") + `]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger/bulk", tc.body).Status, 422) // rejected whole
		})
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"ErrBulkNotJSON", "/v1/events/trigger/bulk", `{"events":`, 400},
		{"ErrBulkEventsNotArray", "/v1/events/trigger/bulk", `{"events":{}}`, 422},
		{"ErrBulkEventPayload", "/v1/events/trigger/bulk", `{"events":[{"name":"news","to":"a","payload":"x"}]}`, 422},
		{"ErrBroadcastNoName", "/v1/events/trigger/broadcast", `{"payload":{}}`, 422},
		{"ErrBroadcastPayload", "/v1/events/trigger/broadcast", `{"name":"news","payload":5}`, 422},
		{"ErrBroadcastNotJSON", "/v1/events/trigger/broadcast", `nope`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.Dev.Do(t, "POST", tc.path, tc.body)
			is.Equal(res.Status, tc.status) // bad input is a clear 4xx
			if tc.status == 400 {
				is.True(strings.Contains(string(res.Body), `"type":"PAYLOAD_VALIDATION_ERROR"`)) // in the trigger endpoints' 400 shape
			}
		})
	}

	b := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","payload":{"x":1}}`)
	is.Equal(b.Status, 200) // broadcast answers 200
	var ack struct{ TransactionID string }
	b.Decode(t, &ack)
	got := h.waitStatuses(t, ack.TransactionID, "trigger:completed", "in_app:completed")
	is.Equal(len(got), 3)                                                                           // every subscriber of the environment
	is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"missing"}`).Status, 422) // unknown workflow
}

func TestTrigger_BulkTransactionIDs(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"news","to":"ada","transactionId":"old"}`).Status, 201)
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/bulk", `{"events":[
		{"name":"news","to":"bob","transactionId":"twice"},
		{"name":"news","to":"newcomer","transactionId":"twice"},
		{"name":"news","to":"cy","transactionId":"old"}]}`)
	is.Equal(res.Status, 201)
	var results []struct {
		Status string   `json:"status"`
		Error  []string `json:"error"`
	}
	res.Decode(t, &results)
	is.Equal(len(results), 3)
	is.Equal(results[0].Status, "processed") // the first event with the transactionId runs
	is.Equal(results[1].Status, "error")     // a second event of the request with it is refused
	is.Equal(results[2].Status, "error")     // as is one used by an earlier request
	is.Equal(len(h.notifications(t, "transactionId=twice")), 1)
	_, err := h.subs.Subscriber(context.Background(), h.App.Development.ID, "newcomer")
	is.True(errors.Is(err, platform.ErrNotFound)) // and a refused event creates no subscriber
}

func TestInsertTriggers_AllOrNone(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, _, taken := newQueue(t) // its trigger has transactionId "tx"
	fresh := *taken
	fresh.transactionID, fresh.recipients = "fresh", []recipient{{id: sqldb.NewID(), subscriberID: "bob",
		to: json.RawMessage(`{}`)}}
	fresh.planChain(&fresh.recipients[0], t0)
	taken.planChain(&taken.recipients[0], t0) // planned afresh

	var conflict *platform.Error
	err := s.insertTriggers(ctx, []*plan{&fresh, taken})
	is.True(errors.As(err, &conflict) && conflict.Status == 409) // the second's transactionId is taken
	used, err := s.transactionUsed(ctx, fresh.tenant.EnvironmentID, "fresh")
	is.NoErr(err)
	is.True(!used) // so the first's claim was undone, and nothing of it written
	var n int
	is.NoErr(s.db.QueryRowContext(ctx, `SELECT count(*) FROM notifications WHERE transaction_id = 'fresh'`).Scan(&n))
	is.Equal(n, 0)

	// A bulk request meets that race by writing each event on its own.
	out := []*triggerResult{{Status: triggerProcessed, TransactionID: "fresh"}, {Status: triggerProcessed, TransactionID: "tx"}}
	is.NoErr(writeBulk(ctx, s, []*plan{&fresh, taken}, []int{0, 1}, out))
	is.Equal(out[0].Status, triggerProcessed) // the free one is written
	is.Equal(out[1].Status, "error")          // the taken one is refused
	is.NoErr(s.db.QueryRowContext(ctx, `SELECT count(*) FROM notifications WHERE transaction_id = 'fresh'`).Scan(&n))
	is.Equal(n, 1)
}

func TestWorker_StopLetsRunningJobsFinish(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "slow", nil, step("inbox", "in_app", nil))
	block := make(chan struct{})
	h.msg.mu.Lock()
	h.msg.block = block
	h.msg.mu.Unlock()
	tx := h.trigger(t, `{"name":"slow","to":"ada"}`)
	platformtest.Eventually(t, 5*time.Second, func() bool { return h.msg.callCount() == 1 }, "the delivery to start")

	stopped := make(chan struct{})
	go func() {
		h.stop(5 * time.Second) // graceful: stop claiming, wait for the running job
		close(stopped)
	}()
	close(block)
	<-stopped
	n := h.notifications(t, "transactionId="+tx)[0]
	is.Equal(n.statuses(), []string{"trigger:completed", "in_app:completed"}) // the running job finished before Stop returned
}

// blockDeliveries makes every delivery wait until the returned func is called.
func (h *harness) blockDeliveries() (unblock func()) {
	block := make(chan struct{})
	h.msg.mu.Lock()
	h.msg.block = block
	h.msg.mu.Unlock()
	return func() { close(block) }
}

func TestWorker_StopGivesBackUnstartedJobs(t *testing.T) {
	is := is.New(t)
	h := newHarness(t) // two goroutines, so four jobs claimed at most
	h.wf.add(t, h.App.Development.ID, "queue", nil, step("inbox", "in_app", nil))
	unblock := h.blockDeliveries()
	tx := h.trigger(t, `{"name":"queue","to":["a","b","c","d","e","f"]}`)
	platformtest.Eventually(t, 5*time.Second, func() bool { return h.msg.callCount() == 2 }, "two deliveries to start")

	h.halt() // a signal: stop claiming
	unblock()
	h.stop(5 * time.Second)
	is.Equal(h.msg.callCount(), 2) // the claimed jobs that had not started were not started while stopping

	h.startWorker(t)
	got := h.waitStatuses(t, tx, "trigger:completed", "in_app:completed")
	is.Equal(len(got), 6)
	is.Equal(h.msg.callCount(), 6) // each job ran once
	for _, n := range got {
		for _, j := range n.Jobs {
			for _, d := range j.ExecutionDetails {
				is.True(!d.IsRetry) // giving a job back took its attempt back: its first run is not a retry
			}
		}
	}
}

// A bug that panics while a step runs fails that step, with a detail that
// names the error id logged beside the panic, and the worker runs on. A
// claimed job runs again after a restart, so a panic that stopped Herald
// would stop it again at every start.
func TestWorker_PanickingStepFailsAlone(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.msg.mu.Lock()
	h.msg.respond = func(d delivery, _ int) (string, error) {
		if d.Subscriber.SubscriberID == "boom" {
			panic("a provider bug")
		}
		return "sent", nil
	}
	h.msg.mu.Unlock()
	h.wf.add(t, h.App.Development.ID, "chatty", nil,
		step("chat", "chat", map[string]any{"body": "hi"}), step("inbox", "in_app", nil))
	boom := h.trigger(t, `{"name":"chatty","to":"boom"}`)
	n := h.waitStatuses(t, boom, "trigger:completed", "chat:failed", "in_app:canceled")[0]
	is.True(strings.HasPrefix(n.details("chat")[1], "Step failed: internal error (errorId ")) // says so, and where to look
	fine := h.trigger(t, `{"name":"chatty","to":"fine"}`)
	h.waitStatuses(t, fine, "trigger:completed", "chat:completed", "in_app:completed") // the worker runs on
	is.Equal(h.msg.callCount(), 3)                                                     // the failed step is not run again
}

func TestWorker_SlowProviderLeavesRoomForOtherSteps(t *testing.T) {
	is := is.New(t)
	h := newHarness(t) // two goroutines a lane
	h.wf.add(t, h.App.Development.ID, "mail", nil, step("mail", "email", map[string]any{"subject": "s", "body": "b"}))
	h.wf.add(t, h.App.Development.ID, "inbox", nil, step("inbox", "in_app", nil))
	h.wf.add(t, h.App.Development.ID, "text", nil, step("text", "sms", map[string]any{"body": "b"}))
	h.wf.add(t, h.App.Development.ID, "later", nil,
		step("wait", "delay", map[string]any{"type": "regular", "amount": 1, "unit": "minutes"}), step("inbox", "in_app", nil))
	slow := make(chan struct{})
	defer close(slow)
	h.msg.mu.Lock()
	h.msg.respond = func(d delivery, _ int) (string, error) {
		if d.Channel == "email" {
			<-slow // a provider that does not answer
		}
		return "sent", nil
	}
	h.msg.mu.Unlock()
	h.trigger(t, `{"name":"mail","to":["a","b","c","d","e","f","g","h"]}`) // four times the goroutines
	platformtest.Eventually(t, 5*time.Second, func() bool { return h.msg.callCount() == 2 }, "the emails to start")

	tx := h.trigger(t, `{"name":"inbox","to":"z"}`)
	h.waitStatuses(t, tx, "trigger:completed", "in_app:completed") // in-app runs while every email waits on its provider
	later := h.trigger(t, `{"name":"later","to":"z"}`)
	h.waitStatuses(t, later, "trigger:completed", "delay:delayed", "in_app:pending")
	h.App.Clock.Advance(2 * time.Minute)
	h.wakeAll()
	h.waitStatuses(t, later, "trigger:completed", "delay:completed", "in_app:completed") // and so do delays
	sms := h.trigger(t, `{"name":"text","to":"z"}`)
	h.waitStatuses(t, sms, "trigger:completed", "sms:completed") // and other channels' sends
	is.Equal(h.msg.callCount(), 5)                               // two emails, two in-app messages and an SMS
}

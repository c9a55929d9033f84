package activity

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
		if _, err := h.subs.UpsertSubscriberJSON(context.Background(), tenant, []byte(fmt.Sprintf(`{"subscriberId":%q}`, id))); err != nil {
			t.Fatal(err)
		}
	}
}

// unfinished lists the recorded broadcasts as "transactionId after
// subscriberId".
func (h *harness) unfinished(t *testing.T) []string {
	t.Helper()
	rows, err := h.App.DB.R.Query(`SELECT transaction_id, last_subscriber_id FROM activity_broadcasts ORDER BY transaction_id`)
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

// perSubscriber counts notifications by subscriberId.
func perSubscriber(ns []apiNotification) map[string]int {
	out := map[string]int{}
	for _, n := range ns {
		out[n.Subscriber.SubscriberID]++
	}
	return out
}

var everyone = map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1, "s5": 1}

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
			var ack struct {
				Acknowledged  bool   `json:"acknowledged"`
				Status        string `json:"status"`
				TransactionID string `json:"transactionId"`
			}
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

func TestBroadcast_OutlivesClient(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, smallBatches)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	h.addSubscribers(t, "s1", "s2", "s3", "s4", "s5")

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

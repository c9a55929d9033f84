package activity

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// TestTrigger_TakenTransactionIDRefusedAloneInABatch: triggers sent at
// once share group commits, whose rows go to the database held back and
// pipelined on PostgreSQL; one whose transactionId is taken is refused
// alone and writes nothing, and every other is stored whole.
func TestTrigger_TakenTransactionIDRefusedAloneInABatch(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"news","to":"ada","transactionId":"taken"}`).Status, 201) // the first use of "taken"

	const n = 40
	status := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("batch-%d", i)
			if i%8 == 5 {
				id = "taken"
			}
			body := fmt.Sprintf(`{"name":"news","to":"sub-%d","transactionId":%q,"payload":{"i":%d}}`, i, id, i)
			status[i] = h.Dev.Do(t, "POST", "/v1/events/trigger", body).Status
		}()
	}
	wg.Wait()
	for i, st := range status {
		if i%8 == 5 {
			is.Equal(st, http.StatusConflict) // a taken transactionId is refused
			continue
		}
		is.Equal(st, http.StatusCreated) // the triggers beside it are accepted
		got := h.waitStatuses(t, fmt.Sprintf("batch-%d", i), "trigger:completed", "in_app:completed")
		is.Equal(len(got), 1) // and stored whole: its notification, jobs and details
	}
	is.Equal(len(h.notifications(t, "transactionId=taken")), 1) // the refused triggers wrote no notification
}

// TestTrigger_SameNewTransactionIDInABatch: triggers sent at once with the
// same unused transactionId, which their group commits claim together:
// exactly one is accepted and the others are refused.
func TestTrigger_SameNewTransactionIDInABatch(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))

	const n = 24
	status := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("other-%d", i)
			if i%2 == 0 {
				id = "twin"
			}
			body := fmt.Sprintf(`{"name":"news","to":"sub-%d","transactionId":%q}`, i, id)
			status[i] = h.Dev.Do(t, "POST", "/v1/events/trigger", body).Status
		}()
	}
	wg.Wait()
	accepted := 0
	for i, st := range status {
		if i%2 == 1 {
			is.Equal(st, http.StatusCreated) // the triggers beside them are accepted
			continue
		}
		if st == http.StatusCreated {
			accepted++
		} else {
			is.Equal(st, http.StatusConflict) // the others sharing it are refused
		}
	}
	is.Equal(accepted, 1)                                                                   // one trigger got "twin"
	is.Equal(len(h.notifications(t, "transactionId=twin")), 1)                              // and only its notification is stored
	is.Equal(len(h.waitStatuses(t, "other-3", "trigger:completed", "in_app:completed")), 1) // a neighbour is stored whole
}

// TestTrigger_BulksSharingATransactionIDAtOnce: bulk requests sent at
// once that share one unused transactionId; each was checked before any
// wrote, so their group commits meet the conflict and each is written an
// event at a time: one event gets the shared transactionId and every
// other event of theirs is accepted, as the claims a refused request made
// are undone with it.
func TestTrigger_BulksSharingATransactionIDAtOnce(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))

	const n = 8
	results := make([][]struct {
		Acknowledged  bool   `json:"acknowledged"`
		TransactionID string `json:"transactionId"`
	}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"events":[
				{"name":"news","to":"a-%d","transactionId":"bulk-%d-a"},
				{"name":"news","to":"b-%d","transactionId":"shared"},
				{"name":"news","to":"c-%d","transactionId":"bulk-%d-c"}]}`, i, i, i, i, i)
			res := h.Dev.Do(t, "POST", "/v1/events/trigger/bulk", body)
			is.Equal(res.Status, http.StatusCreated)
			res.Decode(t, &results[i])
		}()
	}
	wg.Wait()
	shared := 0
	for i, out := range results {
		is.Equal(len(out), 3)
		is.True(out[0].Acknowledged) // the events beside the shared one are accepted
		is.True(out[2].Acknowledged)
		if out[1].Acknowledged {
			shared++
		}
		is.Equal(len(h.notifications(t, fmt.Sprintf("transactionId=bulk-%d-c", i))), 1)
	}
	is.Equal(shared, 1)                                          // one event got the shared transactionId
	is.Equal(len(h.notifications(t, "transactionId=shared")), 1) // and only it wrote a notification
}

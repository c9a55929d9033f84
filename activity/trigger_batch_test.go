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

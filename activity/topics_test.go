package activity

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// A trigger to a topic pages its members two a batch here: the actor is
// left out of the page it falls in, and a member deleted, and another
// unsubscribed, after the first pages are written are not reached; every
// other member gets exactly one notification, and one delivery.
func TestTopics_FanOutPagesEachMemberOnce(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, smallBatches)
	h.wf.add(t, h.App.Development.ID, "news", nil, step("inbox", "in_app", nil))
	members := []string{"m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09"}
	h.addSubscribers(t, append(members, "outsider")...)
	body := `{"subscribers":["m01","m02","m03","m04","m05","m06","m07","m08","m09"]}`
	is.Equal(h.Dev.Do(t, "POST", "/v1/topics/all/subscribers", body).Status, http.StatusOK) // the topic filled

	// Once the pages up to m04 are written (m01 m02, then m03 m04 less the
	// actor m04), m06 is deleted and m08 unsubscribed.
	removed := make(chan error, 1)
	h.subs.onList(func(ctx context.Context, after string) error {
		if after != "m04" {
			return nil
		}
		removed <- removeMidway(ctx, h)
		return nil
	})
	res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"news","actor":"m04","transactionId":"fan",
		"to":{"type":"Topic","topicKey":"all"}}`)
	is.Equal(res.Status, http.StatusCreated) // accepted
	select {
	case err := <-removed:
		is.NoErr(err) // m06 deleted and m08 unsubscribed during the fan-out
	default:
		t.Fatal("the fan-out never read the page after m04")
	}
	is.Equal(h.unfinished(t), []string{}) // the fan-out finished

	want := map[string]int{"m01": 1, "m02": 1, "m03": 1, "m05": 1, "m07": 1, "m09": 1}
	is.Equal(perSubscriber(h.notifications(t, "transactionId=fan")), want) // each member once; not the actor, the removed or the outsider
	is.Equal(perSubscriber(h.notifications(t, "topicKey=all")), want)      // each indexed under its topic
	for _, n := range h.notifications(t, "transactionId=fan") {
		is.Equal(len(n.Topics), 1)            // reached through one topic
		is.Equal(n.Topics[0].TopicKey, "all") // the topic it came through
	}
	platformtest.Eventually(t, 10*time.Second, func() bool { return len(h.msg.sent()) >= len(want) }, "the deliveries")
	is.Equal(h.deliveredTo(), want) // each delivered once
}

// removeMidway deletes m06 and unsubscribes m08 from the topic "all",
// through the subscribers domain's routes.
func removeMidway(ctx context.Context, h *harness) error {
	for _, r := range []struct{ method, path, body string }{
		{"DELETE", "/v1/subscribers/m06", ""},
		{"POST", "/v1/topics/all/subscribers/removal", `{"subscribers":["m08"]}`},
	} {
		req, err := http.NewRequestWithContext(ctx, r.method, h.URL+r.path, strings.NewReader(r.body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "ApiKey "+platformtest.DevKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode >= 300 {
			return fmt.Errorf("%s %s: %d", r.method, r.path, res.StatusCode)
		}
	}
	return nil
}

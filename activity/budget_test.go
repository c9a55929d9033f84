package activity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// TestTrigger_StorageBudget: a trigger whose templates render a large
// payload field stores it in each recipient's message, so past the
// request storage limit it is refused with a 422 that says how much it
// would have stored, to named subscribers, to a topic and as a broadcast; the same
// payload with templates that render a small field of it is stored once
// and accepted. Large overrides, stored once and named by each message,
// count once.
func TestTrigger_StorageBudget(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.MaxRequestStorage(1<<20))
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Renders","workflowId":"renders","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ payload.name }}: {{ payload.blob }}"}}]}`)
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
	var ids []string
	for i := range 20 {
		ids = append(ids, fmt.Sprintf(`"s-%d"`, i))
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"s-%d"}`, i))
	}
	payload := `{"name":"Ada","blob":"` + strings.Repeat("x", 100<<10) + `"}`
	to := "[" + strings.Join(ids, ",") + "]"

	res := srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"renders","to":`+to+`,"payload":`+payload+`}`)
	is.Equal(res.Status, 422)                                        // 20 rendered copies pass 1 MB
	is.True(strings.Contains(string(res.Body), "would store about")) // saying how much
	is.True(strings.Contains(string(res.Body), "HERALD_MAX_REQUEST_STORAGE"))
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"renders","payload":`+payload+`}`)
	is.Equal(res.Status, 422) // a broadcast counts the environment's subscribers
	apptest.MustCreate(t, srv.Dev, "/v1/topics", `{"key":"all","name":"All"}`)
	res = srv.Dev.Do(t, "POST", "/v1/topics/all/subscribers", `{"subscribers":`+to+`}`)
	is.Equal(res.Status, 200) // the topic holds every subscriber
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"renders","to":[{"type":"Topic","topicKey":"all"}],"payload":`+payload+`}`)
	is.Equal(res.Status, 422) // a trigger to a topic counts its members
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"renders","to":["s-1","s-2"],"payload":`+payload+`}`)
	is.Equal(res.Status, 201) // two rendered copies fit

	res = srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello","to":`+to+`,"payload":`+payload+`}`)
	is.Equal(res.Status, 201) // a payload stored once, whatever the recipients
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"hello","payload":`+payload+`}`)
	is.Equal(res.Status, 200) // as a broadcast too
	overrides := `{"big":"` + strings.Repeat("o", 100<<10) + `"}`
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello","to":`+to+`,"overrides":`+overrides+`}`)
	is.Equal(res.Status, 201) // overrides stored once, whatever the recipients
}

// TestTriggerBulk_StorageBudgetCountsTheWholeRequest: a bulk request's
// events are checked against the request storage limit together, not one
// at a time: events that each fit but together pass it are refused as a
// whole, with a 422 that says how much they would have stored, before
// anything is stored (no notification, no subscriber the events name
// created); fewer of them are accepted.
func TestTriggerBulk_StorageBudgetCountsTheWholeRequest(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.MaxRequestStorage(1<<20))
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Renders","workflowId":"renders","active":true,"steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ payload.name }}: {{ payload.blob }}"}}]}`)
	payload := `{"name":"Ada","blob":"` + strings.Repeat("x", 40<<10) + `"}`
	// Each event renders its 40 KB to 5 subscribers: about 240 KB, under
	// the limit alone.
	bulk := func(events int) string {
		var evs []string
		for e := range events {
			var to []string
			for s := range 5 {
				to = append(to, fmt.Sprintf(`"b-%d-%d"`, e, s))
			}
			evs = append(evs, `{"name":"renders","to":[`+strings.Join(to, ",")+`],"payload":`+payload+`}`)
		}
		return `{"events":[` + strings.Join(evs, ",") + `]}`
	}
	count := func(table string) (n int) {
		is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
		return n
	}
	subscribers := count("subscribers")

	res := srv.Dev.Do(t, "POST", "/v1/events/trigger/bulk", bulk(6))
	is.Equal(res.Status, 422) // six events together pass 1 MB
	var e struct {
		Message string `json:"message"`
	}
	res.Decode(t, &e)
	var would int64
	_, err := fmt.Sscanf(e.Message[strings.Index(e.Message, "about"):], "about %d bytes", &would)
	is.NoErr(err)                                                 // saying how much
	is.True(would > 1<<20 && would < 2<<20)                       // about 6 × 240 KB
	is.True(strings.Contains(e.Message, "its 6 events together")) // for the whole request
	is.Equal(count("notifications"), 0)                           // nothing stored
	is.Equal(count("subscribers"), subscribers)                   // not even the subscribers the events name

	var out []struct {
		Status string `json:"status"`
	}
	res = srv.Dev.Do(t, "POST", "/v1/events/trigger/bulk", bulk(3))
	is.Equal(res.Status, 201) // three fit
	res.Decode(t, &out)
	is.Equal(len(out), 3)
	for _, ev := range out {
		is.Equal(ev.Status, "processed") // each accepted
	}
	is.Equal(count("notifications"), 15) // a notification for each subscriber of each event
}

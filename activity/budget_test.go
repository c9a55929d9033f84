package activity_test

import (
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

package workflows_test

import (
	"testing"

	"github.com/matryer/is"
)

// PATCH changes the fields its body names and keeps the rest, steps
// included, as the official client's workflows.patch expects.
func TestWorkflow_Patch(t *testing.T) {
	srv, _ := newServer(t, nil)
	created := mustCreate(t, srv.Dev, `{"name":"Welcome","workflowId":"welcome","description":"d","tags":["a"],"active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)

	t.Run("OK named fields change, the rest stay", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PATCH", "/v2/workflows/welcome", `{"active":false,"tags":["b","b"],"validatePayload":true,
			"payloadSchema":{"type":"object","properties":{"n":{"type":"number"}}}}`)
		is.Equal(res.Status, 200) // patched
		var got wfResponse
		res.Decode(t, &got)
		is.Equal(got.Active, false)                    // changed
		is.Equal(got.Tags, []string{"b"})              // replaced, without repeats
		is.True(got.ValidatePayload)                   // changed
		is.True(len(got.PayloadSchema) > 0)            // set
		is.Equal(got.Name, "Welcome")                  // kept
		is.Equal(got.Description, "d")                 // kept
		is.Equal(len(got.Steps), 1)                    // steps kept
		is.Equal(got.Steps[0].ID, created.Steps[0].ID) // with their ids
		is.Equal(got.WorkflowID, "welcome")            // identifier kept
	})
	for _, tc := range []struct{ name, body string }{
		{"ErrEmptyName", `{"name":""}`},
		{"ErrBadSchema", `{"payloadSchema":{"type":12}}`},
		{"ErrWrongType", `{"active":"yes"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := srv.Dev.Do(t, "GET", "/v2/workflows/welcome", "")
			res := srv.Dev.Do(t, "PATCH", "/v2/workflows/welcome", tc.body)
			is.Equal(res.Status, 422) // refused
			after := srv.Dev.Do(t, "GET", "/v2/workflows/welcome", "")
			is.Equal(string(after.Body), string(before.Body)) // and nothing changed
		})
	}
	t.Run("ErrUnknown", func(t *testing.T) {
		is.New(t).Equal(srv.Dev.Do(t, "PATCH", "/v2/workflows/nope", `{"active":true}`).Status, 404)
	})
}

package messaging_test

import (
	"testing"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/matryer/is"
)

// TestInbox_WorkflowEditsShow checks that an inbox shows and filters by its
// notifications' workflows as they are now: the workflow store keeps what
// the inbox reads of them between requests, and a workflow's edit must
// reach the next read.
func TestInbox_WorkflowEditsShow(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	steps := `"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Alert"}}]`
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,"severity":"high",`+steps+`}`)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.TriggerTo(t, srv, "alerts", "ada", `{}`)
	all := c.Wait(1)
	is.Equal(all[0].Workflow.Name, "Alerts") // the workflow's name
	is.Equal(all[0].Severity, "high")        // and severity
	high, _ := c.List("limit=10&severity=high")
	is.Equal(len(high), 1) // found by it

	res := srv.Dev.Do(t, "PUT", "/v2/workflows/alerts", `{"name":"Alarms","severity":"low",`+steps+`}`)
	is.Equal(res.Status, 200) // workflow edited
	after, _ := c.List("limit=10")
	is.Equal(len(after), 1)                     // the same notification
	is.Equal(after[0].Workflow.Name, "Alarms")  // under the workflow's new name
	is.Equal(after[0].Severity, "low")          // and severity
	is.Equal(after[0].Workflow.Severity, "low") // on the workflow too
	high, _ = c.List("limit=10&severity=high")
	is.Equal(len(high), 0) // no longer high
	low, _ := c.List("limit=10&severity=low")
	is.Equal(len(low), 1) // but low
}

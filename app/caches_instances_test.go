package app_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// A trigger reads its workflow from a cache: a workflow deactivated through
// one instance is refused by another within a second.
func TestWire_WorkflowDeactivatedThroughOneInstance(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewInstances(t, 2)
	a, b := srv[0], srv[1]
	apptest.CreateHello(t, a, "Hi")
	triggerStatus := func() string {
		var ack struct {
			Status string `json:"status"`
		}
		res := b.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello","to":"ada"}`)
		is.Equal(res.Status, 201) // the trigger is acknowledged
		res.Decode(t, &ack)
		return ack.Status
	}
	is.Equal(triggerStatus(), "processed")                                                // instance B triggers the workflow made through A, and caches it
	is.Equal(a.Dev.Do(t, "PATCH", "/v2/workflows/hello", `{"active":false}`).Status, 200) // deactivated through A
	platformtest.Eventually(t, time.Second, func() bool { return triggerStatus() == "trigger_not_active" },
		"instance B to refuse the workflow deactivated through A")
}

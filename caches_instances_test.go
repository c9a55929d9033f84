package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// startWiredInstances boots n instances of the whole application, wired as
// run wires it, on one PostgreSQL database (platformtest.NewInstances;
// skipped on SQLite). Their background work stops before their databases
// close.
func startWiredInstances(t *testing.T, n int) []*platformtest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var started []*app.App
	srv := platformtest.NewInstances(t, n, func(mux *http.ServeMux, a *platformtest.App) {
		d := app.Deps{
			DB:           a.DB,
			Logger:       a.Logger,
			Secret:       a.Secret,
			Now:          a.Clock.Now,
			Environments: []platform.Environment{a.Development, a.Production},
			Outbound:     a.Outbound,
			Inbox:        a.Inbox,
		}
		herald, err := app.Start(ctx, mux, d)
		if err != nil {
			t.Fatalf("wire: %v", err)
		}
		mu.Lock()
		started = append(started, herald)
		mu.Unlock()
	})
	t.Cleanup(func() {
		cancel()
		stopCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		for _, herald := range started {
			herald.Stop(stopCtx)
		}
	})
	return srv
}

// A trigger reads its workflow from a cache: a workflow deactivated through
// one instance is refused by another within a second.
func TestWire_WorkflowDeactivatedThroughOneInstance(t *testing.T) {
	is := is.New(t)
	srv := startWiredInstances(t, 2)
	a, b := srv[0], srv[1]
	createHello(t, a, "Hi")
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

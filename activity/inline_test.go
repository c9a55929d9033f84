package activity

import (
	"net/http"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// A trigger wakes the worker only when it leaves the worker a job: after
// one whose in-app step it ran itself, a wake would cost an empty claim on
// the writer.
func TestTrigger_WakesWorkerOnlyForQueuedWork(t *testing.T) {
	is := is.New(t)
	wf := &apiWorkflows{}
	var store *Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		store = NewStore(app.DB, app.Clock.Now)
		wf.Store = workflows.NewStore(app.DB)
		workflows.AddRoutes(mux, wf.Store, nil)
		subs := subscribers.NewStore(app.DB, nil, app.Clock.Now)
		// Not started: a wake stays in the channel for the test to see.
		w := NewWorker(store, subs, newFakeMessenger(), WorkerConfig{Logger: app.Logger})
		AddRoutes(mux, store, w, wf, subs)
	})
	wf.srv = srv
	env := srv.App.Development.ID
	wf.add(t, env, "inbox-only", nil, step("inbox", "in_app", map[string]any{"body": "Hi"}))
	wf.add(t, env, "inbox-then-mail", nil, step("inbox", "in_app", map[string]any{"body": "Hi"}),
		step("mail", "email", map[string]any{"subject": "Hi", "body": "Hello"}))
	wf.add(t, env, "mail-only", nil, step("mail", "email", map[string]any{"subject": "Hi", "body": "Hello"}))

	// trigger returns the lanes the trigger woke.
	trigger := func(name string) []int {
		t.Helper()
		res := srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"`+name+`","to":"ada"}`)
		is.Equal(res.Status, http.StatusCreated) // trigger accepted
		woken := []int{}
		for lane, ch := range store.woken {
			select {
			case <-ch:
				woken = append(woken, lane)
			default:
			}
		}
		return woken
	}
	is.Equal(trigger("inbox-only"), []int{})               // its one step ran in the trigger: nothing for the worker
	is.Equal(trigger("inbox-then-mail"), []int{laneEmail}) // the in-app step released the email job, in the email lane alone
	is.Equal(trigger("mail-only"), []int{laneEmail})       // the email job is due
}

package workflows_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/workflows"
)

// newInstances starts n instances of the workflows API on one PostgreSQL
// database (platformtest.NewInstances; skipped on SQLite), with each one's
// store.
func newInstances(t *testing.T, n int) ([]*platformtest.Server, []*workflows.Store) {
	t.Helper()
	stores := make([]*workflows.Store, 0, n)
	srv := platformtest.NewInstances(t, n, func(mux *http.ServeMux, app *platformtest.App) {
		store := workflows.NewStore(app.DB)
		if err := store.SeedEnvironment(context.Background(), app.Development); err != nil {
			t.Fatalf("seed: %v", err)
		}
		workflows.AddRoutes(mux, store, nil)
		stores = append(stores, store)
	})
	return srv, stores
}

// A trigger reads its workflow from a cache; a workflow deactivated or
// deleted through one instance must be refused by every other within a
// second, not kept until that instance writes a workflow itself.
func TestWorkflow_ChangesReachOtherInstances(t *testing.T) {
	is := is.New(t)
	srv, stores := newInstances(t, 2)
	a, b := srv[0], stores[1]
	ctx := context.Background()
	env := srv[1].App.Development.ID
	mustCreate(t, a.Dev, `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[]}`)
	w, err := b.TriggerWorkflow(ctx, env, "welcome")
	is.NoErr(err)     // instance B finds the workflow made through A
	is.True(w.Active) // and it is active
	_, err = b.TriggerWorkflow(ctx, env, "welcome")
	is.NoErr(err) // now cached in B

	is.Equal(a.Dev.Do(t, "PATCH", "/v2/workflows/welcome", `{"active":false}`).Status, 200) // deactivated through A
	platformtest.Eventually(t, time.Second, func() bool {
		w, err := b.TriggerWorkflow(ctx, env, "welcome")
		return err == nil && !w.Active
	}, "instance B to see the workflow deactivated through A")

	is.Equal(a.Dev.Do(t, "DELETE", "/v2/workflows/welcome", "").Status, 204) // deleted through A
	platformtest.Eventually(t, time.Second, func() bool {
		_, err := b.TriggerWorkflow(ctx, env, "welcome")
		return err != nil
	}, "instance B to refuse the workflow deleted through A")
}

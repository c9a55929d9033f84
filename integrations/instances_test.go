package integrations_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/platform/platformtest"
)

// newInstances starts n instances of the integrations API on one
// PostgreSQL database (platformtest.NewInstances; skipped on SQLite), with
// each one's store; nothing is seeded.
func newInstances(t *testing.T, n int) ([]*platformtest.Server, []*integrations.Store) {
	t.Helper()
	var stores []*integrations.Store
	srv := platformtest.NewInstances(t, n, func(mux *http.ServeMux, app *platformtest.App) {
		store, err := integrations.NewStore(app.DB, app.Secret)
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		store.WithOutbound(app.Outbound).SetCheckTimeout(testCheckTimeout)
		integrations.AddRoutes(mux, store)
		stores = append(stores, store)
	})
	return srv, stores
}

// concurrently sends body to POST /v1/integrations through every instance,
// times times each, all at once, and returns the statuses.
func concurrently(t *testing.T, srv []*platformtest.Server, times int, body string) []int {
	t.Helper()
	var mu sync.Mutex
	var statuses []int
	var start, done sync.WaitGroup
	start.Add(1)
	for _, s := range srv {
		for range times {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				st := s.Dev.Do(t, "POST", "/v1/integrations", body).Status
				mu.Lock()
				statuses = append(statuses, st)
				mu.Unlock()
			}()
		}
	}
	start.Done()
	done.Wait()
	return statuses
}

// A delivery reads the active integrations from a cache; one deactivated
// or deleted through another instance must stop being used within a
// second.
func TestIntegration_ChangesReachOtherInstances(t *testing.T) {
	is := is.New(t)
	srv, stores := newInstances(t, 2)
	a, b := srv[0], stores[1]
	ctx := context.Background()
	env := srv[1].App.Development.ID
	active := func() int {
		list, err := b.ActiveIntegrations(ctx, env, "chat")
		is.NoErr(err) // instance B reads its active integrations
		return len(list)
	}
	is.Equal(active(), 0) // none yet, and that is cached in B
	in := mustCreate(t, a.Dev, `{"providerId":"slack","channel":"chat","active":true,"credentials":{}}`)
	platformtest.Eventually(t, time.Second, func() bool { return active() == 1 }, "instance B to see the integration created through A")
	is.Equal(a.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"active":false}`).Status, 200) // deactivated through A
	platformtest.Eventually(t, time.Second, func() bool { return active() == 0 }, "instance B to drop the integration deactivated through A")
	is.Equal(a.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"active":true}`).Status, 200) // activated again
	platformtest.Eventually(t, time.Second, func() bool { return active() == 1 }, "instance B to see it active again")
	is.Equal(a.Dev.Do(t, "DELETE", "/v1/integrations/"+in.ID, "").Status, 200) // deleted through A
	platformtest.Eventually(t, time.Second, func() bool { return active() == 0 }, "instance B to drop the integration deleted through A")
}

// One in-app service integration per environment, and one primary per
// channel, hold when instances create integrations at once: each checks
// before it writes.
func TestIntegration_InstancesCreatingAtOnce(t *testing.T) {
	srv, _ := newInstances(t, 3)
	t.Run("OneService", func(t *testing.T) {
		is := is.New(t)
		statuses := concurrently(t, srv, 3, `{"providerId":"service","channel":"in_app","active":true}`)
		created := 0
		for _, st := range statuses {
			is.True(st == 201 || st == 400) // created, or refused as the environment's second
			if st == 201 {
				created++
			}
		}
		is.Equal(created, 1) // one service integration made
		services := 0
		for _, in := range list(t, srv[0].Dev, "/v1/integrations") {
			if in.ProviderID == "service" && in.EnvironmentID == srv[0].App.Development.ID {
				services++
			}
		}
		is.Equal(services, 1) // one stored
	})
	t.Run("OnePrimary", func(t *testing.T) {
		is := is.New(t)
		statuses := concurrently(t, srv, 3, `{"providerId":"sendgrid","channel":"email","active":true,"credentials":{"apiKey":"k","from":"a@b.example"}}`)
		is.Equal(fmt.Sprint(statuses), fmt.Sprint([]int{201, 201, 201, 201, 201, 201, 201, 201, 201})) // every create succeeds
		primaries := 0
		for _, in := range list(t, srv[1].Dev, "/v1/integrations/active") {
			if in.Channel == "email" && in.Primary {
				primaries++
			}
		}
		is.Equal(primaries, 1) // exactly one email primary
	})
}

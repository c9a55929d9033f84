package subscribers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// newInstances starts n instances of the subscribers API on one PostgreSQL
// database (platformtest.NewInstances; skipped on SQLite), with each one's
// store.
func newInstances(t *testing.T, n int) ([]*platformtest.Server, []*subscribers.Store) {
	t.Helper()
	var stores []*subscribers.Store
	srv := platformtest.NewInstances(t, n, func(mux *http.ServeMux, app *platformtest.App) {
		store := subscribers.NewStore(app.DB, nil, app.Clock.Now)
		subscribers.AddRoutes(mux, store)
		stores = append(stores, store)
	})
	return srv, stores
}

// all runs fn(i) for i in [0, n) at once and waits for every one.
func all(n int, fn func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			fn(i)
		}()
	}
	start.Done()
	done.Wait()
}

// A trigger and a feed read subscribers and preferences from caches; what
// is written through one instance must reach the others within a second.
func TestSubscriber_ChangesReachOtherInstances(t *testing.T) {
	is := is.New(t)
	srv, stores := newInstances(t, 2)
	a, b := srv[0], stores[1]
	ctx := context.Background()
	env := srv[1].App.Development.ID
	created := mustCreateSubscriber(t, a.Dev, `{"subscriberId":"ada","firstName":"Ada","email":"ada@old.example"}`)
	sub, err := b.Subscriber(ctx, env, "ada")
	is.NoErr(err)                           // instance B reads the subscriber made through A
	is.Equal(*sub.Email, "ada@old.example") // as made
	id, err := b.SubscriberIdentity(ctx, env, "ada")
	is.NoErr(err)                  // and its identity
	is.Equal(*id.FirstName, "Ada") // as made

	mustDo(t, a.Dev, "PUT", "/v1/subscribers/ada", `{"email":"ada@new.example","firstName":"Augusta"}`, 200, nil)
	platformtest.Eventually(t, time.Second, func() bool {
		sub, err := b.Subscriber(ctx, env, "ada")
		return err == nil && *sub.Email == "ada@new.example"
	}, "instance B to read the email written through A")
	platformtest.Eventually(t, time.Second, func() bool {
		id, err := b.SubscriberIdentity(ctx, env, "ada")
		return err == nil && *id.FirstName == "Augusta"
	}, "instance B to read the name written through A")

	emailOn := func() bool {
		r, err := b.Preferences(ctx, env, created.ID, "", workflows.Preferences{Default: workflows.ChannelPreferences{All: workflows.AllPreference{Enabled: true}}})
		is.NoErr(err) // instance B resolves the subscriber's preferences
		return r.Channels["email"].Enabled
	}
	is.True(emailOn()) // on by default, and cached in B
	mustDo(t, a.Dev, "PATCH", "/v1/subscribers/ada/preferences", `{"preferences":[{"type":"email","enabled":false}]}`, 200, nil)
	platformtest.Eventually(t, time.Second, func() bool { return !emailOn() }, "instance B to see the preference set through A")

	mustDo(t, a.Dev, "DELETE", "/v1/subscribers/ada", "", 200, nil)
	platformtest.Eventually(t, time.Second, func() bool {
		_, err := b.Subscriber(ctx, env, "ada")
		return errors.Is(err, platform.ErrNotFound)
	}, "instance B to miss the subscriber deleted through A")
}

// A subscriber write reads the subscriber before it writes it: instances
// writing one subscriber at once must neither fail on its unique key nor
// lose each other's changes.
func TestSubscriber_InstancesWritingAtOnce(t *testing.T) {
	srv, _ := newInstances(t, 3)
	t.Run("OKCreateOrUpdate", func(t *testing.T) {
		is := is.New(t)
		statuses := make([]int, 9)
		all(len(statuses), func(i int) {
			statuses[i] = srv[i%3].Dev.Do(t, "POST", "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"grace","data":{"n":%d}}`, i)).Status
		})
		for _, st := range statuses {
			is.True(st == 200 || st == 201) // every write of the same subscriberId succeeds
		}
	})
	t.Run("OKNoLostChannel", func(t *testing.T) {
		is := is.New(t)
		mustCreateSubscriber(t, srv[0].Dev, `{"subscriberId":"linus"}`)
		const n = 12
		statuses := make([]int, n)
		all(n, func(i int) {
			statuses[i] = srv[i%3].Dev.Do(t, "PUT", "/v1/subscribers/linus/credentials",
				fmt.Sprintf(`{"providerId":"slack","integrationIdentifier":"slack-%d","credentials":{"webhookUrl":"https://hooks.slack.com/%d"}}`, i, i)).Status
		})
		for _, st := range statuses {
			is.Equal(st, 200) // every channel write succeeds
		}
		var s subscriberJSON
		mustDo(t, srv[1].Dev, "GET", "/v1/subscribers/linus", "", 200, &s)
		is.Equal(len(s.Channels), n) // no instance wrote back a subscriber without another's channel
	})
}

// A subscription to a topic that does not exist yet creates it: instances
// subscribing to one new topic at once must make one topic, none failing.
func TestTopics_InstancesSubscribingAtOnce(t *testing.T) {
	is := is.New(t)
	srv, _ := newInstances(t, 3)
	const n = 6
	for i := range n {
		mustCreateSubscriber(t, srv[0].Dev, fmt.Sprintf(`{"subscriberId":"s%d"}`, i))
	}
	for round := range 5 { // the window between a write's read and its insert is short
		key := fmt.Sprintf("news-%d", round)
		statuses := make([]int, n)
		all(n, func(i int) {
			statuses[i] = srv[i%3].Dev.Do(t, "POST", "/v2/topics/"+key+"/subscriptions", fmt.Sprintf(`{"subscriptions":["s%d"]}`, i)).Status
		})
		for _, st := range statuses {
			is.Equal(st, 201) // every subscription succeeds
		}
		var subs struct {
			Data []any `json:"data"`
		}
		srv[round%3].Dev.Do(t, "GET", "/v2/topics/"+key+"/subscriptions?limit=100", "").Decode(t, &subs)
		is.Equal(len(subs.Data), n) // one topic, every subscriber subscribed to it
	}
}

// Deliveries read contexts from a cache; a context written through one
// instance must reach the others' next read within a second.
func TestContexts_ChangesReachOtherInstances(t *testing.T) {
	is := is.New(t)
	srv, stores := newInstances(t, 2)
	a, b := srv[0], stores[1]
	ctx := context.Background()
	env := srv[1].App.Development.ID
	name := func(key string) string { // the name instance B reads, "" for none
		found, err := b.Contexts(ctx, env, []string{key})
		is.NoErr(err) // instance B reads the context
		if len(found) == 0 {
			return ""
		}
		var data struct {
			Name string `json:"name"`
		}
		is.NoErr(json.Unmarshal(found[0].Data, &data)) // its data is an object
		return data.Name
	}
	reaches := func(key, want, what string) {
		t.Helper()
		platformtest.Eventually(t, time.Second, func() bool { return name(key) == want }, what)
	}

	mustDo(t, a.Dev, "POST", "/v2/contexts", `{"type":"tenant","id":"acme","data":{"name":"Acme"}}`, 201, nil)
	is.Equal(name("tenant:acme"), "Acme") // made through A, read and cached by B
	mustDo(t, a.Dev, "PATCH", "/v2/contexts/tenant/acme", `{"data":{"name":"Acme Inc"}}`, 200, nil)
	reaches("tenant:acme", "Acme Inc", "instance B to read the data written through A")
	mustDo(t, a.Dev, "PATCH", "/v1/tenants/acme", `{"identifier":"acme2","name":"Acme Two"}`, 200, nil)
	reaches("tenant:acme", "", "instance B to miss the tenant renamed through A")
	reaches("tenant:acme2", "Acme Two", "instance B to read the tenant under its new identifier")
	mustDo(t, a.Dev, "DELETE", "/v2/contexts/tenant/acme2", "", 204, nil)
	reaches("tenant:acme2", "", "instance B to miss the context deleted through A")
}

package platform_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// Tests of several Herald processes on one PostgreSQL database, each
// simulated by a *sqldb.DB of its own. On SQLite they skip: one process
// owns the database.

func TestBootstrap_InstancesStartingTogether(t *testing.T) {
	sqldbtest.SkipUnlessShared(t)
	for _, tc := range []struct {
		name string
		cfg  platform.BootstrapConfig
	}{
		{"OKGeneratedKeys", platform.BootstrapConfig{}},
		{"OKConfiguredKeys", platform.BootstrapConfig{DevelopmentKey: platformtest.DevKey, ProductionKey: platformtest.ProdKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			url := sqldbtest.NewPostgresURL(t)
			const n = 3
			dbs := make([]*sqldb.DB, n)
			for i := range dbs {
				db, err := sqldb.Open(ctx, url)
				is.NoErr(err) // open an instance
				t.Cleanup(func() { db.Close() })
				dbs[i] = db
			}
			envs := make([][]platform.Environment, n)
			errs := make([]error, n)
			var start, done sync.WaitGroup
			start.Add(1)
			for i, db := range dbs {
				done.Add(1)
				go func() {
					defer done.Done()
					start.Wait()
					envs[i], errs[i] = platform.Bootstrap(ctx, db, tc.cfg, io.Discard)
				}()
			}
			start.Done()
			done.Wait()
			for i := range n {
				is.NoErr(errs[i])                                              // every instance starts
				is.Equal(envs[i][0].ID, envs[0][0].ID)                         // one Development environment for all
				is.Equal(envs[i][1].ID, envs[0][1].ID)                         // one Production environment for all
				is.Equal(envs[i][0].OrganizationID, envs[0][0].OrganizationID) // one organization for all
			}
			count := func(q string) (c int) {
				is.NoErr(dbs[0].QueryRowContext(ctx, q).Scan(&c)) // count rows
				return c
			}
			is.Equal(count(`SELECT count(*) FROM organizations`), 1)                     // one organization
			is.Equal(count(`SELECT count(*) FROM users`), 1)                             // one system user
			is.Equal(count(`SELECT count(*) FROM environments`), 2)                      // one pair of environments
			is.Equal(count(`SELECT count(*) FROM api_keys WHERE revoked_at IS NULL`), 2) // one key each
		})
	}
}

func TestKeys_RevocationReachesOtherInstances(t *testing.T) {
	is := is.New(t)
	srv := platformtest.NewInstances(t, 2, nil)
	a, b := srv[0], srv[1]
	ctx := context.Background()
	for range 2 { // the second revocation bumps a count the first created
		key, k, err := platform.CreateAPIKey(ctx, a.App.DB, platform.Development, a.App.Secret, time.Now())
		is.NoErr(err) // create a key through instance A
		c := b.Dev.WithKey(key)
		is.Equal(c.Do(t, "GET", "/v1/environments", "").Status, 200) // instance B accepts the new key
		_, err = platform.RevokeAPIKey(ctx, a.App.DB, k.ID, time.Now())
		is.NoErr(err) // revoke it through instance A
		platformtest.Eventually(t, time.Second, func() bool {
			return c.Do(t, "GET", "/v1/environments", "").Status == 401
		}, "instance B to refuse the key revoked through A")
	}
	is.Equal(b.Dev.Do(t, "GET", "/v1/environments", "").Status, 200) // the configured key still works
}

// noteInstances serves POST /v1/notes from n instances on one fresh
// PostgreSQL database, each a DB of its own (its own writer and instance
// ID), beating as a running Herald does. The handler counts its runs; the
// first waits on release when it is set.
type noteInstances struct {
	url     string
	dbs     []*sqldb.DB
	clients []platformtest.Client
	runs    atomic.Int32
	release chan struct{}
}

func newNoteInstances(t *testing.T, n int) *noteInstances {
	t.Helper()
	sqldbtest.SkipUnlessShared(t)
	url := sqldbtest.NewPostgresURL(t)
	ni := &noteInstances{url: url}
	for i := range n {
		ni.start(t, i == 0)
	}
	return ni
}

// start opens one more instance; the first bootstraps the keys.
func (ni *noteInstances) start(t *testing.T, bootstrap bool) {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, ni.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Beat(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if bootstrap {
		if _, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: platformtest.DevKey,
			ProductionKey: platformtest.ProdKey, Secret: []byte(platformtest.Secret)}, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/notes", platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if ni.runs.Add(1) == 1 && ni.release != nil {
			<-ni.release
		}
		return platform.JSON(w, http.StatusCreated, map[string]string{"title": "once"})
	}))
	hs := httptest.NewServer(platform.NewHandler(slog.New(slog.DiscardHandler), db, mux,
		platform.ServerConfig{Secret: []byte(platformtest.Secret), Limits: platform.RateLimits{Write: -1}}))
	t.Cleanup(hs.Close)
	ni.dbs = append(ni.dbs, db)
	ni.clients = append(ni.clients, platformtest.NewClient(hs.URL, platformtest.DevKey))
}

func TestIdempotency_OneKeyThroughThreeInstancesRunsOnce(t *testing.T) {
	is := is.New(t)
	ni := newNoteInstances(t, 3)
	ni.release = make(chan struct{})
	statuses := make(chan int, len(ni.clients))
	var wg sync.WaitGroup
	for _, c := range ni.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- c.Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "same").Status
		}()
	}
	for range len(ni.clients) - 1 {
		select {
		case s := <-statuses:
			is.Equal(s, 409) // the others see the key running on another instance
		case <-time.After(10 * time.Second):
			t.Fatal("the losing requests did not answer while the winner ran")
		}
	}
	close(ni.release)
	wg.Wait()
	is.Equal(<-statuses, 201)          // the winner completes
	is.Equal(ni.runs.Load(), int32(1)) // exactly one execution
	for _, c := range ni.clients {
		res := c.Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "same")
		is.Equal(res.Header.Get("Idempotency-Replay"), "true") // every instance replays it
	}
}

func TestIdempotency_StartingInstanceLeavesALiveOnesKey(t *testing.T) {
	is := is.New(t)
	ni := newNoteInstances(t, 1)
	ni.release = make(chan struct{})
	first := make(chan int, 1)
	go func() { first <- ni.clients[0].Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "k").Status }()
	platformtest.Eventually(t, 5*time.Second, func() bool { return ni.runs.Load() == 1 }, "the first request to run")

	// A second instance starts while the first runs the request: on
	// SQLite a key claimed before a start is a dead process's.
	ni.start(t, false)
	is.Equal(ni.clients[1].Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "k").Status, 409) // still the live instance's
	is.Equal(ni.runs.Load(), int32(1))                                                           // not run twice

	// The first instance dies (its heartbeat goes, as after SIGKILL and
	// InstanceTTL): its key is free to the survivor.
	_, err := ni.dbs[1].ExecContext(context.Background(), `DELETE FROM instances WHERE id = ?`, ni.dbs[0].Instance())
	is.NoErr(err)
	is.Equal(ni.clients[1].Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "k").Status, 201) // runs on the survivor
	is.Equal(ni.runs.Load(), int32(2))
	close(ni.release)
	is.Equal(<-first, 201) // the first, alive after all, answers; the survivor's answer is the one kept
	res := ni.clients[0].Do(t, "POST", "/v1/notes", `{}`, "Idempotency-Key", "k")
	is.Equal(res.Header.Get("Idempotency-Replay"), "true") // replayed from now on
	is.Equal(ni.runs.Load(), int32(2))
}

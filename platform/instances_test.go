package platform_test

import (
	"context"
	"io"
	"sync"
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

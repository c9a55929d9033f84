package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

func TestWire_EnvironmentsAreIsolated(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	res := srv.Prod.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"prod-only","email":"p@example.com"}`)
	is.Equal(res.Status, 201)                                                      // created with the Production key
	is.Equal(srv.Prod.Do(t, "GET", "/v1/subscribers/prod-only", "").Status, 200)   // Production reads it
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/prod-only", "").Status, 404)    // Development cannot
	is.Equal(srv.Dev.Do(t, "DELETE", "/v1/subscribers/prod-only", "").Status, 404) // nor delete it
	is.Equal(srv.Prod.Do(t, "GET", "/v1/subscribers/prod-only", "").Status, 200)   // still there
}

func TestWire_SubscriberCredentialsLinkIntegration(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	var integration struct {
		ID string `json:"_id"`
	}
	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","active":true,"identifier":"team-slack"}`)
	is.Equal(res.Status, 201) // chat integration created
	res.Decode(t, &integration)

	is.Equal(srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada"}`).Status, 201) // subscriber created
	res = srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example.com/x"}}`)
	is.Equal(res.Status, 200) // credentials set
	var sub struct {
		Channels []struct {
			ProviderID    string `json:"providerId"`
			IntegrationID string `json:"_integrationId"`
		} `json:"channels"`
	}
	res.Decode(t, &sub)
	is.Equal(len(sub.Channels), 1)                          // one channel entry
	is.Equal(sub.Channels[0].IntegrationID, integration.ID) // linked to the environment's slack integration
}

func TestWire_SeedsServiceIntegration(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	for _, c := range []platformtest.Client{srv.Dev, srv.Prod} {
		var active []struct {
			ProviderID string `json:"providerId"`
			Channel    string `json:"channel"`
			Active     bool   `json:"active"`
		}
		res := c.Do(t, "GET", "/v1/integrations/active", "")
		is.Equal(res.Status, 200) // active integrations listed
		res.Decode(t, &active)
		is.Equal(len(active), 1)                  // exactly the seeded one
		is.Equal(active[0].ProviderID, "service") // the in-app provider
		is.Equal(active[0].Channel, "in_app")     // on the in_app channel
	}
}

// A subscriber search reads its page in one read transaction, and resolving
// a channel's _integrationId reads integrations through another connection.
// Done inside the transaction, concurrent searches could hold every read
// connection while each waited for one more, and on the in-memory database
// a writer committing meanwhile blocked that second read until the busy
// timeout: a 500 after 10 s.
func TestWire_SearchesResolveChannelsUnderConcurrentWrites(t *testing.T) {
	srv := apptest.NewServer(t)
	for i := range 20 {
		body := fmt.Sprintf(`{"subscriberId":"s%02d","channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example.com/%d"}}]}`, i, i)
		if res := srv.Dev.Do(t, "POST", "/v1/subscribers", body); res.Status != 201 {
			t.Fatalf("create subscriber: %d %s", res.Status, res.Body)
		}
	}
	// No slack integration exists, so every search resolves every channel.
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, error) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "ApiKey "+platformtest.DevKey)
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return res.StatusCode, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for range 20 {
				status, err := get("/v2/subscribers?limit=10")
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d", status)
				}
				if err != nil {
					errs <- fmt.Errorf("search (client %d): %w", g, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			res := srv.Dev.Do(t, "PATCH", "/v2/subscribers/s00", fmt.Sprintf(`{"firstName":"Ada %d"}`, i))
			if res.Status != http.StatusOK {
				errs <- fmt.Errorf("update: %d %s", res.Status, res.Body)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A broadcast that a process left after its first batch goes on when Herald
// starts again on the same database, with the subscribers that batch had
// not reached.
func TestWire_ResumesBroadcastAtStart(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"News","workflowId":"news","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"News {{payload.n}}"}}]}`)
	for _, id := range []string{"a", "b", "c"} {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+id+`"}`)
	}
	// What the dead process committed: the first batch ("a") and, in the
	// same transaction, the transactionId claim and the broadcast's row.
	apptest.Trigger(t, srv, `{"name":"news","to":"a","payload":{"n":7},"transactionId":"cut"}`)
	ts := sqldb.FormatTime(srv.App.Clock.Now())
	_, err := srv.App.DB.ExecContext(context.Background(), `INSERT INTO activity_broadcasts (environment_id, transaction_id, organization_id,
		request, actor, last_subscriber_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		srv.App.Development.ID, "cut", srv.App.Development.OrganizationID,
		`{"name":"news","payload":{"n":7},"transactionId":"cut"}`, `{"type":"none","data":null}`, "a", ts, ts)
	is.NoErr(err) // the unfinished broadcast recorded

	srv.StartAgain(t)

	var feeds map[string][]string
	platformtest.Eventually(t, 10*time.Second, func() bool {
		feeds = map[string][]string{}
		for _, id := range []string{"a", "b", "c"} {
			var feed struct {
				Data []struct {
					Content string `json:"content"`
				} `json:"data"`
			}
			srv.Dev.Do(t, "GET", "/v1/subscribers/"+id+"/notifications/feed", "").Decode(t, &feed)
			for _, m := range feed.Data {
				feeds[id] = append(feeds[id], m.Content)
			}
		}
		return len(feeds["b"]) > 0 && len(feeds["c"]) > 0
	}, "the broadcast to reach b and c")
	is.Equal(feeds, map[string][]string{"a": {"News 7"}, "b": {"News 7"}, "c": {"News 7"}}) // each subscriber once
	var left int
	is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM activity_broadcasts`).Scan(&left)) // counted
	is.Equal(left, 0)                                                                                                  // finished
}

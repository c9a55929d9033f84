package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// dataset is a database file seeded for the read scenarios, through the
// same stores the server uses, before the server starts on it.
type dataset struct {
	path        string
	subscribers int
	messages    int
	inboxes     int // the first inboxes subscribers hold the messages
}

// perInbox is how many messages each inbox holds on average in every
// dataset, so a feed page costs the same at every size and scenario 5
// measures the table's growth, not a fuller page.
const perInbox = 10

// subscriberBody is subscriber i of every dataset. lastName groups them by
// a thousand, so a name filter can page through 1,000 results.
func subscriberBody(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(
		`{"subscriberId":"s%07d","email":"user%07d@bench.example","firstName":"Given%d","lastName":"Family%04d","data":{"plan":"pro"}}`,
		i, i, i, i/1000))
}

// seed creates or grows a dataset to the given sizes.
func seed(ctx context.Context, path string, from, nSubscribers, nMessages int) (*dataset, error) {
	db, err := platform.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := platform.Migrate(db, migrations.FS); err != nil {
		return nil, err
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: benchKey}, io.Discard)
	if err != nil {
		return nil, err
	}
	tenant := envs[0].Tenant()
	subs := subscribers.NewStore(db, nil, nil)
	var docs []json.RawMessage
	const batch = 1000
	for start := from; start < nSubscribers; start += batch {
		bodies := make([]json.RawMessage, 0, batch)
		for i := start; i < min(start+batch, nSubscribers); i++ {
			bodies = append(bodies, subscriberBody(i))
		}
		created, err := subs.UpsertSubscribersJSON(ctx, tenant, bodies, nil)
		if err != nil {
			return nil, fmt.Errorf("seed subscribers: %w", err)
		}
		if nMessages > 0 {
			docs = append(docs, created...)
		}
	}
	inboxes := min(max(nMessages/perInbox, 1), len(docs))
	if nMessages > 0 {
		if err := seedMessages(ctx, db, tenant, docs[:inboxes], nMessages); err != nil {
			return nil, err
		}
	}
	return &dataset{path: path, subscribers: nSubscribers, messages: nMessages, inboxes: inboxes}, nil
}

// seedMessages delivers n in-app messages to random subscribers of subs through
// messaging's own DeliverJSON, so the rows are exactly what a real delivery
// stores.
func seedMessages(ctx context.Context, db *platform.DB, tenant platform.Tenant, subs []json.RawMessage, n int) error {
	store := messaging.NewStore(db, messaging.Sources{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for i := w; i < n; i += 4 {
				sub := subs[rng.IntN(len(subs))]
				if _, err := store.DeliverJSON(ctx, delivery(tenant, sub, i)); err != nil {
					errs <- fmt.Errorf("seed message %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func delivery(t platform.Tenant, subscriber json.RawMessage, i int) json.RawMessage {
	var sub struct {
		ID string `json:"_id"`
	}
	json.Unmarshal(subscriber, &sub)
	doc := map[string]any{
		"jobId": platform.NewID(), "notificationId": platform.NewID(),
		"environmentId": t.EnvironmentID, "organizationId": t.OrganizationID,
		"transactionId": fmt.Sprintf("seed-%d", i), "channel": "in_app",
		"stepId": "inbox", "stepDatabaseId": platform.NewID(),
		"workflowDatabaseId": platform.NewID(), "workflowId": "bench-inbox",
		"subscriber": subscriber,
		"controls":   map[string]any{"subject": "Order {{payload.n}}", "body": "Your order {{payload.n}} has shipped."},
		"variables":  map[string]any{"subscriber": subscriber, "payload": map[string]any{"n": i}},
		"payload":    map[string]any{"n": i, "kind": []string{"a", "b", "c"}[i%3]},
		"overrides":  map[string]any{}, "tags": []string{"bench"},
		"actor": map[string]any{"type": "none", "data": nil},
	}
	b, _ := json.Marshal(doc)
	return b
}

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
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
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		return nil, err
	}
	envs, err := platform.Bootstrap(ctx, db, platform.BootstrapConfig{DevelopmentKey: benchKey}, io.Discard)
	if err != nil {
		return nil, err
	}
	tenant := envs[0].Tenant()
	subs := subscribers.NewStore(db, nil, nil)
	var docs []subscribers.Subscriber
	const batch = 1000
	for start := from; start < nSubscribers; start += batch {
		bodies := make([]json.RawMessage, 0, batch)
		for i := start; i < min(start+batch, nSubscribers); i++ {
			bodies = append(bodies, subscriberBody(i))
		}
		created, err := subs.UpsertSubscribers(ctx, tenant, bodies, nil)
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
// messaging's own Deliver, so the rows are exactly what a real delivery
// stores.
func seedMessages(ctx context.Context, db *sqldb.DB, tenant platform.Tenant, subs []subscribers.Subscriber, n int) error {
	engine := messaging.NewDeliverer(messaging.NewStore(db, messaging.Sources{}), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for i := w; i < n; i += 4 {
				if err := deliver(ctx, db, engine, delivery(tenant, subs[rng.IntN(len(subs))], i)); err != nil {
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

// deliver delivers d and stores its message, as the worker does.
func deliver(ctx context.Context, db *sqldb.DB, engine *messaging.Deliverer, d *messaging.Delivery) error {
	_, write, err := engine.Deliver(ctx, d)
	if err != nil || write == nil {
		return err
	}
	return db.Tx(ctx, func(tx *sql.Tx) error { return write(ctx, tx) })
}

func delivery(t platform.Tenant, sub subscribers.Subscriber, i int) *messaging.Delivery {
	return &messaging.Delivery{
		JobID: sqldb.NewID(), NotificationID: sqldb.NewID(),
		EnvironmentID: t.EnvironmentID, OrganizationID: t.OrganizationID,
		TransactionID: fmt.Sprintf("seed-%d", i), Channel: "in_app",
		StepID: "inbox", StepDatabaseID: sqldb.NewID(),
		WorkflowDatabaseID: sqldb.NewID(), WorkflowID: "bench-inbox",
		Subscriber: sub,
		Controls:   map[string]any{"subject": "Order {{payload.n}}", "body": "Your order {{payload.n}} has shipped."},
		Payload:    fmt.Appendf(nil, `{"n":%d,"kind":%q}`, i, []string{"a", "b", "c"}[i%3]),
		Overrides:  json.RawMessage(`{}`), Tags: []string{"bench"},
		Actor: json.RawMessage(`{"type":"none","data":null}`),
	}
}

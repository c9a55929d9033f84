package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// deps is what the domains are built from, and what start starts them with.
type deps struct {
	db           *sqldb.DB
	logger       *slog.Logger
	secret       []byte                       // encrypts integration credentials
	now          func() time.Time             // injected so tests can move time
	environments []platform.Environment       // what start seeds
	workers      int                          // delivery workers; 0 means the default
	outbound     *outbound.Guard              // where sends and checks may connect; nil refuses private addresses
	stoppers     *[]func(ctx context.Context) // where start registers how to stop background work; nil in tests that do not stop it
	retention    retention                    // how long records are kept; zero keeps them forever
	sweeper      **activity.Sweeper           // where start leaves the retention sweeper, when not nil
	metrics      *platform.Metrics            // what the domains report to; nil in tests that read none
	inbox        *platform.SubscriberAuth     // the inbox's subscriber tokens; nil serves no inbox
	maxSnooze    time.Duration                // the inbox's longest snooze; 0 means messaging's default
	closing      <-chan struct{}              // closed when the server stops: the inbox's sockets close then
}

// The domains call each other only through interfaces they declare; these
// lines prove at compile time that the concrete stores satisfy them.
var (
	_ subscribers.IntegrationResolver = (*integrations.Store)(nil)
	_ workflows.IntegrationChecker    = (*integrations.Store)(nil)
	_ messaging.SubscriberSource      = (*subscribers.Store)(nil)
	_ messaging.WorkflowSource        = (*workflows.Store)(nil)
	_ messaging.IntegrationSource     = (*integrations.Store)(nil)
	_ messaging.TokenRemover          = (*subscribers.Store)(nil)
	_ activity.Workflows              = (*workflows.Store)(nil)
	_ activity.Subscribers            = (*subscribers.Store)(nil)
	_ activity.Messenger              = (*messaging.Deliverer)(nil)
	_ activity.Unsnoozer              = (*messaging.Store)(nil)
	_ messaging.InboxSubscribers      = (*subscribers.Store)(nil)
	_ messaging.InboxWorkflows        = (*workflows.Store)(nil)
	_ messaging.SnoozeTimer           = (*activity.Store)(nil)
	_ messaging.InboxPreferenceStore  = (*subscribers.Store)(nil)
	_ platform.SubscriberLookup       = (*subscribers.Store)(nil)
	_ activity.Preferences            = (*subscribers.Store)(nil)
	_ activity.Topics                 = (*subscribers.Store)(nil)
	_ subscribers.WorkflowSource      = (*workflows.Store)(nil)
)

// wired is what wire builds: each domain's store, connected to the others,
// and the delivery worker, not yet started (start starts it).
type wired struct {
	integrations *integrations.Store
	workflows    *workflows.Store
	subscribers  *subscribers.Store
	messages     *messaging.Store
	activity     *activity.Store
	worker       *activity.Worker
}

// openAPI lists each package's part of the API description, the
// platform's (the document's head) first; run serves them merged at
// /openapi.json. A package with routes adds its openapi.yaml here.
var openAPI = []platform.Fragment{
	{Name: "platform/openapi.yaml", YAML: platform.OpenAPI},
	{Name: "activity/openapi.yaml", YAML: activity.OpenAPI},
	{Name: "integrations/openapi.yaml", YAML: integrations.OpenAPI},
	{Name: "messaging/openapi.yaml", YAML: messaging.OpenAPI},
	{Name: "subscribers/openapi.yaml", YAML: subscribers.OpenAPI},
	{Name: "workflows/openapi.yaml", YAML: workflows.OpenAPI},
}

// wire builds every domain's store, connects the domains through the small
// interfaces each declares, and registers every route on mux. It starts
// nothing: start, which run and the end-to-end tests call, does.
func wire(mux *http.ServeMux, d deps) (*wired, error) {
	integrationStore, err := integrations.NewStore(d.db, d.secret)
	if err != nil {
		return nil, err
	}
	integrationStore.WithOutbound(d.outbound)
	workflowStore := workflows.NewStore(d.db)
	subscriberStore := subscribers.NewStore(d.db, integrationStore, d.now).WithWorkflows(workflowStore)
	messageStore := messaging.NewStore(d.db, messaging.Sources{
		Subscribers:  subscriberStore,
		Workflows:    workflowStore,
		Integrations: integrationStore,
		Tokens:       subscriberStore,
	}).WithClock(d.now)
	activityStore := activity.NewStore(d.db, d.now)
	activityStore.Observe(d.metrics)
	worker := activity.NewWorker(activityStore, subscriberStore, messaging.NewDeliverer(messageStore, d.outbound).Observe(d.logger, d.metrics),
		activity.WorkerConfig{Size: d.workers, Logger: d.logger, Unsnoozer: messageStore})
	if d.inbox != nil {
		d.inbox.UseSubscribers(subscriberStore)
		messageStore.UseInbox(messaging.InboxConfig{Auth: d.inbox, Subscribers: subscriberStore,
			Integrations: integrationStore, Workflows: workflowStore, Preferences: subscriberStore, Snoozes: activityStore,
			Live: messaging.NewLiveBus(d.db, d.logger), MaxSnooze: d.maxSnooze, Closing: d.closing, Metrics: d.metrics})
	}
	integrations.AddRoutes(mux, integrationStore)
	subscribers.AddRoutes(mux, subscriberStore)
	workflows.AddRoutes(mux, workflowStore, integrationStore)
	messaging.AddRoutes(mux, messageStore)
	activity.AddRoutes(mux, activityStore, worker, workflowStore, subscriberStore)
	return &wired{integrations: integrationStore, workflows: workflowStore, subscribers: subscriberStore,
		messages: messageStore, activity: activityStore, worker: worker}, nil
}

// newSweeper builds the retention sweeper: activity deletes its own
// records and messaging its own, each environment apart, since every
// index they read starts with the environment.
func newSweeper(d deps, activityStore *activity.Store, messageStore *messaging.Store) *activity.Sweeper {
	sw := &activity.Sweeper{DB: d.db, Now: d.now, Every: d.retention.every, Logger: d.logger}
	for _, env := range d.environments {
		sw.Tasks = append(sw.Tasks,
			activity.SweepTask{Name: "notifications", Keep: d.retention.activity,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return activityStore.SweepFinished(ctx, env.ID, before, cursor, limit)
				}},
			activity.SweepTask{Name: "in-app messages", Keep: d.retention.inApp,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, true, before, cursor, limit)
				}},
			activity.SweepTask{Name: "messages", Keep: d.retention.messages,
				Sweep: func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
					return messageStore.SweepMessages(ctx, env.ID, false, before, cursor, limit)
				}},
		)
	}
	return sw
}

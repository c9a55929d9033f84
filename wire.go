package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// deps is what the domains are built from.
type deps struct {
	db           *platform.DB
	logger       *slog.Logger
	secret       []byte           // encrypts integration credentials
	now          func() time.Time // injected so tests can move time
	environments []platform.Environment
	workers      int                          // delivery workers; 0 means the default
	stoppers     *[]func(ctx context.Context) // where background work registers its stop; nil in tests that do not stop it
	inbox        *platform.SubscriberAuth     // the inbox's subscriber tokens; nil serves no inbox
	maxSnooze    time.Duration                // the inbox's longest snooze; 0 means messaging's default
}

// The domains call each other only through interfaces they declare; these
// lines prove at compile time that the concrete stores satisfy them.
var (
	_ subscribers.IntegrationResolver = (*integrations.Store)(nil)
	_ workflows.IntegrationChecker    = (*integrations.Store)(nil)
	_ workflows.TemplateParser        = (*messaging.Store)(nil)
	_ workflows.CronParser            = (*activity.Store)(nil)
	_ messaging.SubscriberSource      = (*subscribers.Store)(nil)
	_ messaging.WorkflowSource        = (*workflows.Store)(nil)
	_ messaging.IntegrationSource     = (*integrations.Store)(nil)
	_ activity.Workflows              = (*workflows.Store)(nil)
	_ activity.Subscribers            = (*subscribers.Store)(nil)
	_ activity.Messenger              = (*messaging.Store)(nil)
	_ activity.TxMessenger            = (*messaging.Store)(nil)
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

// environmentSeeder creates what a domain needs in every environment from the
// first start on: the in-app integration, the default notification group.
type environmentSeeder interface {
	SeedEnvironment(ctx context.Context, env platform.Environment) error
}

// wire builds every domain's store, connects the domains through the small
// interfaces each declares, seeds each environment, and registers every
// route on mux. run and the end-to-end tests both call it, so the tests
// exercise the real wiring.
func wire(ctx context.Context, mux *http.ServeMux, d deps) error {
	integrationStore, err := integrations.NewStore(d.db, d.secret)
	if err != nil {
		return err
	}
	workflowStore := workflows.NewStore(d.db)
	subscriberStore := subscribers.NewStore(d.db, integrationStore, d.now).WithWorkflows(workflowStore)
	messageStore := messaging.NewStore(d.db, messaging.Sources{
		Subscribers:  subscriberStore,
		Workflows:    workflowStore,
		Integrations: integrationStore,
	}).WithClock(d.now)
	activityStore := activity.NewStore(d.db, d.now)

	for _, s := range []environmentSeeder{integrationStore, workflowStore} {
		for _, env := range d.environments {
			if err := s.SeedEnvironment(ctx, env); err != nil {
				return err
			}
		}
	}

	if d.inbox != nil {
		d.inbox.UseSubscribers(subscriberStore)
		messageStore.UseInbox(messaging.InboxConfig{Auth: d.inbox, Subscribers: subscriberStore,
			Integrations: integrationStore, Workflows: workflowStore, Preferences: subscriberStore, Snoozes: activityStore,
			Live: messaging.NewMemoryBus(), MaxSnooze: d.maxSnooze, Closing: ctx.Done()})
	}

	integrations.AddRoutes(mux, integrationStore)
	subscribers.AddRoutes(mux, subscriberStore)
	workflows.AddRoutes(mux, workflowStore, integrationStore, messageStore, activityStore)
	messaging.AddRoutes(mux, messageStore)

	// Triggers queue jobs; the worker runs them until ctx is done, and run
	// waits for it through the stopper it registers.
	worker := activity.NewWorker(activityStore, subscriberStore, messageStore,
		activity.WorkerConfig{Size: d.workers, Logger: d.logger})
	activity.AddRoutes(mux, activityStore, worker, workflowStore, subscriberStore)
	worker.Start(ctx)
	// A broadcast that an earlier process left half sent goes on where it
	// stopped. ResumeBroadcasts reads which before the server takes
	// requests, so none begun by this process is taken for one of those.
	resumed := activity.ResumeBroadcasts(ctx, activityStore, workflowStore, subscriberStore, d.logger)
	if d.stoppers != nil {
		*d.stoppers = append(*d.stoppers, worker.Stop, resumed)
	}
	return nil
}

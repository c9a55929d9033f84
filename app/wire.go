package app

import (
	"context"
	"net/http"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/console"
	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// The domains call each other only through interfaces they declare; these
// lines prove at compile time that the concrete stores satisfy them.
var (
	_ subscribers.IntegrationResolver = (*integrations.Store)(nil)
	_ workflows.IntegrationChecker    = (*integrations.Store)(nil)
	_ messaging.SubscriberSource      = (*subscribers.Store)(nil)
	_ messaging.WorkflowSource        = (*workflows.Store)(nil)
	_ messaging.ContentSource         = (*workflows.Store)(nil)
	_ messaging.ContextSource         = (*subscribers.Store)(nil)
	_ activity.Contexts               = (*subscribers.Store)(nil)
	_ messaging.IntegrationSource     = (*integrations.Store)(nil)
	_ messaging.TokenRemover          = (*subscribers.Store)(nil)
	_ activity.Workflows              = (*workflows.Store)(nil)
	_ activity.Subscribers            = (*subscribers.Store)(nil)
	_ activity.Messenger              = (*messaging.Deliverer)(nil)
	_ activity.Unsnoozer              = (*messaging.Store)(nil)
	_ messaging.InboxSubscribers      = (*subscribers.Store)(nil)
	_ messaging.InboxWorkflows        = (*workflows.Store)(nil)
	_ messaging.InboxIntegrations     = (*integrations.Store)(nil)
	_ messaging.SnoozeTimer           = (*activity.Store)(nil)
	_ subscribers.Deletions           = (*activity.Store)(nil)
	_ messaging.InboxPreferenceStore  = (*subscribers.Store)(nil)
	_ platform.SubscriberLookup       = (*subscribers.Store)(nil)
	_ platform.InboxHMACs             = (*integrations.Store)(nil)
	_ activity.Preferences            = (*subscribers.Store)(nil)
	_ activity.Topics                 = (*subscribers.Store)(nil)
	_ subscribers.WorkflowSource      = (*workflows.Store)(nil)
	_ messaging.EventSink             = (*webhooks.Store)(nil)
	_ workflows.EventSink             = (*webhooks.Store)(nil)
	_ subscribers.EventSink           = (*webhooks.Store)(nil)
	_ messaging.ReceiptDetails        = (*activity.Store)(nil)
	_ integrations.ReceiptSink        = (*messaging.Store)(nil)
	_ console.Activity                = (*activity.Views)(nil)
	_ console.Messages                = (*messaging.Store)(nil)
	_ console.Subscribers             = (*subscribers.Store)(nil)
	_ console.Topics                  = (*subscribers.Store)(nil)
	_ console.Workflows               = (*workflows.Store)(nil)
	_ console.Content                 = (*workflows.Store)(nil)
	_ console.Integrations            = (*integrations.Store)(nil)
	_ console.Tests                   = (*activity.Tester)(nil)
	_ console.Webhooks                = (*webhooks.Store)(nil)
	_ console.Contexts                = (*subscribers.Store)(nil)
	_ platform.EnvironmentSeeder      = (*integrations.Store)(nil)
	_ platform.EnvironmentSeeder      = (*workflows.Store)(nil)
	_ platform.EnvironmentPurger      = (*activity.Store)(nil)
	_ platform.EnvironmentPurger      = (*webhooks.Store)(nil)
	_ platform.EnvironmentPurger      = (*messaging.Store)(nil)
	_ platform.EnvironmentPurger      = (*subscribers.Store)(nil)
	_ platform.EnvironmentPurger      = (*workflows.Store)(nil)
	_ platform.EnvironmentPurger      = (*integrations.Store)(nil)
)

// OpenAPI lists each package's part of the API description, the
// platform's (the document's head) first; the server serves them merged
// at /openapi.json. A package with routes adds its openapi.yaml here.
var OpenAPI = []platform.Fragment{
	{Name: "platform/openapi.yaml", YAML: platform.OpenAPI},
	{Name: "activity/openapi.yaml", YAML: activity.OpenAPI},
	{Name: "activity/webhooks/openapi.yaml", YAML: webhooks.OpenAPI},
	{Name: "integrations/openapi.yaml", YAML: integrations.OpenAPI},
	{Name: "messaging/openapi.yaml", YAML: messaging.OpenAPI},
	{Name: "subscribers/openapi.yaml", YAML: subscribers.OpenAPI},
	{Name: "workflows/openapi.yaml", YAML: workflows.OpenAPI},
}

// wire builds every domain's store, connects the domains through the small
// interfaces each declares, and registers every route on mux. It starts
// nothing: Start does. The inbox's sockets close when closing is closed.
func wire(mux *http.ServeMux, d Deps, closing <-chan struct{}) (*App, error) {
	integrationStore, err := integrations.NewStore(d.DB, d.Secret)
	if err != nil {
		return nil, err
	}
	integrationStore.WithOutbound(d.Outbound)
	workflowStore := workflows.NewStore(d.DB).WithIntegrations(integrationStore)
	subscriberStore := subscribers.NewStore(d.DB, integrationStore, d.Now).WithWorkflows(workflowStore).WithSecret(d.Secret)
	orgs := platform.NewOrganizations(d.DB) // notifications and messages leave theirs out
	messageStore := messaging.NewStore(d.DB, messaging.Sources{
		Subscribers:  subscriberStore,
		Workflows:    workflowStore,
		Integrations: integrationStore,
		Tokens:       subscriberStore,
		Content:      workflowStore,
		Contexts:     subscriberStore,
	}).WithClock(d.Now).WithSecret(d.Secret).UseOrganizations(orgs)
	if d.PageCache != 0 {
		messageStore.KeepPages(d.PageCache)
	}
	activityStore := activity.NewStore(d.DB, d.Now).UseOutbound(d.Outbound).UseOrganizations(orgs)
	activityStore.Observe(d.Metrics)
	hookStore := webhooks.NewStore(d.DB, d.Secret, d.Now).Observe(d.Metrics, d.Logger)
	messageStore.UseEvents(hookStore).UseReceipts(activityStore)
	workflowStore.UseEvents(hookStore)
	subscriberStore.UseEvents(hookStore).UseDeletions(activityStore)
	integrationStore.UseReceipts(messageStore).UsePublicURL(d.PublicURL)
	d.Metrics.MustRegister(newStorageGauge(d.DB, d.Logger))
	worker := activity.NewWorker(activityStore, subscriberStore, messaging.NewDeliverer(messageStore, d.Outbound).Observe(d.Logger, d.Metrics),
		activity.WorkerConfig{Size: d.Workers, Logger: d.Logger, Unsnoozer: messageStore,
			DefaultTimezone: d.DefaultTimezone})
	if d.Inbox != nil {
		d.Inbox.UseSubscribers(subscriberStore)
		d.Inbox.UseIntegrations(integrationStore)
		messageStore.UseInbox(messaging.InboxConfig{Auth: d.Inbox, Subscribers: subscriberStore,
			Integrations: integrationStore, Workflows: workflowStore, Preferences: subscriberStore, WebPush: subscriberStore, Snoozes: activityStore,
			Live: messaging.NewLiveBus(d.DB, d.Logger), MaxSnooze: d.MaxSnooze, Closing: closing, Metrics: d.Metrics,
			SocketsPerToken: d.SocketsPerToken, Presence: subscriberStore, Logger: d.Logger})
	}
	integrations.AddRoutes(mux, integrationStore)
	subscribers.AddRoutes(mux, subscriberStore)
	workflows.AddRoutes(mux, workflowStore, integrationStore)
	messaging.AddRoutes(mux, messageStore)
	activity.AddRoutes(mux, activityStore, worker, workflowStore, subscriberStore)
	webhooks.AddRoutes(mux, hookStore)
	// A deleted environment is emptied from the records that name others
	// (notifications name workflows and subscribers) to those they name;
	// the values they stored go last.
	platform.AddEnvironmentRoutes(mux, platform.EnvironmentDomains{DB: d.DB, Secret: d.Secret, Now: d.Now,
		Seeders: []platform.EnvironmentSeeder{integrationStore, workflowStore},
		Purgers: []platform.EnvironmentPurger{activityStore, hookStore, messageStore, subscriberStore, workflowStore,
			integrationStore, storedValues{d.DB}}, Tags: workflowStore})
	a := &App{Integrations: integrationStore, Workflows: workflowStore, Subscribers: subscriberStore,
		Messages: messageStore, Activity: activityStore, Worker: worker, Webhooks: hookStore,
		Dispatcher: webhooks.NewDispatcher(hookStore, webhooks.DispatcherConfig{Guard: d.Outbound, Logger: d.Logger,
			PerEndpoint: d.WebhookLane})}
	if d.Console != nil {
		a.Console = console.New(console.Deps{Auth: d.Console, DB: d.DB, Secret: d.Secret, Now: d.Now,
			Activity: activity.NewViews(activityStore, subscriberStore), Messages: messageStore,
			Subscribers: subscriberStore, Topics: subscriberStore, Workflows: workflowStore, Content: workflowStore,
			Integrations: integrationStore, Webhooks: hookStore, Contexts: subscriberStore, Tests: activity.NewTester(activityStore, worker, workflowStore, subscriberStore)})
	}
	return a, nil
}

// storedValues empties a deleted environment's stored values, which the
// database layer keeps for activity and messaging alike.
type storedValues struct{ db *sqldb.DB }

func (storedValues) EnvironmentHoldings(context.Context, string) (map[string]int64, error) {
	return nil, nil // what names them is counted by its owner
}

func (v storedValues) PurgeEnvironment(ctx context.Context, environmentID string) error {
	return v.db.DeleteValues(ctx, environmentID)
}

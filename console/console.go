// Package console is Herald's web console, served under /console/ by the
// same binary: a team signs in (the platform keeps its accounts and
// sessions) and sees, per environment, what happened to each trigger, its
// subscribers, topics, workflows, integrations and API keys. Pages are
// server-rendered html/template with a small vendored script layer (htmx),
// all embedded, so it works offline and needs no build step. It owns no
// table: every page calls the domains' own functions through the narrow
// interfaces below, which app wires to the concrete stores
// (docs/console.md).
package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// Activity reads what became of each trigger: activity's Views.
type Activity interface {
	Notifications(ctx context.Context, envID string, query url.Values) (activity.NotificationPage, error)
	Notification(ctx context.Context, envID, id string) (activity.Notification, error)
	TriggerCount(ctx context.Context, envID string, since time.Time, limit int) (n int, capped bool, err error)
}

// Messages reads the messages subscribers got: messaging's Store.
type Messages interface {
	SentMessages(ctx context.Context, envID string, q messaging.SentQuery) ([]messaging.Sent, int, error)
	SentMessage(ctx context.Context, envID, id string) (messaging.Sent, error)
	DeliveryCounts(ctx context.Context, envID string, since time.Time, limit int) ([]messaging.DeliveryCount, bool, error)
	Failures(ctx context.Context, envID string, since time.Time, limit int) ([]messaging.Sent, error)
}

// Subscribers reads and changes subscribers, their channels, preferences
// and memberships: subscribers' Store.
type Subscribers interface {
	Search(ctx context.Context, envID string, query url.Values) (subscribers.SearchPage, error)
	Subscriber(ctx context.Context, envID, subscriberID string) (subscribers.Subscriber, error)
	UpdateProfile(ctx context.Context, tenant platform.Tenant, subscriberID string, p subscribers.Profile) (subscribers.Subscriber, error)
	SetCredentials(ctx context.Context, envID, subscriberID, providerID string, c subscribers.Credentials) (subscribers.Subscriber, error)
	RemoveChannel(ctx context.Context, envID, subscriberID, providerID string) error
	RemoveDeviceTokens(ctx context.Context, envID, subscriberID, providerID string, tokens []string) error
	PreferenceSheet(ctx context.Context, envID, subscriberID string) (subscribers.PreferenceSheet, error)
	SetPreference(ctx context.Context, envID, subscriberID, workflow, channel string, enabled bool) error
	SetSchedule(ctx context.Context, envID, subscriberID string, sc subscribers.Schedule) error
	TopicsOf(ctx context.Context, envID, subscriberID string) ([]subscribers.Topic, error)
}

// Topics reads and changes topics and their members: subscribers' Store.
type Topics interface {
	Topics(ctx context.Context, envID string, query url.Values) (subscribers.TopicPage, error)
	Topic(ctx context.Context, envID, key string) (subscribers.Topic, error)
	CreateTopic(ctx context.Context, tenant platform.Tenant, n subscribers.NewTopic) (subscribers.Topic, error)
	RenameTopic(ctx context.Context, envID, key string, n subscribers.TopicName) (subscribers.Topic, error)
	DeleteTopic(ctx context.Context, envID, key string) error
	TopicMembers(ctx context.Context, envID, key string, query url.Values) (subscribers.MemberPage, error)
	Subscribe(ctx context.Context, tenant platform.Tenant, key string, subscriberIDs []string) (missing []string, err error)
	Unsubscribe(ctx context.Context, envID, key string, subscriberIDs []string) (notMembers []string, err error)
}

// Workflows lists workflows, switches them on, off and to another
// environment, and edits, previews and restores them: workflows' Store.
type Workflows interface {
	Workflows(ctx context.Context, envID string, query url.Values) ([]workflows.Listed, int, error)
	WorkflowNames(ctx context.Context, envID string, limit int) ([]workflows.Named, error)
	SetActive(ctx context.Context, tenant platform.Tenant, key string, active bool) error
	Sync(ctx context.Context, tenant platform.Tenant, key, targetID string) error
	Editable(ctx context.Context, envID, key string) (workflows.Editable, error)
	SaveDraft(ctx context.Context, tenant platform.Tenant, key string, d workflows.Draft) (workflows.Editable, error)
	PreviewDraft(ctx context.Context, envID, key string, d workflows.Draft, i int, with workflows.PreviewWith) (workflows.StepPreview, error)
	Versions(ctx context.Context, envID, key string, limit int) ([]workflows.Version, error)
	VersionChanges(ctx context.Context, envID, key string, from, n int) ([]workflows.Change, error)
	Restore(ctx context.Context, tenant platform.Tenant, key string, n int) error
	SyncChanges(ctx context.Context, tenant platform.Tenant, key, targetID string) ([]string, bool, error)
}

// Tests sends a workflow as a test: activity's Tester.
type Tests interface {
	SendTest(ctx context.Context, tenant platform.Tenant, workflowID, subscriberID string, payload map[string]any) (transactionID, status string, err error)
}

// Content reads the layouts and translations workflows' Store keeps.
type Content interface {
	LayoutSummaries(ctx context.Context, envID string) ([]workflows.LayoutSummary, error)
	LayoutPreview(ctx context.Context, envID, layoutID string) (string, error)
	TranslationGridOf(ctx context.Context, envID, workflowID string) (workflows.TranslationGrid, error)
}

// Integrations lists, changes and checks integrations: integrations'
// Store.
type Integrations interface {
	Integrations(ctx context.Context, envID string) ([]integrations.Integration, error)
	Integration(ctx context.Context, tenant platform.Tenant, id string) (integrations.Integration, error)
	Create(ctx context.Context, tenant platform.Tenant, req integrations.CreateRequest) (integrations.Integration, string, error)
	Update(ctx context.Context, tenant platform.Tenant, id string, req integrations.UpdateRequest) (integrations.Integration, string, error)
	SetPrimary(ctx context.Context, tenant platform.Tenant, id string) (integrations.Integration, error)
	Delete(ctx context.Context, tenant platform.Tenant, id string) error
	Check(ctx context.Context, providerID string, creds integrations.Credentials) (string, error)
}

// Webhooks reads and changes the environment's outbound webhook endpoints
// and their delivery logs: activity/webhooks' Store.
type Webhooks interface {
	Endpoints(ctx context.Context, env string, c webhooks.Cursor) (webhooks.Page[webhooks.Endpoint], error)
	Endpoint(ctx context.Context, env, id string) (webhooks.Endpoint, error)
	CreateEndpoint(ctx context.Context, tenant platform.Tenant, in webhooks.EndpointInput) (webhooks.CreatedEndpoint, error)
	UpdateEndpoint(ctx context.Context, env, id string, in webhooks.EndpointInput) (webhooks.Endpoint, error)
	DeleteEndpoint(ctx context.Context, env, id string) error
	RotateSecret(ctx context.Context, env, id string) (string, error)
	Deliveries(ctx context.Context, env, endpoint string, c webhooks.Cursor) (webhooks.Page[webhooks.Delivery], error)
	SendTest(ctx context.Context, env, endpoint, eventType string) (webhooks.Delivery, error)
	Replay(ctx context.Context, env, endpoint, id string) (webhooks.Delivery, error)
	ReplaySince(ctx context.Context, env, endpoint string, since time.Time) (int64, error)
}

// Contexts reads and changes the environment's contexts: subscribers'
// Store.
type Contexts interface {
	ContextList(ctx context.Context, envID string, query url.Values) (subscribers.ContextPage, error)
	Context(ctx context.Context, envID, typ, id string) (subscribers.Context, error)
	SetContextData(ctx context.Context, tenant platform.Tenant, typ, id string, data json.RawMessage) (subscribers.Context, error)
	DeleteContext(ctx context.Context, tenant platform.Tenant, typ, id string) error
}

// Deps is what the console is built from.
type Deps struct {
	Auth   *platform.ConsoleAuth // the team's sign-in, sessions and CSRF
	DB     *sqldb.DB             // the platform's environments and API keys
	Secret []byte                // seals the API keys it creates, as herald keys create does
	Now    func() time.Time      // time.Now when nil

	Activity     Activity
	Messages     Messages
	Subscribers  Subscribers
	Topics       Topics
	Workflows    Workflows
	Content      Content
	Integrations Integrations
	Webhooks     Webhooks
	Contexts     Contexts
	Tests        Tests // nil: the editor offers no test send
}

// New returns the console's handler, to be served under /console/.
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	c := &console{d: &d, pages: mustParsePages()}
	mux := http.NewServeMux()
	c.addRoutes(mux)
	return secure(noteRoute(mux))
}

// console is the console's state: its dependencies and parsed pages.
type console struct {
	d     *Deps
	pages pages
}

// noteRoute tells the request's log line which route served it; a page
// adds its environment (handle).
func noteRoute(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			platform.NoteRoute(r.Context(), pattern, "")
		}
		mux.ServeHTTP(w, r)
	})
}

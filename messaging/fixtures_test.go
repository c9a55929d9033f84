package messaging_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// fakeSources stands in for the subscribers, workflows and integrations
// domains: plain maps, so a test sets any subscriber or integration it needs
// in one line.
type fakeSources struct {
	mu           sync.Mutex
	subscribers  map[string]map[string]map[string]any // environment → subscriberId → subscriber (docs/api.md, "Subscribers")
	workflows    map[string]json.RawMessage
	integrations map[string][]map[string]any // environment + "/" + channel → integrations, primary first
}

func newFakeSources() *fakeSources {
	return &fakeSources{subscribers: map[string]map[string]map[string]any{}, workflows: map[string]json.RawMessage{},
		integrations: map[string][]map[string]any{}}
}

func (f *fakeSources) SubscribersByID(_ context.Context, env string, ids []string) (map[string]subscribers.Subscriber, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]subscribers.Subscriber{}
	for _, sub := range f.subscribers[env] {
		for _, id := range ids {
			if sub["_id"] == id {
				out[id] = asSubscriber(sub)
			}
		}
	}
	return out, nil
}

func (f *fakeSources) SubscriberIdentity(_ context.Context, env, subscriberID string) (subscribers.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sub, ok := f.subscribers[env][subscriberID]
	if !ok {
		return subscribers.Identity{}, platform.ErrNotFound
	}
	var id subscribers.Identity
	b, _ := json.Marshal(sub)
	err := json.Unmarshal(b, &id)
	return id, err
}

func (f *fakeSources) WorkflowSummaries(_ context.Context, _ string, ids []string) (map[string]workflows.Summary, error) {
	out := map[string]workflows.Summary{}
	for _, id := range ids {
		if w, ok := f.workflows[id]; ok {
			var sum workflows.Summary
			if err := json.Unmarshal(completeSummary(w), &sum); err != nil {
				return nil, err
			}
			out[id] = sum
		}
	}
	return out, nil
}

func (f *fakeSources) ActiveIntegrations(_ context.Context, env, channel string) ([]integrations.Integration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []integrations.Integration
	for _, in := range f.integrations[env+"/"+channel] {
		var creds provider.Credentials
		b, _ := json.Marshal(in["credentials"])
		if err := json.Unmarshal(b, &creds); err != nil {
			return nil, err
		}
		out = append(out, integrations.Integration{ID: in["_id"].(string), Identifier: in["identifier"].(string),
			ProviderID: in["providerId"].(string), Channel: channel, Primary: in["primary"].(bool), Credentials: creds})
	}
	return out, nil
}

// addSubscriber registers a subscriber and returns it.
func (f *fakeSources) addSubscriber(env platform.Environment, subscriberID string, fields map[string]any) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	sub := map[string]any{"_id": sqldb.NewID(), "subscriberId": subscriberID, "firstName": "Ada",
		"lastName": "Lovelace", "email": subscriberID + "@example.com", "phone": "+15550100",
		"avatar": "https://example.com/" + subscriberID + ".png", "channels": []any{}, "topics": []any{},
		"_environmentId": env.ID, "_organizationId": env.OrganizationID, "deleted": false}
	for k, v := range fields {
		sub[k] = v
	}
	// What the subscribers store always answers, so that responses
	// embedding the subscriber match the API description.
	sub["createdAt"], sub["updatedAt"] = "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"
	for _, c := range sub["channels"].([]any) {
		if c, ok := c.(map[string]any); ok && c["_integrationId"] == nil {
			c["_integrationId"] = "" // linked to no integration in particular
		}
	}
	if f.subscribers[env.ID] == nil {
		f.subscribers[env.ID] = map[string]map[string]any{}
	}
	f.subscribers[env.ID][subscriberID] = sub
	return sub
}

// addIntegration registers an active integration of a channel.
func (f *fakeSources) addIntegration(env platform.Environment, channel, providerID string, creds map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := env.ID + "/" + channel
	f.integrations[key] = append(f.integrations[key], map[string]any{"_id": sqldb.NewID(),
		"identifier": providerID + "-1", "providerId": providerID, "channel": channel,
		"primary": len(f.integrations[key]) == 0, "active": true, "name": providerID, "credentials": creds})
}

// harness is a test server with the messaging routes and its store.
type harness struct {
	srv    *platformtest.Server
	store  *messaging.Store
	engine *messaging.Deliverer // delivers into store
	src    *fakeSources
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{src: newFakeSources()}
	h.srv = platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		h.store = messaging.NewStore(app.DB, messaging.Sources{Subscribers: h.src, Workflows: h.src,
			Integrations: h.src}).WithClock(app.Clock.Now).WithSecret(app.Secret)
		h.engine = messaging.NewDeliverer(h.store, app.Outbound)
		messaging.AddRoutes(mux, h.store)
	})
	for _, env := range []platform.Environment{h.srv.App.Development, h.srv.App.Production} {
		h.src.addIntegration(env, "in_app", "service", map[string]any{})
	}
	return h
}

// outcome is what Deliver answers.
type outcome = messaging.Outcome

// job describes one delivery; zero fields take defaults.
type job struct {
	env           platform.Environment
	subscriber    map[string]any
	channel       string
	controls      map[string]any
	payload       map[string]any
	jobID         string
	transactionID string
	workflowID    string
	overrides     map[string]any
	attempt       int // 0 leaves it out
}

// deliver calls Deliver with a delivery built from j, and stores an
// in-app message as activity's worker does.
func (h *harness) deliver(t *testing.T, j job) outcome {
	t.Helper()
	out, err := h.tryDeliver(j)
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	return out
}

// tryDeliver is deliver for goroutines, which must not stop the test.
func (h *harness) tryDeliver(j job) (outcome, error) {
	ctx := context.Background()
	out, write, err := h.engine.Deliver(ctx, h.delivery(j))
	if err != nil || write == nil {
		return out, err
	}
	return out, h.srv.App.DB.Tx(ctx, func(tx *sql.Tx) error { return write(ctx, tx) })
}

// delivery is the delivery activity would hand messaging for j, with its
// zero fields defaulted.
func (h *harness) delivery(j job) *messaging.Delivery {
	if j.env.ID == "" {
		j.env = h.srv.App.Development
	}
	if j.channel == "" {
		j.channel = "in_app"
	}
	if j.jobID == "" {
		j.jobID = sqldb.NewID()
	}
	if j.transactionID == "" {
		j.transactionID = "tx-" + j.jobID
	}
	if j.payload == nil {
		j.payload = map[string]any{}
	}
	if j.workflowID == "" {
		j.workflowID = "5f00000000000000000000aa"
	}
	if j.overrides == nil {
		j.overrides = map[string]any{}
	}
	payload, _ := json.Marshal(j.payload)
	overrides, _ := json.Marshal(j.overrides)
	return &messaging.Delivery{
		JobID: j.jobID, NotificationID: sqldb.NewID(), EnvironmentID: j.env.ID,
		OrganizationID: j.env.OrganizationID, TransactionID: j.transactionID, Channel: j.channel,
		StepID: "step-1", StepDatabaseID: "5f0000000000000000000001", WorkflowDatabaseID: j.workflowID,
		WorkflowID: "welcome", Subscriber: asSubscriber(j.subscriber), Controls: j.controls,
		Payload: payload, Overrides: overrides, Tags: []string{"news"},
		Actor: json.RawMessage(`{"type":"none","data":null}`), Attempt: j.attempt,
	}
}

// asSubscriber reads a subscriber of fakeSources as the subscribers domain
// answers it.
func asSubscriber(fields map[string]any) subscribers.Subscriber {
	var sub subscribers.Subscriber
	b, _ := json.Marshal(fields)
	json.Unmarshal(b, &sub)
	return sub
}

// mustDeliver delivers and fails the test unless the message was sent.
func (h *harness) mustDeliver(t *testing.T, j job) string {
	t.Helper()
	out := h.deliver(t, j)
	if out.Status != "sent" || out.MessageID == "" {
		t.Fatalf("delivery not sent: %+v", out)
	}
	return out.MessageID
}

// completeSummary fills in the summary fields a test's workflow leaves
// out with what the workflows store always answers, so that responses
// embedding the summary match the API description.
func completeSummary(raw json.RawMessage) json.RawMessage {
	summary := map[string]any{"description": "", "active": true, "draft": false, "critical": false, "deleted": false,
		"_organizationId": "", "_creatorId": "", "_environmentId": "", "_notificationGroupId": "", "deletedAt": "",
		"deletedBy": "", "preferenceSettings": map[string]any{}, "tags": []any{}, "steps": []any{}, "triggers": []any{}}
	var given map[string]any
	if json.Unmarshal(raw, &given) != nil {
		return raw
	}
	for k, v := range given {
		summary[k] = v
	}
	b, _ := json.Marshal(summary)
	return b
}

package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// fakeSources stands in for the subscribers, workflows and integrations
// domains, which land on other branches: plain maps of their wire JSON.
type fakeSources struct {
	mu           sync.Mutex
	subscribers  map[string]map[string]map[string]any // environment → subscriberId → spec §2.1 subscriber
	workflows    map[string]json.RawMessage
	integrations map[string][]map[string]any // environment + "/" + channel → integrations, primary first
}

func newFakeSources() *fakeSources {
	return &fakeSources{subscribers: map[string]map[string]map[string]any{}, workflows: map[string]json.RawMessage{},
		integrations: map[string][]map[string]any{}}
}

func (f *fakeSources) SubscribersJSON(_ context.Context, env string, ids []string) (map[string]json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]json.RawMessage{}
	for _, sub := range f.subscribers[env] {
		for _, id := range ids {
			if sub["_id"] == id {
				out[id], _ = json.Marshal(sub)
			}
		}
	}
	return out, nil
}

func (f *fakeSources) SubscriberIdentityJSON(_ context.Context, env, subscriberID string) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sub, ok := f.subscribers[env][subscriberID]
	if !ok {
		return nil, platform.ErrNotFound
	}
	identity := map[string]any{}
	for _, k := range []string{"_id", "subscriberId", "firstName", "lastName", "avatar"} {
		if v, ok := sub[k]; ok {
			identity[k] = v
		}
	}
	return json.Marshal(identity)
}

func (f *fakeSources) WorkflowSummariesJSON(_ context.Context, _ string, ids []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, id := range ids {
		if w, ok := f.workflows[id]; ok {
			out[id] = completeSummary(w)
		}
	}
	return out, nil
}

func (f *fakeSources) ActiveIntegrationsJSON(_ context.Context, env, channel string) ([]json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []json.RawMessage
	for _, in := range f.integrations[env+"/"+channel] {
		b, _ := json.Marshal(in)
		out = append(out, b)
	}
	return out, nil
}

// addSubscriber registers a subscriber and returns it.
func (f *fakeSources) addSubscriber(env platform.Environment, subscriberID string, fields map[string]any) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	sub := map[string]any{"_id": platform.NewID(), "subscriberId": subscriberID, "firstName": "Ada",
		"lastName": "Lovelace", "email": subscriberID + "@example.com", "phone": "+15550100",
		"avatar": "https://example.com/" + subscriberID + ".png", "channels": []any{},
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
	f.integrations[key] = append(f.integrations[key], map[string]any{"_id": platform.NewID(),
		"identifier": providerID + "-1", "providerId": providerID, "channel": channel,
		"primary": len(f.integrations[key]) == 0, "active": true, "name": providerID, "credentials": creds})
}

// harness is a test server with the messaging routes and its store.
type harness struct {
	srv   *platformtest.Server
	store *messaging.Store
	src   *fakeSources
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{src: newFakeSources()}
	h.srv = platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		h.store = messaging.NewStore(app.DB, messaging.Sources{Subscribers: h.src, Workflows: h.src,
			Integrations: h.src}).WithClock(app.Clock.Now)
		messaging.AddRoutes(mux, h.store)
	})
	for _, env := range []platform.Environment{h.srv.App.Development, h.srv.App.Production} {
		h.src.addIntegration(env, "in_app", "service", map[string]any{})
	}
	return h
}

// outcome is the DeliverJSON reply, decoded as activity would.
type outcome struct {
	MessageID  string `json:"messageId"`
	Status     string `json:"status"`
	ProviderID string `json:"providerId"`
	Retryable  bool   `json:"retryable"`
	Details    []struct {
		Status     string  `json:"status"`
		Detail     string  `json:"detail"`
		Source     string  `json:"source"`
		ProviderID string  `json:"providerId"`
		Raw        *string `json:"raw"`
	} `json:"details"`
}

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

// deliver calls DeliverJSON with a delivery document built from j.
func (h *harness) deliver(t *testing.T, j job) outcome {
	t.Helper()
	out, err := h.tryDeliver(j)
	if err != nil {
		t.Fatalf("DeliverJSON: %v", err)
	}
	return out
}

// tryDeliver is deliver for goroutines, which must not stop the test.
func (h *harness) tryDeliver(j job) (outcome, error) {
	res, err := h.store.DeliverJSON(context.Background(), h.document(j))
	if err != nil {
		return outcome{}, err
	}
	var out outcome
	if err := json.Unmarshal(res, &out); err != nil {
		return outcome{}, fmt.Errorf("decode outcome %s: %w", res, err)
	}
	return out, nil
}

// document is the delivery document activity would send for j, with its
// zero fields defaulted.
func (h *harness) document(j job) json.RawMessage {
	if j.env.ID == "" {
		j.env = h.srv.App.Development
	}
	if j.channel == "" {
		j.channel = "in_app"
	}
	if j.jobID == "" {
		j.jobID = platform.NewID()
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
	doc := map[string]any{
		"jobId": j.jobID, "notificationId": platform.NewID(), "environmentId": j.env.ID,
		"organizationId": j.env.OrganizationID, "transactionId": j.transactionID, "channel": j.channel,
		"stepId": "step-1", "stepDatabaseId": "5f0000000000000000000001", "workflowDatabaseId": j.workflowID,
		"workflowId": "welcome", "subscriber": j.subscriber, "controls": j.controls,
		"variables": map[string]any{"subscriber": j.subscriber, "payload": j.payload, "steps": map[string]any{}},
		"payload":   j.payload, "overrides": j.overrides, "tags": []string{"news"},
		"actor": map[string]any{"type": "none", "data": nil},
	}
	if j.attempt > 0 {
		doc["attempt"] = j.attempt
	}
	b, _ := json.Marshal(doc)
	return b
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

// completeSummary adds to a test's workflow summary the fields the workflows
// store always answers, so that messages embedding it match the API
// description.
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

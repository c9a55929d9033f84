package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// apiWorkflows is the real workflows store, written through the real
// workflow API, so a test's workflow is what a client's would be. inject
// stores what the API refuses, as a database written before a check may
// hold it: only that is served from a map.
type apiWorkflows struct {
	*workflows.Store
	srv *platformtest.Server // set once the test server runs

	mu       sync.Mutex
	injected map[string]*workflows.Workflow // by workflowId
}

// TriggerWorkflow answers an injected workflow, or the store's.
func (f *apiWorkflows) TriggerWorkflow(ctx context.Context, environmentID, workflowID string) (*workflows.Workflow, error) {
	f.mu.Lock()
	wf, ok := f.injected[workflowID]
	f.mu.Unlock()
	if ok && environmentID == f.srv.App.Development.ID {
		return wf, nil
	}
	return f.Store.TriggerWorkflow(ctx, environmentID, workflowID)
}

// inject serves a Development workflow the API would refuse, given as add
// takes it.
func (f *apiWorkflows) inject(t testing.TB, workflowID string, extra map[string]any, steps ...map[string]any) {
	t.Helper()
	for _, s := range steps {
		s["_id"] = sqldb.NewID()
		if s["name"] == nil {
			s["name"] = s["stepId"]
		}
	}
	doc := map[string]any{"_id": sqldb.NewID(), "workflowId": workflowID, "name": "Workflow " + workflowID, "active": true,
		"origin": "service-cloud", "severity": "none", "tags": []string{"t1"}, "steps": steps,
		"preferences": map[string]any{"default": map[string]any{"all": map[string]any{"enabled": true}}}}
	for k, v := range extra {
		doc[k] = v
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	wf := &workflows.Workflow{}
	if err := json.Unmarshal(b, wf); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.injected == nil {
		f.injected = map[string]*workflows.Workflow{}
	}
	f.injected[workflowID] = wf
}

// add creates or replaces the Development workflow workflowID; extra sets
// body fields over the defaults (active, tags), and steps are step bodies
// (see step). It returns the workflow's _id.
func (f *apiWorkflows) add(t testing.TB, env, workflowID string, extra map[string]any, steps ...map[string]any) string {
	t.Helper()
	if env != f.srv.App.Development.ID {
		t.Fatalf("apiWorkflows writes Development workflows only")
	}
	for _, s := range steps {
		if s["name"] == nil {
			s["name"] = s["stepId"]
		}
	}
	if steps == nil {
		steps = []map[string]any{}
	}
	body := map[string]any{"name": "Workflow " + workflowID, "workflowId": workflowID, "active": true,
		"tags": []string{"t1"}, "steps": steps}
	for k, v := range extra {
		body[k] = v
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	method, path, want := "POST", "/v2/workflows", http.StatusCreated
	if f.srv.Dev.Do(t, "GET", "/v2/workflows/"+workflowID, "").Status == http.StatusOK {
		method, path, want = "PUT", "/v2/workflows/"+workflowID, http.StatusOK
	}
	res := f.srv.Dev.Do(t, method, path, string(raw))
	if res.Status != want {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	var out struct {
		ID string `json:"_id"`
	}
	res.Decode(t, &out)
	return out.ID
}

// remove deletes a workflow.
func (f *apiWorkflows) remove(t testing.TB, workflowID string) {
	t.Helper()
	if res := f.srv.Dev.Do(t, "DELETE", "/v2/workflows/"+workflowID, ""); res.Status != http.StatusNoContent {
		t.Fatalf("delete workflow %s: %d %s", workflowID, res.Status, res.Body)
	}
}

// step builds a workflow step document.
func step(stepID, typ string, values map[string]any) map[string]any {
	if values == nil {
		values = map[string]any{}
	}
	return map[string]any{"stepId": stepID, "type": typ, "controlValues": values}
}

// listedSubscribers is the real subscribers store, with a hook that fails
// a listing as the store fails on a canceled ctx: broadcasts resume after
// such a failure, which a real store gives no way to cause on cue.
type listedSubscribers struct {
	*subscribers.Store
	mu sync.Mutex
	// listing, when set, runs first in SubscribersAfter and
	// TopicMembersAfter and fails them with its error.
	listing func(ctx context.Context, after string) error
}

// onList sets what SubscribersAfter runs first.
func (f *listedSubscribers) onList(fn func(ctx context.Context, after string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listing = fn
}

func (f *listedSubscribers) SubscribersAfter(ctx context.Context, environmentID, after string, limit int) ([]subscribers.Subscriber, error) {
	f.mu.Lock()
	listing := f.listing
	f.mu.Unlock()
	if listing != nil {
		if err := listing(ctx, after); err != nil {
			return nil, err
		}
	}
	return f.Store.SubscribersAfter(ctx, environmentID, after, limit)
}

// TopicMembersAfter is the store's, after the same hook as SubscribersAfter:
// a trigger to topics pages its members through it.
func (f *listedSubscribers) TopicMembersAfter(ctx context.Context, environmentID string, topics []subscribers.Topic, after string, limit int, exclude []string) ([]subscribers.TopicMember, string, bool, error) {
	f.mu.Lock()
	listing := f.listing
	f.mu.Unlock()
	if listing != nil {
		if err := listing(ctx, after); err != nil {
			return nil, "", false, err
		}
	}
	return f.Store.TopicMembersAfter(ctx, environmentID, topics, after, limit, exclude)
}

// delivery is the part of a messaging.Delivery the tests read, as JSON.
type delivery struct {
	JobID          string `json:"jobId"`
	NotificationID string `json:"notificationId"`
	TransactionID  string `json:"transactionId"`
	Channel        string `json:"channel"`
	StepID         string `json:"stepId"`
	WorkflowID     string `json:"workflowId"`
	Subscriber     struct {
		ID           string `json:"_id"`
		SubscriberID string `json:"subscriberId"`
	} `json:"subscriber"`
	Controls    map[string]any `json:"controls"`
	Attachments []string       `json:"attachments"` // each file as name:content
	Variables   struct {
		Subscriber map[string]any `json:"subscriber"`
		Payload    map[string]any `json:"payload"`
		Steps      map[string]struct {
			Events []struct {
				Payload map[string]any `json:"payload"`
			} `json:"events"`
			EventCount int `json:"eventCount"`
		} `json:"steps"`
	} `json:"variables"`
	Payload map[string]any `json:"payload"`
}

// fakeMessenger records every delivery and stores one message per job, as
// messaging's Deliver does. respond decides each attempt's outcome: the
// failures a provider could answer, on cue.
type fakeMessenger struct {
	mu       sync.Mutex
	calls    []delivery
	messages map[string]delivery // jobId → the message stored for it
	respond  func(d delivery, attempt int) (string, error)
	block    chan struct{} // when set, Deliver waits on it or on ctx
}

func newFakeMessenger() *fakeMessenger {
	return &fakeMessenger{messages: map[string]delivery{}}
}

// Deliver records md as the tests read it (delivery) and answers with the
// outcome respond decides.
func (f *fakeMessenger) Deliver(ctx context.Context, md *messaging.Delivery) (messaging.Outcome, func(context.Context, *sql.Tx) error, error) {
	files := []string{}
	for _, a := range md.Attachments {
		files = append(files, a.Name+":"+string(a.Content))
	}
	raw, _ := json.Marshal(map[string]any{"attachments": files, "jobId": md.JobID, "notificationId": md.NotificationID,
		"transactionId": md.TransactionID, "channel": md.Channel, "stepId": md.StepID, "workflowId": md.WorkflowID,
		"subscriber": md.Subscriber, "controls": md.Controls, "payload": md.Payload,
		"variables": map[string]any{"subscriber": md.Subscriber.Fields(), "payload": md.Payload, "steps": md.Steps}})
	var d delivery
	if err := json.Unmarshal(raw, &d); err != nil {
		return messaging.Outcome{}, nil, err
	}
	f.mu.Lock()
	f.calls = append(f.calls, d)
	attempt := 0
	for _, c := range f.calls {
		if c.JobID == d.JobID {
			attempt++
		}
	}
	respond, block := f.respond, f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return messaging.Outcome{}, nil, ctx.Err()
		}
	}
	status, err := "sent", error(nil)
	if respond != nil {
		status, err = respond(d, attempt)
	}
	if err != nil {
		return messaging.Outcome{}, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if status == "sent" {
		if _, ok := f.messages[d.JobID]; !ok {
			f.messages[d.JobID] = d
		}
	}
	provider := map[string]string{"in_app": "service", "email": "nodemailer", "chat": "chat-webhook", "sms": "generic-sms", "push": "push-webhook"}[d.Channel]
	reply := `{"status":503}`
	switch status {
	case "sent":
		return messaging.Outcome{MessageID: "m-" + d.JobID, Status: "sent", ProviderID: provider, Details: []messaging.Detail{
			{Status: "Pending", Detail: "Message created", Source: "Internal", ProviderID: provider},
			{Status: "Success", Detail: "Message sent", Source: "Internal", ProviderID: provider}}}, nil, nil
	case "retry":
		return messaging.Outcome{MessageID: "m-" + d.JobID, Status: "error", ProviderID: provider, Retryable: true, Details: []messaging.Detail{
			{Status: "Failed", Detail: "Unexpected provider error", Source: "Webhook", ProviderID: provider, Raw: &reply}}}, nil, nil
	default:
		return messaging.Outcome{Status: "error", ProviderID: provider, Details: []messaging.Detail{
			{Status: "Failed", Detail: "Subscriber does not have an active integration", Source: "Credentials", ProviderID: provider}}}, nil, nil
	}
}

// sent returns the stored messages, in no particular order.
func (f *fakeMessenger) sent() []delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]delivery, 0, len(f.messages))
	for _, d := range f.messages {
		out = append(out, d)
	}
	return out
}

func (f *fakeMessenger) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// harness is a test server with activity's routes and a running worker on
// the real subscribers store, a map of workflow documents, and a messenger
// whose outcomes a test decides.
type harness struct {
	*platformtest.Server
	wf     *apiWorkflows
	subs   *listedSubscribers
	msg    *fakeMessenger
	store  *Store
	logger *slog.Logger
	worker *Worker
	size   int                       // the worker's goroutines; 0 for the default
	halt   context.CancelFunc        // stops the worker claiming, as a signal does
	stop   func(grace time.Duration) // stops the worker, giving running jobs grace
}

const (
	testLease = time.Minute
	testRetry = 10 * time.Second
)

// newHarness starts the harness; each option adjusts its store before the
// server takes requests.
func newHarness(t *testing.T, options ...func(*Store)) *harness {
	t.Helper()
	h := &harness{wf: &apiWorkflows{}, msg: newFakeMessenger(), size: 2}
	h.Server = platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		h.store = NewStore(app.DB, app.Clock.Now)
		h.subs = &listedSubscribers{Store: subscribers.NewStore(app.DB, nil, app.Clock.Now)}
		h.wf.Store = workflows.NewStore(app.DB)
		workflows.AddRoutes(mux, h.wf.Store, nil)
		subscribers.AddRoutes(mux, h.subs.Store)
		for _, o := range options {
			o(h.store)
		}
		h.logger = app.Logger
		AddRoutes(mux, h.store, nil, h.wf, h.subs)
	})
	h.wf.srv = h.Server
	h.startWorker(t)
	return h
}

// startWorker starts a worker on the harness's store; the previous one, if
// any, must have been stopped.
func (h *harness) startWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWorker(h.store, h.subs, h.msg, WorkerConfig{Size: h.size, Lease: testLease, Poll: 2 * time.Millisecond,
		RetryBackoff: testRetry, Logger: h.logger})
	w.Start(ctx)
	h.worker, h.halt = w, cancel
	var once sync.Once
	h.stop = func(grace time.Duration) {
		once.Do(func() {
			cancel()
			sctx, done := context.WithTimeout(context.Background(), grace)
			defer done()
			w.Stop(sctx)
		})
	}
	t.Cleanup(func() { h.stop(5 * time.Second) })
}

// wakeAll wakes every lane of the worker, as a poll tick would, after the
// test moved the clock.
func (h *harness) wakeAll() {
	for lane := range laneCount {
		h.store.wake(lane)
	}
}

// anyDue reports whether a job of any lane is due.
func (h *harness) anyDue(t *testing.T) bool {
	t.Helper()
	for lane := range laneCount {
		due, err := h.store.anyDue(context.Background(), lane)
		if err != nil {
			t.Fatal(err)
		}
		if due {
			return true
		}
	}
	return false
}

// trigger posts a trigger and returns its transactionId, failing unless it is a 201.
func (h *harness) trigger(t *testing.T, body string) string {
	t.Helper()
	res := h.Dev.Do(t, "POST", "/v1/events/trigger", body)
	if res.Status != http.StatusCreated {
		t.Fatalf("trigger: %d %s", res.Status, res.Body)
	}
	var out struct {
		TransactionID string `json:"transactionId"`
	}
	res.Decode(t, &out)
	return out.TransactionID
}

// triggerAck is a trigger's or a broadcast's answer.
type triggerAck struct {
	Acknowledged  bool   `json:"acknowledged"`
	Status        string `json:"status"`
	TransactionID string `json:"transactionId"`
}

// apiNotification is a notification as a client reads it.
type apiNotification struct {
	ID                     string   `json:"_id"`
	SubscriberID           string   `json:"_subscriberId"`
	TemplateID             string   `json:"_templateId"`
	DigestedNotificationID string   `json:"_digestedNotificationId"`
	TransactionID          string   `json:"transactionId"`
	Channels               []string `json:"channels"`
	Topics                 []struct {
		TopicKey string `json:"topicKey"`
	} `json:"topics"`
	Subscriber struct {
		ID           string `json:"_id"`
		SubscriberID string `json:"subscriberId"`
		Email        string `json:"email"`
	} `json:"subscriber"`
	Template struct {
		ID       string `json:"_id"`
		Name     string `json:"name"`
		Triggers []struct {
			Type       string `json:"type"`
			Identifier string `json:"identifier"`
		} `json:"triggers"`
	} `json:"template"`
	Jobs []struct {
		ID         string `json:"_id"`
		Type       string `json:"type"`
		Status     string `json:"status"`
		ProviderID string `json:"providerId"`
		Step       struct {
			ID       string `json:"_id"`
			ParentID any    `json:"_parentId"`
		} `json:"step"`
		Digest *struct {
			Type   string           `json:"type"`
			Events []map[string]any `json:"events"`
		} `json:"digest"`
		ExecutionDetails []struct {
			ID         string  `json:"_id"`
			Status     string  `json:"status"`
			Detail     string  `json:"detail"`
			Source     string  `json:"source"`
			IsRetry    bool    `json:"isRetry"`
			ProviderID string  `json:"providerId"`
			Raw        *string `json:"raw"`
		} `json:"executionDetails"`
	} `json:"jobs"`
	Severity *string `json:"severity"`
	Critical *bool   `json:"critical"`
}

// statuses returns "type:status" per job, in order.
func (n apiNotification) statuses() []string {
	var out []string
	for _, j := range n.Jobs {
		out = append(out, j.Type+":"+j.Status)
	}
	return out
}

// details returns the detail texts of the job of the given type.
func (n apiNotification) details(typ string) []string {
	var out []string
	for _, j := range n.Jobs {
		if j.Type == typ {
			for _, d := range j.ExecutionDetails {
				out = append(out, d.Detail)
			}
		}
	}
	return out
}

// waitFailures waits until, in every notification of txID, the job of the
// given type is queued again with n failed attempts recorded. A job is
// queued before its first attempt too, so its status alone cannot tell that
// an attempt is recorded; a test that moves the clock past a retry's backoff
// must wait for this first.
func (h *harness) waitFailures(t *testing.T, txID, typ string, n int) {
	t.Helper()
	platformtest.Eventually(t, 5*time.Second, func() bool {
		got := h.notifications(t, "transactionId="+txID)
		for _, nt := range got {
			if nt.failures(typ) != n {
				return false
			}
		}
		return len(got) > 0
	}, fmt.Sprintf("%s jobs of %s to be queued after %d failed attempts", typ, txID, n))
}

// failures counts the Failed details of the job of the given type, or -1
// while that job is not queued.
func (n apiNotification) failures(typ string) int {
	for _, j := range n.Jobs {
		if j.Type != typ {
			continue
		}
		if j.Status != "queued" {
			return -1
		}
		failed := 0
		for _, d := range j.ExecutionDetails {
			if d.Status == "Failed" {
				failed++
			}
		}
		return failed
	}
	return -1
}

// notifications lists the Development environment's notifications for query.
func (h *harness) notifications(t *testing.T, query string) []apiNotification {
	t.Helper()
	res := h.Dev.Do(t, "GET", "/v1/notifications?limit=50&"+query, "")
	if res.Status != http.StatusOK {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	var out struct {
		Data []apiNotification `json:"data"`
	}
	res.Decode(t, &out)
	return out.Data
}

// waitStatuses polls the transaction's notifications until every one has
// the given job statuses.
func (h *harness) waitStatuses(t *testing.T, txID string, want ...string) []apiNotification {
	t.Helper()
	var got []apiNotification
	done := func() bool {
		got = h.notifications(t, "transactionId="+txID)
		if len(got) == 0 {
			return false
		}
		for _, n := range got {
			if fmt.Sprint(n.statuses()) != fmt.Sprint(want) {
				return false
			}
		}
		return true
	}
	// Like platformtest.Eventually, but the failure shows the last state.
	deadline := time.Now().Add(5 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			var last []any
			for _, n := range got {
				last = append(last, n.statuses(), n.Jobs)
			}
			t.Fatalf("jobs of %s never became %v; last: %+v", txID, want, last)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

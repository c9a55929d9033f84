package activity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
)

// testPrefix starts the transactionId of every test send: how Activity
// tells a test from a trigger of the API without a column of its own.
const testPrefix = "test-"

// IsTest reports whether transactionID is a test send's.
func IsTest(transactionID string) bool { return strings.HasPrefix(transactionID, testPrefix) }

// Tester sends a workflow as a test, for the console's editor: a trigger
// as POST /v1/events/trigger runs it, to one subscriber, marked as a test.
type Tester struct{ t *triggerer }

// NewTester returns a Tester that triggers through store and worker, as
// AddRoutes' trigger does.
func NewTester(store *Store, worker *Worker, workflows Workflows, subscribers Subscribers) *Tester {
	t := newTriggerer(store, workflows, subscribers)
	if worker != nil {
		t.run = &worker.runner
	}
	return &Tester{t: t}
}

// SendTest triggers the workflow whose workflowId is workflowID for the
// subscriber subscriberID with payload, and returns the trigger's
// transactionId and status ("processed", or why it sent nothing).
func (x *Tester) SendTest(ctx context.Context, tenant platform.Tenant, workflowID, subscriberID string, payload map[string]any) (transactionID, status string, err error) {
	to, _ := json.Marshal(subscriberID)
	if payload == nil {
		payload = map[string]any{}
	}
	p, err := json.Marshal(payload)
	if err != nil {
		return "", "", err
	}
	b := make([]byte, 8)
	rand.Read(b)
	req := triggerRequest{Name: workflowID, To: to, Payload: p, TransactionID: testPrefix + hex.EncodeToString(b)}
	if err := platform.ValidateRequest(ctx, req); err != nil {
		return "", "", err
	}
	res, err := x.t.trigger(ctx, tenant, req, time.Now().Add(inlineBudget))
	if err != nil {
		return "", "", err
	}
	x.t.store.noteTrigger(res)
	return res.TransactionID, res.Status, nil
}

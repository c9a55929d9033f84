// Package activity triggers workflows and runs them: the trigger, bulk,
// broadcast and cancel endpoints, the fan-out to topics and broadcasts, the
// durable job queue and the worker that runs it, the records that explain
// what happened (notifications with their jobs and execution details,
// served by /v1/notifications), and the retention sweeper that deletes
// expired records, its own and other domains', in batches that yield to the
// writer (docs/delivery.md; docs/retention.md).
package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// Workflows is what activity needs from the workflows domain.
type Workflows interface {
	// TriggerWorkflow returns the workflow whose workflowId is given, or
	// platform.ErrNotFound. The same *Workflow comes back until the
	// workflow changes.
	TriggerWorkflow(ctx context.Context, environmentID, workflowID string) (*workflows.Workflow, error)
	// Triggered records that the workflow (by _id) was triggered at at.
	Triggered(ctx context.Context, environmentID, id string, at time.Time) error
}

// Contexts creates the contexts a trigger names (docs/content.md,
// "Contexts"); subscribers.Store satisfies it.
type Contexts interface {
	// EnsureContexts creates those of refs the environment does not have.
	EnsureContexts(ctx context.Context, tenant platform.Tenant, refs []subscribers.ContextRef) error
}

// Subscribers is what activity needs from the subscribers domain.
type Subscribers interface {
	// SubscribersBySubscriberID returns subscribers (docs/api.md, "Subscribers")
	// keyed by subscriberId; subscriberIds not found are absent.
	SubscribersBySubscriberID(ctx context.Context, environmentID string, subscriberIDs []string) (map[string]subscribers.Subscriber, error)
	// SubscribersByID returns subscribers (docs/api.md, "Subscribers") keyed by
	// their database _id.
	SubscribersByID(ctx context.Context, environmentID string, ids []string) (map[string]subscribers.Subscriber, error)
	// UpsertSubscribers creates or updates subscribers from POST
	// /v1/subscribers bodies, as the trigger's client sent them, and returns
	// each as it stands after its write. Every body is checked before any is
	// written: a bad one is a 422 with its fields under paths[i], and
	// nothing is written.
	UpsertSubscribers(ctx context.Context, tenant platform.Tenant, bodies []json.RawMessage, paths []string) ([]subscribers.Subscriber, error)
	// SubscribersMatching returns the database _ids of the environment's
	// subscribers with one of subscriberIDs, one of emails, or an email
	// containing search in any case or a subscriberId equal to it.
	SubscribersMatching(ctx context.Context, environmentID string, subscriberIDs, emails []string, search string) ([]string, error)
	// SubscribersAfter returns up to limit subscribers (docs/api.md,
	// "Subscribers") whose subscriberId is greater than after, in subscriberId
	// order.
	SubscribersAfter(ctx context.Context, environmentID, after string, limit int) ([]subscribers.Subscriber, error)
	// CountSubscribers answers how many subscribers the environment has.
	CountSubscribers(ctx context.Context, environmentID string) (int64, error)
}

// Messenger renders and delivers one channel step (the messaging domain).
// Deliver is idempotent per jobId, which is what makes a retried or
// reclaimed job send once. The write it may return (for an in_app step, the
// message itself) runs in the transaction that records the job's result.
type Messenger interface {
	Deliver(ctx context.Context, d *messaging.Delivery) (messaging.Outcome, func(context.Context, *sql.Tx) error, error)
}

// Job statuses (docs/api.md, "Delivery").
const (
	statusPending   = "pending"
	statusQueued    = "queued"
	statusRunning   = "running"
	statusCompleted = "completed"
	statusFailed    = "failed"
	statusCanceled  = "canceled"
	statusSkipped   = "skipped"
	statusMerged    = "merged"
	statusDelayed   = "delayed"
)

// Execution detail statuses and sources (docs/api.md, "Notifications").
const (
	detailSuccess = "Success"
	detailWarning = "Warning"
	detailFailed  = "Failed"
	detailPending = "Pending"

	sourceInternal = "Internal"
	sourcePayload  = "Payload"
)

// Step types.
const (
	stepTrigger  = "trigger"
	stepDelay    = "delay"
	stepDigest   = "digest"
	stepThrottle = "throttle"
	stepCustom   = "custom"
)

// channelSteps are the step types that deliver a message.
var channelSteps = map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}

// defaultProviders is the providerId a delivery job carries until messaging
// reports the one it used (docs/api.md, "What strict clients check": every
// job has a providerId).
var defaultProviders = map[string]string{
	"in_app": "service",
	"email":  "service-email",
	"sms":    "service-sms",
	"chat":   "service",
	"push":   "push-webhook",
}

// chainProvider is the providerId a job of the step type carries when its
// chain is planned.
func chainProvider(stepType string) string {
	if channelSteps[stepType] {
		return defaultProviders[stepType]
	}
	return "service"
}

// preferencesDoc is a notification's preferences column: the workflow's
// preferences (docs/api.md, "What strict clients check") as the trigger
// stored them. Every field is optional, so a row stored with fewer of them
// reads as what it says.
type preferencesDoc struct {
	Default *preferenceSet `json:"default"`
	User    *preferenceSet `json:"user"`
}

type preferenceSet struct {
	All *struct {
		Enabled  *bool `json:"enabled"`
		ReadOnly bool  `json:"readOnly"`
	} `json:"all"`
	Channels map[string]struct {
		Enabled *bool `json:"enabled"`
	} `json:"channels"`
}

// critical reports whether the workflow's preferences mark it critical: the
// flag is preferences.default.all.readOnly (the "What strict clients check"
// section of docs/api.md gives the shape; the reference platform's worker
// reads critical from them too).
func (p preferencesDoc) critical() bool {
	return p.Default != nil && p.Default.All != nil && p.Default.All.ReadOnly
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// parsedWorkflow is what a trigger derives from a workflow, the same for
// every trigger until the workflow changes: the template summary of its
// notifications, its job chain and its preferences as stored.
type parsedWorkflow struct {
	wf          *workflows.Workflow
	template    json.RawMessage
	chain       []chainStep
	preferences json.RawMessage
	// snapshots are the values above its notifications and jobs name by
	// key, and templateColumn and preferencesColumn what a notification's
	// columns hold (snapshots.go).
	snapshots                         []workflowSnapshot
	templateColumn, preferencesColumn string
	// rendered is renderedPaths' answer.
	rendered [][]string
}

func parseWorkflow(wf *workflows.Workflow) *parsedWorkflow {
	prefs, _ := json.Marshal(wf.Preferences)
	p := &parsedWorkflow{wf: wf, template: templateSummary(wf), chain: chainSteps(wf), preferences: prefs}
	p.rendered = renderedPaths(wf)
	p.snapshotColumns()
	return p
}

// parsedWorkflows keeps each parsedWorkflow while workflows answers the same
// *Workflow, which it does until the workflow's next write: building the
// chain's snapshots was a tenth of a trigger's work before the write.
type parsedWorkflows struct {
	mu sync.Mutex
	m  map[*workflows.Workflow]*parsedWorkflow
}

// maxParsedWorkflows bounds the cache; past it, it starts over.
const maxParsedWorkflows = 1024

func (c *parsedWorkflows) get(wf *workflows.Workflow) *parsedWorkflow {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[wf]; ok {
		return p
	}
	if c.m == nil || len(c.m) >= maxParsedWorkflows {
		c.m = map[*workflows.Workflow]*parsedWorkflow{}
	}
	p := parseWorkflow(wf)
	c.m[wf] = p
	return p
}

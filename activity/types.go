// Package activity triggers workflows and delivers them: the trigger
// endpoints, the durable job queue in SQLite and the worker that runs it, and
// the activity records (notifications, jobs, execution details) that explain
// what happened (spec §2.12, §4.10, §4.11; contract §7–§8).
package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/platform"
)

// Workflows is what activity needs from the workflows domain.
type Workflows interface {
	// TriggerWorkflowJSON returns the workflow whose workflowId is given, as
	// the spec §2.14 response JSON, or platform.ErrNotFound.
	TriggerWorkflowJSON(ctx context.Context, environmentID, workflowID string) (json.RawMessage, error)
	// Triggered records that the workflow (by _id) was triggered at at.
	Triggered(ctx context.Context, environmentID, id string, at time.Time) error
}

// Subscribers is what activity needs from the subscribers domain.
type Subscribers interface {
	// SubscribersBySubscriberIDJSON returns spec §2.1 subscribers keyed by
	// subscriberId; subscriberIds not found are absent.
	SubscribersBySubscriberIDJSON(ctx context.Context, environmentID string, subscriberIDs []string) (map[string]json.RawMessage, error)
	// SubscribersJSON returns spec §2.1 subscribers keyed by their database _id.
	SubscribersJSON(ctx context.Context, environmentID string, ids []string) (map[string]json.RawMessage, error)
	// UpsertSubscribersJSON creates or updates subscribers from POST
	// /v1/subscribers bodies and returns each as it stands after its write.
	// Every body is checked before any is written: a bad one is a 422 with
	// its fields under paths[i], and nothing is written.
	UpsertSubscribersJSON(ctx context.Context, tenant platform.Tenant, bodies []json.RawMessage, paths []string) ([]json.RawMessage, error)
	// SubscribersMatching returns the database _ids of the environment's
	// subscribers with one of subscriberIDs, one of emails, or an email
	// containing search in any case or a subscriberId equal to it.
	SubscribersMatching(ctx context.Context, environmentID string, subscriberIDs, emails []string, search string) ([]string, error)
	// SubscribersAfterJSON returns up to limit spec §2.1 subscribers whose
	// subscriberId is greater than after, in subscriberId order.
	SubscribersAfterJSON(ctx context.Context, environmentID, after string, limit int) ([]json.RawMessage, error)
}

// Messenger renders and delivers one channel step (the messaging domain).
// DeliverJSON is idempotent per jobId, which is what makes a retried or
// reclaimed job send once.
type Messenger interface {
	DeliverJSON(ctx context.Context, delivery json.RawMessage) (json.RawMessage, error)
}

// TxMessenger is a Messenger that can leave storing a delivery to the
// caller: DeliverInTxJSON answers like DeliverJSON and may return a write
// (for an in_app step, the message itself) that the worker runs in the
// transaction recording the job's result. messaging.Store implements it.
type TxMessenger interface {
	Messenger
	DeliverInTxJSON(ctx context.Context, delivery json.RawMessage) (json.RawMessage, func(context.Context, *sql.Tx) error, error)
}

// Job statuses (contract §8).
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

// Execution detail statuses and sources (spec §2.12).
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
// reports the one it used (contract §9: every job has a providerId).
var defaultProviders = map[string]string{
	"in_app": "service",
	"email":  "service-email",
	"sms":    "service-sms",
	"chat":   "service",
	"push":   "push-webhook",
}

// workflowDoc is the part of the spec §2.14 workflow a trigger reads.
type workflowDoc struct {
	ID              string          `json:"_id"`
	WorkflowID      string          `json:"workflowId"`
	Name            string          `json:"name"`
	Active          *bool           `json:"active"`
	ValidatePayload bool            `json:"validatePayload"`
	PayloadSchema   json.RawMessage `json:"payloadSchema"`
	Preferences     json.RawMessage `json:"preferences"`
	Severity        string          `json:"severity"`
	Tags            []string        `json:"tags"`
	Origin          string          `json:"origin"`
	Steps           []workflowStep  `json:"steps"`
}

// workflowStep is one step of a workflowDoc.
type workflowStep struct {
	ID       string          `json:"_id"`
	StepID   string          `json:"stepId"`
	Type     string          `json:"type"`
	Name     string          `json:"name"`
	Active   *bool           `json:"active"`
	Filters  json.RawMessage `json:"filters"`
	Controls struct {
		Values json.RawMessage `json:"values"`
	} `json:"controls"`
	ControlValues json.RawMessage `json:"controlValues"`
}

// values returns the step's control values, from controls.values or the
// older controlValues, as an object.
func (s workflowStep) values() json.RawMessage {
	for _, v := range []json.RawMessage{s.Controls.Values, s.ControlValues} {
		if isObject(v) {
			return v
		}
	}
	return json.RawMessage(`{}`)
}

// preferencesDoc is the workflow preferences object of contract §9.
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
// flag is preferences.default.all.readOnly (contract §9 gives the shape;
// platform-behavior's worker pipeline reads critical from the preferences).
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

// parsedWorkflow is a workflow as a trigger reads it, with the template
// summary of the notifications it creates.
type parsedWorkflow struct {
	wf       workflowDoc
	template json.RawMessage
	chain    []chainStep
	critical bool // the workflow's preferences make it critical
}

func parseWorkflow(raw []byte) (parsedWorkflow, error) {
	var p parsedWorkflow
	if err := json.Unmarshal(raw, &p.wf); err != nil {
		return p, err
	}
	p.template = templateSummary(p.wf)
	p.chain = chainSteps(p.wf)
	var prefs preferencesDoc
	json.Unmarshal(p.wf.Preferences, &prefs)
	p.critical = prefs.critical()
	return p, nil
}

package activity

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/platform"
)

// inlineLease is how long the lease lasts on a job the trigger runs itself.
// The job is written under it and settled in the same transaction, so it
// only ever shows if that transaction's settlement failed to apply.
const inlineLease = time.Minute

// runFirst runs each recipient's first step in the trigger itself when it
// is an in_app step, and leaves the result for the trigger's transaction to
// record. An in-app delivery is a stored message, with no provider to wait
// for, so the trigger can afford it; and recorded with the notification, it
// saves the claim, the two reads and the settlement of a queued job, and
// the message is in the feed when the trigger is answered. The worker runs
// every other first step, and one that could not run here (an error
// reading what it needs), exactly as before: the same runner decides both.
//
// Only a messenger that leaves storing the message to the caller's
// transaction (TxMessenger) qualifies: any other would store the message
// before the notification it belongs to is committed.
func (t *triggerer) runFirst(ctx context.Context, p *plan) {
	if t.run == nil || len(p.steps) == 0 || p.steps[0].Type != "in_app" {
		return
	}
	if _, ok := t.run.messenger.(TxMessenger); !ok {
		return
	}
	n := p.notificationContext()
	for i := range p.recipients {
		rc := &p.recipients[i]
		row := &rc.jobs[1]
		j := &job{ID: row.id, EnvironmentID: p.tenant.EnvironmentID, OrganizationID: p.tenant.OrganizationID,
			NotificationID: rc.nid, TransactionID: p.transactionID, SubscriberID: rc.id, TemplateID: p.wf.ID,
			Position: row.position, Type: row.step.Type, StepID: row.step.StepID, Step: row.snapshot, Controls: row.values,
			ProviderID: row.provider, Attempts: 1, Lease: platform.NewIDAt(rc.at), CreatedAt: platform.FormatTime(rc.at)}
		doc := rc.doc
		wr, err := t.run.runStep(ctx, j, n, func(context.Context) (json.RawMessage, error) { return doc, nil })
		if err != nil {
			continue // queued for the worker, which runs it as any other
		}
		row.lease, rc.first = j.Lease, wr
	}
}

// notificationContext is what the worker would read back from the
// notification the plan writes.
func (p *plan) notificationContext() notificationCtx {
	channels, _ := json.Marshal(p.channels)
	tags, _ := json.Marshal(nonNilStrings(p.wf.Tags))
	return notificationCtx{TemplateID: p.wf.ID, WorkflowID: p.wf.WorkflowID, Payload: p.payload, Overrides: p.overrides,
		Tags: tags, Preferences: p.preferences(), Actor: p.actor, Channels: string(channels), Critical: p.critical}
}

// preferences is the workflow's preferences object, {} when it has none.
func (p *plan) preferences() json.RawMessage {
	if isObject(p.wf.Preferences) {
		return p.wf.Preferences
	}
	return json.RawMessage(`{}`)
}

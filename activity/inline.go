package activity

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// runFirst runs each recipient's first step in the trigger itself when it
// is an in_app step, and leaves the result for the trigger's transaction to
// record. An in-app delivery is a stored message, with no provider to wait
// for, so the trigger can afford it; and recorded with the notification, it
// saves the claim, the two reads and the settlement of a queued job, and
// the message is in the feed when the trigger is answered. The worker runs
// every other first step, and one that could not run here (an error
// reading what it needs), as any other: the same runner decides both.
//
// The job is written once, in the state its result leaves it, and so are
// the jobs after it (settleFirst): where the worker inserts a job, claims,
// updates it and releases the next, the trigger inserts the final rows.
//
// messaging leaves storing an in-app message to the caller's transaction
// (Messenger), so the message is never stored before the notification it
// belongs to is committed.
//
// A step normally runs here in tens of microseconds, but a template can take
// up to messaging's render limit: once the request has run first steps
// until the time given, or its client has gone, the remaining recipients'
// first steps are left to the worker, so a trigger for 100 recipients (or a
// bulk of 100 such triggers) is not held for minutes.
func (t *triggerer) runFirst(ctx context.Context, p *plan, until time.Time) {
	if t.run == nil || len(p.wf.Steps) == 0 || p.wf.Steps[0].Type != "in_app" {
		return
	}
	n := p.notificationContext()
	for i := range p.recipients {
		if ctx.Err() != nil || time.Now().After(until) {
			return
		}
		rc := &p.recipients[i]
		row := &rc.jobs[0]
		var result *settlement
		j := &job{ID: row.id, EnvironmentID: p.tenant.EnvironmentID, OrganizationID: p.tenant.OrganizationID,
			NotificationID: rc.nid, TransactionID: p.transactionID, SubscriberID: rc.id, TemplateID: p.wf.ID,
			Position: row.position, Type: row.step.Type, StepID: row.step.StepID, Step: row.snapshot, Controls: row.values,
			ProviderID: row.provider, Attempts: 1, CreatedAt: sqldb.FormatTime(rc.at),
			keep: func(st settlement) { result = &st }}
		sub := rc.sub
		wr, err := t.run.runStep(ctx, j, n, func(context.Context) (*subscribers.Subscriber, error) { return sub, nil })
		if err != nil || result == nil {
			// An error, or a result that is not a settlement: the job
			// stays queued, and the worker runs it as any other.
			continue
		}
		rc.first, rc.later = wr, rc.settleFirst(*result)
	}
}

// settleFirst applies the result of the first step, which the trigger ran,
// to the planned chain as the worker's settlement would (settleTx, endRest):
// the step's job takes its final state, and the jobs after it are released,
// canceled or skipped. It returns the details the result records, in the
// order the worker writes them.
func (r *recipient) settleFirst(st settlement) []detailRow {
	first, rest := &r.jobs[0], r.jobs[1:]
	first.status, first.stage, first.attempts, first.deliveredBy = st.status, st.stage, 1, st.providerID
	first.runAt = nil
	if !st.runAt.IsZero() {
		first.runAt = sqldb.FormatTime(st.runAt)
	}
	if st.digest != nil {
		first.digest = string(st.digest)
	}
	provider := firstNonEmpty(st.providerID, first.provider)
	details := make([]detailRow, 0, len(st.details)+len(rest))
	for _, d := range st.details {
		details = append(details, detailRow{jobID: first.id, providerID: provider, detail: d})
	}
	switch st.then {
	case thenRelease:
		if len(rest) > 0 {
			rest[0].status, rest[0].runAt = statusQueued, sqldb.FormatTime(r.at)
		}
	case thenCancel, thenSkip:
		ended := statusCanceled
		if st.then == thenSkip {
			ended = statusSkipped
		}
		for i := range rest {
			rest[i].status, rest[i].runAt = ended, nil
			details = append(details, detailRow{jobID: rest[i].id, providerID: rest[i].provider,
				detail: endedDetail(st.thenDetail)})
		}
	}
	return details
}

// notificationContext is what the worker would read back from the
// notification the plan writes.
func (p *plan) notificationContext() notificationCtx {
	channels, _ := json.Marshal(p.channels)
	tags, _ := json.Marshal(nonNilStrings(p.wf.Tags))
	return notificationCtx{TemplateID: p.wf.ID, WorkflowID: p.wf.WorkflowID, Payload: p.payload, Overrides: p.overrides,
		Tags: tags, Preferences: p.preferences, Actor: p.actor, Channels: string(channels), Critical: p.critical,
		ContextKeys: p.contextKeys}
}

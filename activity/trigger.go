package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// This file runs a trigger, in the order trigger calls them: prepare (the
// workflow and the payload), resolve (the actor and the recipients, through
// subscribers), planChain (plan.go), then the write. trigger_request.go
// reads the request.

// triggerer turns trigger requests into queued work.
type triggerer struct {
	store          *Store
	workflows      Workflows
	subscribers    Subscribers
	topics         Topics   // nil when subscribers serves no topics
	contexts       Contexts // nil when subscribers keeps no contexts
	run            *runner  // the worker's, for running first in-app steps; nil runs none
	workflowParses parsedWorkflows
}

// prepare reads the workflow and checks the payload. A nil plan with a
// result means the trigger ends there (inactive, no steps).
func (t *triggerer) prepare(ctx context.Context, tenant platform.Tenant, req triggerRequest) (*plan, *triggerResult, error) {
	txID, generated := req.TransactionID, req.TransactionID == ""
	if generated {
		txID = newTransactionID()
	}
	wf, err := t.workflows.TriggerWorkflow(ctx, tenant.EnvironmentID, req.Name)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, nil, &platform.Error{
			Status:  http.StatusUnprocessableEntity,
			Message: "workflow_not_found",
			Fields: map[string]platform.FieldError{"name": {
				Messages: []string{fmt.Sprintf("workflow %q was not found", req.Name)}, Value: req.Name}},
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find workflow: %w", err)
	}
	parsed := t.workflowParses.get(wf)
	payload, files := splitAttachments(req.Payload)
	if isNull(payload) {
		payload = json.RawMessage(`{}`)
	}
	if wf.ValidatePayload && isObject(wf.PayloadSchema) {
		payload = withDefaults(wf.PayloadSchema, payload)
		if err := validatePayload(wf.PayloadSchema, payload); err != nil {
			return nil, nil, err
		}
	}
	if !wf.Active {
		return nil, &triggerResult{Acknowledged: true, Status: triggerNotActive, TransactionID: txID}, nil
	}
	p := &plan{tenant: tenant, transactionID: txID, generated: generated, wf: wf, payload: payload, preferences: parsed.preferences}
	if len(wf.Steps) == 0 {
		return nil, &triggerResult{Acknowledged: true, Status: triggerNoActiveSteps, TransactionID: txID}, nil
	}
	if p.attachments, err = t.attachments(ctx, files); err != nil {
		return nil, nil, err
	}
	p.overrides = req.Overrides
	if isNull(p.overrides) {
		p.overrides = json.RawMessage(`{}`)
	}
	var ov struct {
		Severity string `json:"severity"`
	}
	if !isNull(req.Overrides) {
		json.Unmarshal(p.overrides, &ov)
	}
	p.severity = firstNonEmpty(ov.Severity, wf.Severity, "none")
	p.critical = wf.Preferences.Default.All.ReadOnly // docs/api.md, "What strict clients check"
	p.actor = noActor
	refs, err := contextRefs(req.Context, req.Tenant)
	if err != nil {
		return nil, nil, platform.InvalidField("context", nil, "%s", err.Error())
	}
	if len(refs) > 0 && t.contexts != nil {
		if err := t.contexts.EnsureContexts(ctx, tenant, refs); err != nil {
			return nil, nil, err
		}
	}
	p.contextKeys = subscribers.ContextKeys(refs)
	p.template, p.chain = parsed.template, parsed.chain
	p.snapshots, p.templateColumn, p.preferencesColumn = parsed.snapshots, parsed.templateColumn, parsed.preferencesColumn
	for _, s := range wf.Steps {
		if !slices.Contains(p.channels, s.Type) {
			p.channels = append(p.channels, s.Type)
		}
	}
	return p, nil, nil
}

// find finds the subscribers that ns name by subscriberId, in one read, and
// sets the body that creates or updates each of the others: its object, or
// a subscriberId the environment does not know yet, which is created, as
// the reference platform does.
func (t *triggerer) find(ctx context.Context, tenant platform.Tenant, ns []*named) error {
	var ids []string
	for _, n := range ns {
		if n.ref.object == nil {
			ids = append(ids, n.ref.subscriberID)
		}
	}
	var found map[string]subscribers.Subscriber
	if len(ids) > 0 {
		var err error
		if found, err = t.subscribers.SubscribersBySubscriberID(ctx, tenant.EnvironmentID, ids); err != nil {
			return err
		}
	}
	for _, n := range ns {
		if n.ref.object != nil {
			n.body = n.ref.object
			continue
		}
		if sub, ok := found[n.ref.subscriberID]; ok {
			n.sub = &sub
			continue
		}
		n.body, _ = json.Marshal(map[string]string{"subscriberId": n.ref.subscriberID})
	}
	return nil
}

// have finds every subscriber in ns and upserts those that need it, all in
// one call that checks every body before it writes any, so a trigger
// refused for one of them changes none.
func (t *triggerer) have(ctx context.Context, tenant platform.Tenant, ns []*named) error {
	if err := t.find(ctx, tenant, ns); err != nil {
		return err
	}
	var writes []*named
	var bodies []json.RawMessage
	var paths []string
	for _, n := range ns {
		if n.body != nil {
			writes = append(writes, n)
			bodies = append(bodies, n.body)
			paths = append(paths, n.path)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	subs, err := t.subscribers.UpsertSubscribers(ctx, tenant, bodies, paths)
	if err != nil {
		return err
	}
	// One entry may have found a subscriber that another (the actor, say)
	// then updated: every entry takes the subscriber as it now is.
	latest := map[string]*subscribers.Subscriber{}
	for i, n := range writes {
		latest[n.ref.subscriberID] = &subs[i]
	}
	for _, n := range ns {
		if sub, ok := latest[n.ref.subscriberID]; ok {
			n.sub = sub
		}
	}
	return nil
}

// resolveActor has the actor of a trigger that names no recipients (a
// broadcast), and returns it as actorJSON does.
func (t *triggerer) resolveActor(ctx context.Context, tenant platform.Tenant, raw json.RawMessage) (json.RawMessage, error) {
	n := actorRef(raw)
	if n == nil {
		return noActor, nil
	}
	if err := t.have(ctx, tenant, []*named{n}); err != nil {
		return nil, err
	}
	return actorJSON(n.sub)
}

// resolve has the actor and every recipient of `to` (have), and returns the
// actor and the recipients, each named twice counted once.
func (t *triggerer) resolve(ctx context.Context, tenant platform.Tenant, req triggerRequest) (json.RawMessage, []recipient, error) {
	refs, err := parseRecipients(req.To)
	if err != nil {
		return nil, nil, platform.InvalidField("to", nil, "%s", err.Error())
	}
	var all, to []*named
	actor := actorRef(req.Actor)
	if actor != nil {
		all = append(all, actor)
	}
	seen := map[string]bool{}
	for i, ref := range refs {
		if !seen[ref.subscriberID] {
			seen[ref.subscriberID] = true
			to = append(to, &named{ref: ref, path: fmt.Sprintf("to.%d", i)})
		}
	}
	if err := t.have(ctx, tenant, append(all, to...)); err != nil {
		return nil, nil, err
	}
	actorDoc := noActor
	if actor != nil {
		if actorDoc, err = actorJSON(actor.sub); err != nil {
			return nil, nil, err
		}
	}
	out := make([]recipient, 0, len(to))
	for _, n := range to {
		r := newRecipient(n.sub)
		if n.ref.object != nil {
			r.to, _ = withoutChannels(n.ref.object)
		}
		out = append(out, r)
	}
	return actorDoc, out, nil
}

// inlineBudget is how long one trigger request (a bulk request's events
// together) may spend running first in-app steps itself (runFirst).
const inlineBudget = time.Second

// accept runs one trigger up to its write: prepare, resolve, plan. It runs
// first in-app steps itself until inlineUntil. A nil plan with a result
// means the trigger ends there, with nothing to write.
func (t *triggerer) accept(ctx context.Context, tenant platform.Tenant, req triggerRequest, inlineUntil time.Time) (*plan, *triggerResult, error) {
	p, done, err := t.prepare(ctx, tenant, req)
	if err != nil || done != nil {
		return nil, done, err
	}
	return t.acceptPrepared(ctx, p, req, inlineUntil)
}

// acceptPrepared is accept past prepare, which made p of req.
func (t *triggerer) acceptPrepared(ctx context.Context, p *plan, req triggerRequest, inlineUntil time.Time) (*plan, *triggerResult, error) {
	tenant := p.tenant
	if err := t.refuseUsed(ctx, tenant, req.TransactionID); err != nil {
		return nil, nil, err
	}
	var err error
	if p.actor, p.recipients, err = t.resolve(ctx, tenant, req); err != nil {
		return nil, nil, err
	}
	if err := t.checkTriggerStorage(ctx, p, req); err != nil {
		return nil, nil, err
	}
	now := t.store.now()
	// Before the write, so that a failure here leaves the trigger
	// unaccepted rather than accepted and answered with an error.
	if err := t.workflows.Triggered(ctx, tenant.EnvironmentID, p.wf.ID, now); err != nil {
		return nil, nil, err
	}
	for i := range p.recipients {
		p.planChain(&p.recipients[i], now)
	}
	t.runFirst(ctx, p, inlineUntil)
	return p, &triggerResult{Acknowledged: true, Status: triggerProcessed, TransactionID: p.transactionID}, nil
}

// trigger runs one trigger request end to end. Its answer for an
// Idempotency-Key is recorded with its write, so that a crash after the
// commit cannot let a retry trigger it again.
func (t *triggerer) trigger(ctx context.Context, tenant platform.Tenant, req triggerRequest, inlineUntil time.Time) (*triggerResult, error) {
	p, res, err := t.accept(ctx, tenant, req, inlineUntil)
	if err != nil || p == nil {
		return res, err
	}
	if names, _ := parseTopics(req.To); len(names) > 0 {
		return t.triggerTopics(ctx, p, req, res)
	}
	if p.answer, err = platform.IdempotentAnswer(ctx, http.StatusCreated, res); err != nil {
		return nil, err
	}
	if err := t.store.insertTrigger(ctx, p, true); err != nil {
		return nil, err
	}
	return res, nil
}

// refuseUsed answers a conflict for a transactionId the environment used
// before, so that a reused one is refused before any subscriber is upserted
// or the workflow is marked triggered; the insert's own claim stays the
// authority. An id generated here ("") is fresh and needs no look-up.
func (t *triggerer) refuseUsed(ctx context.Context, tenant platform.Tenant, transactionID string) error {
	if transactionID == "" {
		return nil
	}
	used, err := t.store.transactionUsed(ctx, tenant.EnvironmentID, transactionID)
	if err != nil {
		return err
	}
	if used {
		return transactionConflict(transactionID)
	}
	return nil
}

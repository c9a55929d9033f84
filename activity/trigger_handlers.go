package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/herald-notify/herald/platform"
)

// decodeTrigger decodes a trigger-endpoint body. A 400 there is written in the
// PAYLOAD_VALIDATION_ERROR shape (docs/api.md, "What strict clients check"),
// as the reference's pipe does.
func decodeTrigger[T any](r *http.Request) (T, error) {
	v, err := platform.Decode[T](r)
	var e *platform.Error
	if errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Extra == nil {
		e.Extra = map[string]any{"type": payloadValidationType,
			"errors": []payloadError{{Field: "body", Message: e.Message}}}
	}
	return v, err
}

// handleTrigger serves POST /v1/events/trigger.
func handleTrigger(t *triggerer) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeTrigger[triggerRequest](r)
		if err != nil {
			return err
		}
		res, err := t.trigger(r.Context(), platform.TenantFrom(r.Context()), req, time.Now().Add(inlineBudget))
		if err != nil {
			return err
		}
		t.store.noteTrigger(res)
		return platform.JSON(w, http.StatusCreated, res)
	})
}

// bulkRequest is the body of POST /v1/events/trigger/bulk.
type bulkRequest struct {
	Events []triggerRequest `json:"events" validate:"required,min=1,max=100,dive"`
}

// Valid runs each event's own checks, keyed by its place in the array.
// The events' files share one limit.
func (b bulkRequest) Valid(ctx context.Context) map[string]string {
	problems := platform.ValidEach(ctx, "events", b.Events)
	var total int64
	for _, ev := range b.Events {
		_, raw := splitAttachments(ev.Payload)
		files, _ := readAttachments(ctx, raw)
		for _, f := range files {
			total += int64(len(f.File))
		}
	}
	if limit := platform.AttachmentLimit(ctx); total > limit {
		problems["events"] = overLimit(total, limit) + ", all events together"
	}
	for i, ev := range b.Events {
		// A topic fans out in batches of its own transactions, which a bulk
		// request's one transaction cannot hold.
		if topics, _ := parseTopics(ev.To); len(topics) > 0 {
			problems[fmt.Sprintf("events.%d.to", i)] = "topics are triggered through POST /v1/events/trigger"
		}
	}
	return problems
}

// handleTriggerBulk serves POST /v1/events/trigger/bulk: each event is
// triggered on its own; one that a client error stops answers status "error"
// with the reason, and the others still run. The accepted events are
// written in one transaction with the answer for an Idempotency-Key, so a
// crash leaves all of them written and the answer kept, or none. What the
// events would store together is checked first: past the request's
// storage limit, the whole request is refused and nothing is stored.
func handleTriggerBulk(t *triggerer) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeTrigger[bulkRequest](r)
		if err != nil {
			return err
		}
		ctx := withAttachmentBudget(r.Context())
		tenant := platform.TenantFrom(ctx)
		type prepared struct {
			plan *plan
			done *triggerResult
			err  error
		}
		// Each event is prepared (read, never written) before any is
		// accepted, which may create subscribers and mark the workflow
		// triggered.
		preps := make([]prepared, len(req.Events))
		plans := make([]*plan, len(req.Events))
		named := map[string]bool{}
		for i, ev := range req.Events {
			p, done, err := t.prepare(ctx, tenant, ev)
			preps[i] = prepared{p, done, err}
			// A transactionId named again is refused below unless the
			// event that named it first is: counted once.
			if ev.TransactionID == "" || !named[ev.TransactionID] {
				plans[i] = p
			}
			named[ev.TransactionID] = true
		}
		if err := t.checkBulkStorage(ctx, req.Events, plans); err != nil {
			return err
		}
		inlineUntil := time.Now().Add(inlineBudget) // shared by the events
		out := make([]*triggerResult, len(req.Events))
		plans = plans[:0]
		var placed []int // the event of each plan
		claimed := map[string]bool{}
		for i, ev := range req.Events {
			var p *plan
			var res *triggerResult
			switch prep := preps[i]; {
			case claimed[ev.TransactionID]: // an earlier event of this request has it
				err = transactionConflict(ev.TransactionID)
			case prep.plan == nil:
				res, err = prep.done, prep.err
			default:
				p, res, err = t.acceptPrepared(ctx, prep.plan, ev, inlineUntil)
			}
			if out[i], err = bulkResult(ev.TransactionID, res, err); err != nil {
				return err
			}
			if p != nil {
				claimed[p.transactionID] = true
				plans, placed = append(plans, p), append(placed, i)
			}
		}
		if err := writeBulk(ctx, t.store, plans, placed, out); err != nil {
			return err
		}
		for _, res := range out {
			t.store.noteTrigger(res)
		}
		return platform.JSON(w, http.StatusCreated, out)
	})
}

// bulkResult is an event's answer: its result, or the client error that
// stopped it, under the transactionId the event named. Any other error
// stops the whole request.
func bulkResult(transactionID string, res *triggerResult, err error) (*triggerResult, error) {
	var e *platform.Error
	switch {
	case errors.As(err, &e):
		return &triggerResult{Acknowledged: false, Status: "error", TransactionID: transactionID, Error: []string{e.Message}}, nil
	case err != nil:
		return nil, err
	}
	return res, nil
}

// writeBulk writes a bulk request's accepted events, with out as its answer,
// in one transaction. If another request took one of their transactionIds
// meanwhile, each is written on its own instead, and a refused one's answer
// in out becomes its error.
func writeBulk(ctx context.Context, s *Store, plans []*plan, placed []int, out []*triggerResult) error {
	if len(plans) == 0 {
		return nil
	}
	last := plans[len(plans)-1]
	var err error
	if last.answer, err = platform.IdempotentAnswer(ctx, http.StatusCreated, out); err != nil {
		return err
	}
	var conflict *platform.Error
	err = s.insertTriggers(ctx, plans)
	if !errors.As(err, &conflict) || conflict.Status != http.StatusConflict {
		return err
	}
	last.answer = nil // out may change: the middleware records it
	for i, p := range plans {
		err := s.insertTrigger(ctx, p, true)
		ev := placed[i]
		if out[ev], err = bulkResult(p.transactionID, out[ev], err); err != nil {
			return err
		}
	}
	return nil
}

// broadcastRequest is the body of POST /v1/events/trigger/broadcast.
type broadcastRequest struct {
	Name          string          `json:"name" validate:"required"`
	Payload       json.RawMessage `json:"payload"`
	Overrides     json.RawMessage `json:"overrides"`
	TransactionID string          `json:"transactionId" validate:"max=255"`
	Actor         json.RawMessage `json:"actor"`
	Tenant        json.RawMessage `json:"tenant"`
	Context       json.RawMessage `json:"context"`
}

// trigger returns the broadcast as a trigger request without recipients.
func (b broadcastRequest) trigger() triggerRequest {
	return triggerRequest{Name: b.Name, To: json.RawMessage(`"-"`), Payload: b.Payload, Overrides: b.Overrides,
		TransactionID: b.TransactionID, Actor: b.Actor, Tenant: b.Tenant, Context: b.Context}
}

// Valid checks the broadcast body as a trigger's.
func (b broadcastRequest) Valid(ctx context.Context) map[string]string {
	return b.trigger().Valid(ctx)
}

// handleTriggerBroadcast serves POST /v1/events/trigger/broadcast: the
// workflow for every subscriber of the environment, in batches of
// Store.broadcastBatch, each batch one transaction (the first also claims
// the transactionId and records the broadcast, so that a broadcast cut short
// goes on at the next start: fanOut). It answers 200 (docs/api.md,
// "What strict clients check") once every batch is written.
func handleTriggerBroadcast(t *triggerer) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeTrigger[broadcastRequest](r)
		if err != nil {
			return err
		}
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		p, done, err := t.prepare(ctx, tenant, req.trigger())
		if err != nil {
			return err
		}
		if done != nil {
			return platform.JSON(w, http.StatusOK, done)
		}
		if err := t.refuseUsed(ctx, tenant, req.TransactionID); err != nil {
			return err
		}
		if p.actor, err = t.resolveActor(ctx, tenant, req.Actor); err != nil {
			return err
		}
		if err := t.checkBroadcastStorage(ctx, p); err != nil {
			return err
		}
		if err := t.workflows.Triggered(ctx, tenant.EnvironmentID, p.wf.ID, t.store.now()); err != nil {
			return err
		}
		// A resumed broadcast rebuilds its plan from this body, under the
		// same transactionId, generated or not.
		req.TransactionID = p.transactionID
		req.Actor, _ = withoutChannels(req.Actor)      // a resumed broadcast keeps the actor resolved now
		req.Payload, _ = splitAttachments(req.Payload) // a resumed broadcast reads its files from its notifications
		body, err := json.Marshal(req)
		if err != nil {
			return err
		}
		// Once the first batch commits, the broadcast is certain to finish,
		// here or at the next start: its answer for an Idempotency-Key is
		// recorded with that batch.
		res := triggerResult{Acknowledged: true, Status: triggerProcessed, TransactionID: p.transactionID}
		if p.answer, err = platform.IdempotentAnswer(ctx, http.StatusOK, res); err != nil {
			return err
		}
		// Accepted: the fan-out no longer depends on the client, whose
		// hanging up would cancel ctx and cut it after any batch.
		err = t.fanOut(context.WithoutCancel(ctx), &broadcast{p: p, request: body})
		if err != nil && !errors.Is(err, errBroadcastStopped) { // canceled meanwhile: accepted all the same
			return err
		}
		t.store.noteTrigger(&res)
		return platform.JSON(w, http.StatusOK, res)
	})
}

// handleTriggerCancel serves DELETE /v1/events/trigger/{transactionId}: it
// cancels the transaction's jobs that have not run yet (pending, queued,
// delayed, digesting, merged into a digest that has not fired) and answers
// true, or false when there were none, as the reference platform does.
func handleTriggerCancel(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ok, err := s.cancelTransaction(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("transactionId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, ok)
	})
}

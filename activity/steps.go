package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// notificationCtx is what a job reads from its notification.
type notificationCtx struct {
	TemplateID  string
	WorkflowID  string
	Payload     json.RawMessage
	Overrides   json.RawMessage
	Tags        json.RawMessage
	Preferences json.RawMessage
	Actor       json.RawMessage
	Channels    string // the step types, as stored
	Critical    bool
	ContextKeys []string // the trigger's contexts, type:id
}

func (s *Store) notificationContext(ctx context.Context, id string) (notificationCtx, error) {
	var n notificationCtx
	var payload, overrides, tags, prefs, actor, contextKeys string
	err := s.db.QueryRow(ctx, `
		SELECT template_id, workflow_id, `+sqldb.ValueColumn("payload")+`, `+sqldb.ValueColumn("overrides")+`,
			tags, `+snapshotColumn("preferences", "preferences")+`, `+actorColumn+`, channels, critical, context_keys
		FROM notifications WHERE id = ?`, id).Scan(&n.TemplateID, &n.WorkflowID, &payload, &overrides, &tags, &prefs, &actor,
		&n.Channels, &n.Critical, &contextKeys)
	if err != nil {
		return n, fmt.Errorf("read notification %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(contextKeys), &n.ContextKeys); err != nil {
		return n, fmt.Errorf("read notification %s: context keys: %w", id, err)
	}
	n.Payload, n.Overrides, n.Tags = json.RawMessage(payload), json.RawMessage(overrides), json.RawMessage(tags)
	n.Preferences, n.Actor = json.RawMessage(prefs), json.RawMessage(actor)
	return n, nil
}

// digestVars returns steps.<stepId>.{events, eventCount} for every digest
// that ran before position in the notification's chain.
func (s *Store) digestVars(ctx context.Context, notificationID string, position int) (map[string]any, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT step_id, digest FROM jobs
		WHERE notification_id = ? AND type = 'digest' AND position < ? AND digest IS NOT NULL
		ORDER BY position`, notificationID, position)
	if err != nil {
		return nil, fmt.Errorf("read digest events: %w", err)
	}
	defer rows.Close()
	out := map[string]any{}
	for rows.Next() {
		var stepID, raw string
		if err := rows.Scan(&stepID, &raw); err != nil {
			return nil, err
		}
		var meta struct {
			Events []any `json:"events"`
		}
		json.Unmarshal([]byte(raw), &meta)
		if meta.Events == nil {
			continue
		}
		out[stepID] = map[string]any{"events": meta.Events, "eventCount": len(meta.Events)}
	}
	return out, rows.Err()
}

// jobStep is the part of a job's step snapshot the worker reads.
type jobStep struct {
	ID      string          `json:"_id"`
	Filters json.RawMessage `json:"filters"`
}

// parseJobStep reads a job's step snapshot; a snapshot that does not parse
// reads as a step with no filters.
func parseJobStep(raw []byte) (jobStep, error) {
	var step jobStep
	json.Unmarshal(raw, &step)
	return step, nil
}

// parseSkip reads the skip condition of a job's controls.
func parseSkip(raw []byte) (json.RawMessage, error) {
	var controls struct {
		Skip json.RawMessage `json:"skip"`
	}
	json.Unmarshal(raw, &controls)
	return controls.Skip, nil
}

// maxInterruptions is how many times Herald may stop or crash while a job
// is claimed before the job fails: one that brings Herald down each time it
// runs must still end.
const maxInterruptions = 5

// run executes one claimed job and returns the write that records its
// result. It returns the context's error, and no write, when the worker is
// stopped mid-run; an error leaves the job to its lease, which expires and
// lets it run again.
func (w *Worker) run(ctx context.Context, j *job) (write, error) {
	if j.Type == stepUnsnooze { // out of the step chain (snooze.go)
		return w.runUnsnooze(ctx, j)
	}
	if j.Interruptions >= maxInterruptions {
		return w.fail(j, []detail{{Status: detailFailed, Source: sourceInternal,
			Detail: fmt.Sprintf("Step failed: Herald stopped %d times while it ran", j.Interruptions)}})
	}
	if j.Type == stepTrigger {
		return w.store.settled(j, settlement{status: statusCompleted, then: thenRelease}), nil
	}
	n, err := w.store.notificationContext(ctx, j.NotificationID)
	if err != nil {
		return nil, err
	}
	switch {
	case j.Stage == stageDelaying:
		return w.store.settled(j, settlement{status: statusCompleted, then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: "Delay is finished", Source: sourceInternal}}}), nil
	case j.Stage == stageDigesting:
		return w.store.fireDigest(j, n.Payload), nil
	}
	return w.runStep(ctx, j, n, func(ctx context.Context) (*subscribers.Subscriber, error) {
		subs, err := w.subscribers.SubscribersByID(ctx, j.EnvironmentID, []string{j.SubscriberID})
		if sub, ok := subs[j.SubscriberID]; ok {
			return &sub, err
		}
		return nil, err
	})
}

// runStep runs a job's step for the first time or again (a retry): its
// conditions, then what its kind does. subscriber reads the subscriber (nil
// when it no longer exists), which is done only when a condition or a
// delivery needs it.
func (w *runner) runStep(ctx context.Context, j *job, n notificationCtx, subscriber func(context.Context) (*subscribers.Subscriber, error)) (write, error) {
	// Every job of a step carries the same snapshot and controls while its
	// workflow is unchanged (chain.go), so each is parsed once per step.
	key := j.TemplateID + "\x00" + j.StepID
	step, _ := w.steps.Get(key, j.Step, parseJobStep)
	var controls struct {
		Skip json.RawMessage
	}
	controls.Skip, _ = w.skips.Get(key, j.Controls, parseSkip)

	var sub *subscribers.Subscriber
	hasFilters := isArray(step.Filters) && string(step.Filters) != "[]"
	if channelSteps[j.Type] || hasFilters || isObject(controls.Skip) {
		var err error
		if sub, err = subscriber(ctx); err != nil {
			return nil, fmt.Errorf("read subscriber: %w", err)
		}
	}
	if hasFilters || isObject(controls.Skip) {
		if wr := w.conditions(j, step, controls.Skip, sub, n.Payload); wr != nil {
			return wr, nil
		}
	}

	switch j.Type {
	case stepDelay:
		var c delayConfig
		json.Unmarshal(j.Controls, &c)
		var payload map[string]any
		json.Unmarshal(n.Payload, &payload)
		until, err := c.until(w.store.now(), payload)
		if err != nil {
			return w.fail(j, []detail{{Status: detailFailed, Detail: "Invalid delay configuration: " + err.Error(), Source: sourcePayload}})
		}
		raw, _ := json.Marshal(map[string]string{"untilDate": sqldb.FormatTime(until)})
		details := []detail{{Status: detailPending, Detail: "Step delayed", Source: sourceInternal, Raw: raw}}
		until, ext, err := w.extendToSchedule(ctx, j, n, subscriber, until)
		if err != nil {
			return nil, err
		}
		if ext != nil {
			details = append(details, *ext)
		}
		return w.store.settled(j, settlement{status: statusDelayed, stage: stageDelaying, runAt: until, details: details}), nil
	case stepDigest:
		var c digestConfig
		json.Unmarshal(j.Controls, &c)
		until, err := c.until(w.store.now())
		if err != nil {
			return w.fail(j, []detail{{Status: detailFailed, Detail: "Invalid digest configuration: " + err.Error(), Source: sourcePayload}})
		}
		until, ext, err := w.extendToSchedule(ctx, j, n, subscriber, until)
		if err != nil {
			return nil, err
		}
		if ext != nil {
			return w.store.openDigest(j, c, until, n.Payload, nil, *ext), nil
		}
		return w.store.openDigest(j, c, until, n.Payload, nil), nil
	case stepThrottle:
		var c throttleConfig
		json.Unmarshal(j.Controls, &c)
		return w.store.throttle(j, c, nil), nil
	case stepCustom:
		return w.store.settled(j, settlement{status: statusCompleted, then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: "Custom step passed", Source: sourceInternal}}}), nil
	}
	if !channelSteps[j.Type] {
		return w.fail(j, []detail{{Status: detailFailed, Detail: fmt.Sprintf("Step type %q is not supported", j.Type), Source: sourceInternal}})
	}
	if sub == nil {
		return w.fail(j, []detail{{Status: detailFailed, Detail: "Subscriber not found", Source: sourceInternal}})
	}
	skip, schedule, err := w.preferenceSkip(ctx, j, n)
	if skip != nil || err != nil {
		return skip, err
	}
	if wait := w.scheduleWait(j, schedule, sub); wait != nil {
		return wait, nil
	}
	return w.deliver(ctx, j, step, n, sub)
}

// conditions evaluates a step's skip condition and filters against the
// subscriber and payload, and returns the write that ends the step when it
// does not run (skipped, filtered, or a condition that cannot be evaluated);
// nil when it runs.
func (w *runner) conditions(j *job, step jobStep, skip json.RawMessage, sub *subscribers.Subscriber, rawPayload json.RawMessage) write {
	var subMap, payload map[string]any
	if sub != nil {
		subMap = sub.Fields()
	}
	json.Unmarshal(rawPayload, &payload)
	data := map[string]any{"subscriber": subMap, "payload": payload}
	failed := func(err error) write {
		return w.failWith(j, "", []detail{{Status: detailFailed, Detail: "Processing step filter failed: " + err.Error(), Source: sourcePayload}})
	}
	if skipped, err := evalSkip(skip, data); err != nil {
		return failed(err)
	} else if skipped {
		return w.store.settled(j, settlement{status: statusSkipped, then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: "Step was skipped based on steps conditions", Source: sourceInternal}}})
	}
	if pass, err := passFilters(step.Filters, data); err != nil {
		return failed(err)
	} else if !pass {
		return w.store.settled(j, settlement{status: statusSkipped, then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: "Step was filtered based on steps filters", Source: sourceInternal}}})
	}
	return nil
}

// actor reads the subscriber a notification's actor names (actorJSON), as
// it now is, for the templates' actor.*: nil when the trigger named no
// actor or the subscriber is gone.
func (w *runner) actor(ctx context.Context, environmentID string, doc json.RawMessage) (*subscribers.Subscriber, error) {
	var a struct {
		SubscriberID string `json:"_subscriberId"`
	}
	if json.Unmarshal(doc, &a) != nil || a.SubscriberID == "" {
		return nil, nil
	}
	subs, err := w.subscribers.SubscribersByID(ctx, environmentID, []string{a.SubscriberID})
	if sub, ok := subs[a.SubscriberID]; ok {
		return &sub, err
	}
	return nil, err
}

// deliver hands a channel step to messaging and records the outcome. A
// retryable outcome or an error runs the job again after a backoff, up to
// MaxAttempts; then, or for a final error, the step fails.
func (w *runner) deliver(ctx context.Context, j *job, step jobStep, n notificationCtx, sub *subscribers.Subscriber) (write, error) {
	if j.Attempts > w.cfg.MaxAttempts {
		return w.fail(j, []detail{{Status: detailFailed, Source: sourceInternal,
			Detail: fmt.Sprintf("Step failed: all %d attempts were used", w.cfg.MaxAttempts)}})
	}
	steps := map[string]any{}
	if strings.Contains(n.Channels, `"digest"`) { // only a workflow with a digest has events to read
		var err error
		if steps, err = w.store.digestVars(ctx, j.NotificationID, j.Position); err != nil {
			return nil, err
		}
	}
	actor, err := w.actor(ctx, j.EnvironmentID, n.Actor)
	if err != nil {
		return nil, fmt.Errorf("read actor: %w", err)
	}
	var controls map[string]any
	json.Unmarshal(j.Controls, &controls)
	var tags []string
	json.Unmarshal(n.Tags, &tags)
	var files []messaging.Attachment
	if j.Type == "email" {
		if files, err = w.store.notificationAttachments(ctx, j.NotificationID); err != nil {
			return nil, err
		}
	}
	o, store, err := w.messenger.Deliver(ctx, &messaging.Delivery{
		JobID: j.ID, NotificationID: j.NotificationID, EnvironmentID: j.EnvironmentID,
		OrganizationID: j.OrganizationID, TransactionID: j.TransactionID, Channel: j.Type,
		StepID: j.StepID, StepDatabaseID: step.ID, WorkflowDatabaseID: n.TemplateID, WorkflowID: n.WorkflowID,
		Subscriber: *sub, Controls: controls, Steps: steps,
		Payload: n.Payload, Overrides: n.Overrides, Tags: tags, Actor: n.Actor, ActorSubscriber: actor, Attempt: j.Attempts,
		ContextKeys: n.ContextKeys, Attachments: files,
	})
	if ctx.Err() != nil {
		return nil, ctx.Err() // stopped mid-delivery: the lease expires and the job runs again
	}
	if err != nil {
		w.cfg.Logger.Warn("delivery could not be attempted", "job_id", j.ID, "error", err)
		return w.retryOrFail(j, "", []detail{{Status: detailFailed, Source: sourceInternal,
			Detail: "Delivery could not be attempted"}}), nil
	}
	details := detailsOf(o.Details, j.Attempts > 1)
	var settle write
	switch {
	case o.Status == "sent" || o.Status == "warning":
		settle = w.store.settled(j, settlement{status: statusCompleted, providerID: o.ProviderID, details: details, then: thenRelease})
	case o.Retryable:
		settle = w.retryAfter(j, o.ProviderID, details, time.Duration(o.RetryAfterMs)*time.Millisecond)
	default:
		settle = w.failWith(j, o.ProviderID, details)
	}
	if store == nil {
		return settle, nil
	}
	// The job's result first: it fails when the lease was lost, and then
	// the message is not stored either (the worker that holds the job
	// stores its own).
	return func(ctx context.Context, tx *sql.Tx) error {
		if err := settle(ctx, tx); err != nil {
			return err
		}
		if err := store(ctx, tx); err != nil {
			return fmt.Errorf("store message: %w", err)
		}
		return nil
	}, nil
}

// detailsOf turns the details of messaging's outcome into execution
// details of the job; a provider's reply is kept as its text.
func detailsOf(in []messaging.Detail, isRetry bool) []detail {
	out := make([]detail, len(in))
	for i, d := range in {
		out[i] = detail{Status: d.Status, Detail: d.Detail, Source: d.Source, ProviderID: d.ProviderID, IsRetry: isRetry}
		if d.Raw != nil {
			out[i].Raw, _ = json.Marshal(*d.Raw)
		}
	}
	return out
}

// retryOrFail schedules the next attempt, or fails the step after the last.
func (w *runner) retryOrFail(j *job, providerID string, details []detail) write {
	return w.retryAfter(j, providerID, details, 0)
}

// retryAfter is retryOrFail waiting at least wait, as a provider's
// Retry-After asks.
func (w *runner) retryAfter(j *job, providerID string, details []detail, wait time.Duration) write {
	for i := range details {
		details[i].IsRetry = j.Attempts > 1
	}
	if j.Attempts >= w.cfg.MaxAttempts {
		details = append(details, detail{Status: detailFailed, Source: sourceInternal, IsRetry: j.Attempts > 1,
			Detail: fmt.Sprintf("Step failed after %d attempts", j.Attempts)})
		return w.failWith(j, providerID, details)
	}
	at := w.store.now().Add(max(retryDelay(w.cfg.RetryBackoff, j.Attempts), wait))
	details = append(details, detail{Status: detailPending, Source: sourceInternal, IsRetry: j.Attempts > 1,
		Detail: fmt.Sprintf("Attempt %d of %d failed; retrying at %s", j.Attempts, w.cfg.MaxAttempts, sqldb.FormatTime(at))})
	return w.store.settled(j, settlement{status: statusQueued, runAt: at, providerID: providerID, details: details})
}

func (w *runner) fail(j *job, details []detail) (write, error) {
	return w.failWith(j, "", details), nil
}

// failWith marks the step failed and cancels the steps after it
// (docs/api.md, "Delivery").
func (w *runner) failWith(j *job, providerID string, details []detail) write {
	return w.store.settled(j, settlement{status: statusFailed, providerID: providerID, details: details, then: thenCancel,
		thenDetail: fmt.Sprintf("Step canceled because step %q failed", j.StepID)})
}

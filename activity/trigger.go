package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/herald-notify/herald/platform"
)

// maxRecipients is the most subscribers one trigger's `to` may name (contract §7).
const maxRecipients = 100

// Trigger statuses of the 201 answer (reference: packages/shared events.ts).
const (
	triggerProcessed     = "processed"
	triggerNotActive     = "trigger_not_active"
	triggerNoActiveSteps = "no_workflow_active_steps_defined"
)

// triggerRequest is the body of POST /v1/events/trigger and one event of the
// bulk body. `to`, payload and overrides stay raw: `to` has three shapes and
// the payload is handed on exactly as the client wrote it.
type triggerRequest struct {
	Name          string          `json:"name" validate:"required"`
	To            json.RawMessage `json:"to"`
	Payload       json.RawMessage `json:"payload"`
	Overrides     json.RawMessage `json:"overrides"`
	TransactionID string          `json:"transactionId" validate:"max=255"`
	Actor         json.RawMessage `json:"actor"`
	Tenant        json.RawMessage `json:"tenant"`
	Context       json.RawMessage `json:"context"`
}

// maxContextKeys is how many entries a trigger's context may have, as the
// reference allows.
const maxContextKeys = 5

// contextKeys turns a trigger's context, {"tenant": "acme"} or {"tenant":
// {"id": "acme", "data": {…}}}, into its sorted "type:id" keys.
func contextKeys(raw json.RawMessage) ([]string, error) {
	keys := []string{}
	if isNull(raw) {
		return keys, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("must be an object")
	}
	if len(m) > maxContextKeys {
		return nil, fmt.Errorf("must have at most %d entries", maxContextKeys)
	}
	for typ, v := range m {
		var id string
		if json.Unmarshal(v, &id) != nil {
			var obj struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(v, &obj) != nil || obj.ID == "" {
				return nil, fmt.Errorf("entry %q must be an id or an object with an id", typ)
			}
			id = obj.ID
		}
		if id == "" || typ == "" {
			return nil, fmt.Errorf("entry %q must name a type and an id", typ)
		}
		keys = append(keys, typ+":"+id)
	}
	sort.Strings(keys)
	return keys, nil
}

// Valid checks what the tags cannot: the shapes of to, payload and overrides.
func (r triggerRequest) Valid(ctx context.Context) map[string]string {
	problems := map[string]string{}
	if isNull(r.To) {
		problems["to"] = "is required"
	} else if _, err := parseRecipients(r.To); err != nil {
		problems["to"] = err.Error()
	} else if _, err := parseTopics(r.To); err != nil {
		problems["to"] = err.Error()
	}
	if !isNull(r.Payload) && !isObject(r.Payload) {
		problems["payload"] = "must be an object"
	}
	if !isNull(r.Overrides) && !isObject(r.Overrides) {
		problems["overrides"] = "must be an object"
	}
	var actorID string
	switch {
	case isNull(r.Actor) || isObject(r.Actor):
	case json.Unmarshal(r.Actor, &actorID) != nil:
		problems["actor"] = "must be a subscriberId or a subscriber object"
	case strings.TrimSpace(actorID) == "":
		problems["actor"] = "must not be an empty subscriberId"
	}
	if _, err := contextKeys(r.Context); err != nil {
		problems["context"] = err.Error()
	}
	var tenantID string
	if !isNull(r.Tenant) && !isObject(r.Tenant) && json.Unmarshal(r.Tenant, &tenantID) != nil {
		problems["tenant"] = "must be a tenant identifier or a tenant object"
	}
	return problems
}

// triggerResult is the 201 body of a trigger.
type triggerResult struct {
	Acknowledged  bool     `json:"acknowledged"`
	Status        string   `json:"status"`
	TransactionID string   `json:"transactionId"`
	Error         []string `json:"error,omitempty"`
}

// recipientRef is one entry of `to`: a subscriberId or a subscriber object.
type recipientRef struct {
	subscriberID string
	object       json.RawMessage // the subscriber body to upsert; nil for a bare id
}

// parseRecipients reads `to`: a subscriberId, a subscriber object, or an
// array of either, at most maxRecipients.
func parseRecipients(raw json.RawMessage) ([]recipientRef, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
	}
	if len(list) == 0 {
		return nil, errors.New("must name at least one subscriber")
	}
	if len(list) > maxRecipients {
		return nil, fmt.Errorf("must name at most %d subscribers", maxRecipients)
	}
	refs := make([]recipientRef, 0, len(list))
	for _, item := range list {
		var id string
		if json.Unmarshal(item, &id) == nil {
			if strings.TrimSpace(id) == "" {
				return nil, errors.New("must not contain an empty subscriberId")
			}
			refs = append(refs, recipientRef{subscriberID: id})
			continue
		}
		var obj struct {
			SubscriberID *string `json:"subscriberId"`
			Type         string  `json:"type"`
		}
		if json.Unmarshal(item, &obj) != nil {
			return nil, errors.New("must be a subscriberId, a subscriber object or an array of them")
		}
		if strings.EqualFold(obj.Type, "topic") {
			continue // a topic (parseTopics)
		}
		if obj.SubscriberID == nil || strings.TrimSpace(*obj.SubscriberID) == "" {
			return nil, errors.New("each subscriber object needs a subscriberId")
		}
		refs = append(refs, recipientRef{subscriberID: *obj.SubscriberID, object: item})
	}
	return refs, nil
}

// recipient is a resolved subscriber a notification is created for.
type recipient struct {
	id           string          // database _id
	subscriberID string          // the client's subscriberId
	snapshot     json.RawMessage // {_id, subscriberId, firstName, …}: the list's fallback
	to           json.RawMessage // what the trigger said, as an object
	doc          json.RawMessage // the whole subscriber (spec §2.1), for running the first step inline

	// Decided by planChain before the write.
	nid   string    // the notification's _id
	at    time.Time // when the notification was created
	jobs  []jobRow
	first write       // the rest of the first step's result (its message), when the trigger ran it (inline.go)
	later []detailRow // the details that result records, written after every "Step queued"

	topics []topicSummary // the trigger's topics that reached it; none for a direct recipient (topics.go)
}

// subscriberSummary is the part of a spec §2.1 subscriber activity keeps.
type subscriberSummary struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Email        *string `json:"email,omitempty"`
	Phone        *string `json:"phone,omitempty"`
}

// newRecipient reads a recipient from its subscriber document, as a bare
// subscriberId names it; a trigger that named it by an object sets to.
func newRecipient(doc []byte) (recipient, error) {
	var s subscriberSummary
	if err := json.Unmarshal(doc, &s); err != nil {
		return recipient{}, fmt.Errorf("read subscriber: %w", err)
	}
	snap, _ := json.Marshal(s)
	r := recipient{id: s.ID, subscriberID: s.SubscriberID, snapshot: snap, doc: doc}
	r.to, _ = json.Marshal(map[string]string{"subscriberId": s.SubscriberID})
	return r, nil
}

// triggerer turns trigger requests into queued work.
type triggerer struct {
	store          *Store
	workflows      Workflows
	subscribers    Subscribers
	topics         Topics  // nil when subscribers serves no topics
	run            *runner // the worker's, for running first in-app steps; nil runs none
	workflowParses platform.ParseCache[parsedWorkflow]
	// recipientParses keeps recipients read from subscriber documents: a
	// trigger's recipient is most often one triggered before, its document
	// unchanged since.
	recipientParses platform.ParseCache[recipient]
}

// plan is everything a trigger writes, decided before the write transaction.
type plan struct {
	tenant        platform.Tenant
	transactionID string
	wf            workflowDoc
	steps         []workflowStep // the active ones, in order
	payload       json.RawMessage
	overrides     json.RawMessage
	severity      string
	critical      bool
	actor         json.RawMessage
	contextKeys   []string
	template      json.RawMessage
	chain         []chainStep // the trigger step, then the active ones
	channels      []string
	recipients    []recipient

	// What a trigger's transaction writes besides its rows, each nil for
	// none: a broadcast batch's progress (broadcast.go), and the request's
	// answer for its Idempotency-Key (platform.IdempotentAnswer).
	progress write
	answer   write
}

// prepare reads the workflow and checks the payload. A nil plan with a
// result means the trigger ends there (inactive, no steps).
func (t *triggerer) prepare(ctx context.Context, tenant platform.Tenant, req triggerRequest) (*plan, *triggerResult, error) {
	txID := req.TransactionID
	if txID == "" {
		txID = newTransactionID()
	}
	raw, err := t.workflows.TriggerWorkflowJSON(ctx, tenant.EnvironmentID, req.Name)
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
	// Workflows answers with the same JSON until the workflow changes, and
	// parsing it was the costliest step of a trigger before the write.
	parsed, err := t.workflowParses.Get(tenant.EnvironmentID+"\x00"+req.Name, raw, parseWorkflow)
	if err != nil {
		return nil, nil, fmt.Errorf("read workflow %s: %w", req.Name, err)
	}
	wf := parsed.wf
	payload := req.Payload
	if isNull(payload) {
		payload = json.RawMessage(`{}`)
	}
	if wf.ValidatePayload && isObject(wf.PayloadSchema) {
		payload = withDefaults(wf.PayloadSchema, payload)
		if err := validatePayload(wf.PayloadSchema, payload); err != nil {
			return nil, nil, err
		}
	}
	if wf.Active != nil && !*wf.Active {
		return nil, &triggerResult{Acknowledged: true, Status: triggerNotActive, TransactionID: txID}, nil
	}
	p := &plan{tenant: tenant, transactionID: txID, wf: wf, payload: payload}
	for _, s := range wf.Steps {
		if s.Active == nil || *s.Active {
			p.steps = append(p.steps, s)
		}
	}
	if len(p.steps) == 0 {
		return nil, &triggerResult{Acknowledged: true, Status: triggerNoActiveSteps, TransactionID: txID}, nil
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
	p.critical = parsed.critical
	p.actor = noActor
	if p.contextKeys, err = contextKeys(req.Context); err != nil {
		return nil, nil, platform.InvalidField("context", nil, "%s", err.Error())
	}
	p.template, p.chain = parsed.template, parsed.chain
	for _, s := range p.steps {
		if !slices.Contains(p.channels, s.Type) {
			p.channels = append(p.channels, s.Type)
		}
	}
	return p, nil, nil
}

// noActor is the spec §2.9 actor of a trigger that names none.
var noActor = json.RawMessage(`{"type":"none","data":null}`)

// named is a subscriber a trigger names, as its actor or a recipient.
type named struct {
	ref  recipientRef
	path string          // where its problems are reported: "actor", "to.0"
	doc  json.RawMessage // the subscriber, once found or upserted
	body json.RawMessage // what to upsert: its object, or a new subscriberId
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
	var docs map[string]json.RawMessage
	if len(ids) > 0 {
		var err error
		if docs, err = t.subscribers.SubscribersBySubscriberIDJSON(ctx, tenant.EnvironmentID, ids); err != nil {
			return err
		}
	}
	for _, n := range ns {
		if n.ref.object != nil {
			n.body = n.ref.object
			continue
		}
		if doc, ok := docs[n.ref.subscriberID]; ok {
			n.doc = doc
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
	docs, err := t.subscribers.UpsertSubscribersJSON(ctx, tenant, bodies, paths)
	if err != nil {
		return err
	}
	// One entry may have found a subscriber that another (the actor, say)
	// then updated: every entry takes the subscriber as it now is.
	latest := map[string]json.RawMessage{}
	for i, n := range writes {
		latest[n.ref.subscriberID] = docs[i]
	}
	for _, n := range ns {
		if doc, ok := latest[n.ref.subscriberID]; ok {
			n.doc = doc
		}
	}
	return nil
}

// actorRef reads a trigger's actor, nil when it names none.
func actorRef(raw json.RawMessage) *named {
	if isNull(raw) {
		return nil
	}
	n := &named{ref: recipientRef{object: raw}, path: "actor"}
	if json.Unmarshal(raw, &n.ref.subscriberID) == nil {
		n.ref.object = nil
		return n
	}
	var obj struct {
		SubscriberID string `json:"subscriberId"`
	}
	json.Unmarshal(raw, &obj) // a wrong shape is refused by the upsert
	n.ref.subscriberID = obj.SubscriberID
	return n
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
	return actorJSON(n.doc)
}

// actorJSON is the spec §2.9 actor of a subscriber: a user, whose data is
// its avatar, which inboxes show beside the message (platform-behavior §7).
func actorJSON(doc json.RawMessage) (json.RawMessage, error) {
	var s struct {
		Avatar *string `json:"avatar"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, fmt.Errorf("read actor: %w", err)
	}
	return json.Marshal(struct {
		Type string  `json:"type"`
		Data *string `json:"data"`
	}{"user", s.Avatar})
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
		if actorDoc, err = actorJSON(actor.doc); err != nil {
			return nil, nil, err
		}
	}
	out := make([]recipient, 0, len(to))
	for _, n := range to {
		r, err := t.recipientParses.Get(tenant.EnvironmentID+"\x00"+n.ref.subscriberID, n.doc, newRecipient)
		if err != nil {
			return nil, nil, err
		}
		if n.ref.object != nil {
			r.to = n.ref.object
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
	if err := t.refuseUsed(ctx, tenant, req.TransactionID); err != nil {
		return nil, nil, err
	}
	if p.actor, p.recipients, err = t.resolve(ctx, tenant, req); err != nil {
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

// newTransactionID returns a UUID for a trigger that names no transactionId.
// It is a version 7 UUID, which begins with the time: the four indexes keyed
// by transactionId then grow at their end, where a random one would dirty a
// page anywhere in each index on every trigger, and every commit would
// write all of those pages.
func newTransactionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// templateSummary is the notification's template: {_id, name, origin, triggers}.
func templateSummary(wf workflowDoc) json.RawMessage {
	type variable struct {
		Name string `json:"name"`
	}
	vars := []variable{}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(wf.PayloadSchema, &schema) == nil {
		names := make([]string, 0, len(schema.Properties))
		for name := range schema.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, n := range names {
			vars = append(vars, variable{Name: n})
		}
	}
	b, _ := json.Marshal(map[string]any{
		"_id":    wf.ID,
		"name":   wf.Name,
		"origin": firstNonEmpty(wf.Origin, "service-cloud"),
		"triggers": []map[string]any{{
			"type": "event", "identifier": wf.WorkflowID, "variables": vars,
		}},
	})
	return b
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

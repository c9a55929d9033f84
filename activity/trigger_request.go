package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// This file reads a trigger request: its body, its recipients and actor,
// its context. trigger.go runs it; plan.go holds what it decides.

// maxRecipients is the most subscribers one trigger's `to` may name
// (docs/api.md, "The write side").
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

// contextRefs reads a trigger's contexts (docs/content.md, "Contexts"):
// context, as subscribers.ParseContexts reads it, and the older tenant
// field, an identifier or {identifier, name?, data?}, which names the
// tenant context unless context already does. They come sorted by key.
func contextRefs(raw, tenant json.RawMessage) ([]subscribers.ContextRef, error) {
	refs, err := subscribers.ParseContexts(raw)
	if err != nil {
		return nil, err
	}
	if t, ok := tenantRef(tenant); ok && !slices.ContainsFunc(refs, func(r subscribers.ContextRef) bool { return r.Type == "tenant" }) {
		refs = append(refs, t)
		subscribers.SortContextRefs(refs)
	}
	return refs, nil
}

// tenantRef reads the older tenant field as the tenant context: ok is
// false when it names none, or an identifier no context can have (such a
// tenant was always accepted and is still, without a context).
func tenantRef(raw json.RawMessage) (subscribers.ContextRef, bool) {
	ref := subscribers.ContextRef{Type: "tenant"}
	if isNull(raw) {
		return ref, false
	}
	if json.Unmarshal(raw, &ref.ID) != nil {
		var obj struct {
			Identifier string         `json:"identifier"`
			Name       string         `json:"name"`
			Data       map[string]any `json:"data"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return ref, false
		}
		data := obj.Data
		if obj.Name != "" {
			if data == nil {
				data = map[string]any{}
			}
			if _, ok := data["name"]; !ok {
				data["name"] = obj.Name
			}
		}
		if data != nil {
			ref.Data, _ = json.Marshal(data)
		}
		ref.ID = obj.Identifier
	}
	return ref, subscribers.CheckContextRef(ref) == ""
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
	// The payload's limit leaves its files out: they have their own.
	payload, files := splitAttachments(r.Payload)
	if !isNull(r.Payload) && !isObject(r.Payload) {
		problems["payload"] = "must be an object"
	} else if p := platform.PayloadProblem(ctx, payload); p != "" {
		problems["payload"] = p
	}
	_, fileProblems := readAttachments(ctx, files)
	maps.Copy(problems, fileProblems)
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
	if _, err := contextRefs(r.Context, nil); err != nil {
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

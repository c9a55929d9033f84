package activity

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/templates"
	"github.com/herald-notify/herald/workflows"
)

// What one request may cause to be stored is bounded
// (platform.StorageProblem). A trigger's payload and overrides are stored
// once however many subscribers it reaches (sqldb.StoreValue); what grows
// with them is what each message's templates render from the payload.
// That is estimated before anything is written from the payload fields the
// workflow's message steps name, each counted whole, once per step and
// recipient. Overrides of sqldb.ValueThreshold bytes or more are stored
// once, like the payload, and each message names them; a smaller value,
// kept in each notification and message, is part of their fixed cost, not
// of the estimate.

// messageSteps are the step types that store a message.
var messageSteps = map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}

// renderedPaths lists, for each message step of wf, the payload fields its
// control values name, as paths under payload (empty for the whole of it):
// once per step that names one.
func renderedPaths(wf *workflows.Workflow) (paths [][]string) {
	for _, st := range wf.Steps {
		if !messageSteps[st.Type] {
			continue
		}
		seen := map[string]bool{}
		eachString(st.ControlValues, func(s string) {
			templates.Check(s, func(path []string) bool {
				if len(path) == 0 || path[0] != "payload" {
					return true
				}
				p := path[1:]
				if i := slices.Index(p, "*"); i >= 0 {
					p = p[:i]
				}
				if key := strings.Join(p, "."); !seen[key] {
					seen[key] = true
					paths = append(paths, p)
				}
				return true
			})
		})
	}
	return paths
}

// eachString calls fn with every string in v, a decoded JSON value.
func eachString(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case map[string]any:
		for _, e := range v {
			eachString(e, fn)
		}
	case []any:
		for _, e := range v {
			eachString(e, fn)
		}
	}
}

// sizeAt is the size of the JSON of payload at path, 0 when it has none.
func sizeAt(payload json.RawMessage, path []string) int64 {
	for _, key := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(payload, &m) != nil {
			return int64(len(payload)) // an index into an array: all of it, at most
		}
		if payload = m[key]; payload == nil {
			return 0
		}
	}
	return int64(len(payload))
}

// checkStorage refuses p when storing it for the subscribers recipients
// counts would pass the request's storage limit. recipients is called
// only when the workflow's templates render some of the payload.
func (t *triggerer) checkStorage(ctx context.Context, p *plan, recipients func() (int64, error)) error {
	bytes, what, err := t.storageEstimate(p, recipients)
	if err != nil {
		return err
	}
	return platform.StorageProblem(ctx, bytes, what)
}

// storageEstimate is the bytes storing p for the subscribers recipients
// counts would add, and what they are.
func (t *triggerer) storageEstimate(p *plan, recipients func() (int64, error)) (int64, string, error) {
	var perRecipient, n int64
	for _, path := range t.workflowParses.get(p.wf).rendered {
		perRecipient += sizeAt(p.payload, path)
	}
	if perRecipient > 0 {
		var err error
		if n, err = recipients(); err != nil {
			return 0, "", err
		}
	}
	once := int64(len(p.payload) + len(p.overrides) + len(p.attachments))
	what := fmt.Sprintf("the payload, overrides and files once, %d bytes, and for each of its %d subscribers' messages the %d bytes its templates render",
		once, n, perRecipient)
	return once + perRecipient*n, what, nil
}

// checkTriggerStorage is checkStorage for a trigger, which reaches the
// subscribers it names and the members of the topics it names.
func (t *triggerer) checkTriggerStorage(ctx context.Context, p *plan, req triggerRequest) error {
	return t.checkStorage(ctx, p, func() (int64, error) {
		n := int64(len(p.recipients))
		refs, _ := parseTopics(req.To)
		if len(refs) == 0 || t.topics == nil {
			return n, nil
		}
		var keys []string
		for _, ref := range refs {
			keys = append(keys, ref.TopicKey)
		}
		members, err := t.topics.CountTopicKeyMembers(ctx, p.tenant.EnvironmentID, keys)
		return n + members, err
	})
}

// checkBroadcastStorage is checkStorage for a broadcast, which reaches
// every subscriber of the environment.
func (t *triggerer) checkBroadcastStorage(ctx context.Context, p *plan) error {
	return t.checkStorage(ctx, p, func() (int64, error) {
		return t.subscribers.CountSubscribers(ctx, p.tenant.EnvironmentID)
	})
}

// checkBulkStorage refuses a bulk request whose events together would
// store more than the request's limit, before any of them is accepted:
// each event alone may fit where all of them do not. plans holds each
// event's prepared plan, nil for one that stores nothing or that its
// own answer refuses. An event reaches the subscribers its `to` names
// (a bulk request names no topic).
func (t *triggerer) checkBulkStorage(ctx context.Context, events []triggerRequest, plans []*plan) error {
	var total int64
	counted := 0
	for i, p := range plans {
		if p == nil {
			continue
		}
		bytes, _, err := t.storageEstimate(p, func() (int64, error) {
			return bulkRecipients(events[i].To), nil
		})
		if err != nil {
			return err
		}
		total += bytes
		counted++
	}
	return platform.StorageProblem(ctx, total, fmt.Sprintf(
		"its %d events together, each its payload and overrides once and for each of its subscribers' messages what its templates render", counted))
}

// bulkRecipients is how many subscribers an event's `to` names, each
// named twice counted once; 0 when it cannot be read, which the event's
// own answer then says.
func bulkRecipients(to json.RawMessage) int64 {
	refs, err := parseRecipients(to)
	if err != nil {
		return 0
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		seen[ref.subscriberID] = true
	}
	return int64(len(seen))
}

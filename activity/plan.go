package activity

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// This file holds what a trigger decides before its write: the plan, its
// recipients and their chains of jobs.

// recipient is a resolved subscriber a notification is created for.
type recipient struct {
	id           string                  // database _id
	subscriberID string                  // the client's subscriberId
	to           json.RawMessage         // what the trigger said, as an object
	sub          *subscribers.Subscriber // the whole subscriber, for running the first step inline

	// Decided by planChain before the write.
	nid   string      // the notification's _id
	at    time.Time   // when the notification was created
	jobs  []jobRow    // the jobs of its steps, from position 1: the trigger job is derived
	first write       // the rest of the first step's result (its message), when the trigger ran it (inline.go)
	later []detailRow // the details that result records, written with the jobs

	topics []topicSummary // the trigger's topics that reached it; none for a direct recipient (topics.go)
}

// subscriberSummary is the part of a subscriber (docs/api.md, "Subscribers")
// activity keeps.
type subscriberSummary struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Email        *string `json:"email,omitempty"`
	Phone        *string `json:"phone,omitempty"`
}

// summaryOf is the part of sub that activity keeps.
func summaryOf(sub *subscribers.Subscriber) subscriberSummary {
	return subscriberSummary{ID: sub.ID, SubscriberID: sub.SubscriberID, FirstName: sub.FirstName,
		LastName: sub.LastName, Email: sub.Email, Phone: sub.Phone}
}

// newRecipient is the recipient sub, as a bare subscriberId names it; a
// trigger that named it by an object sets to.
func newRecipient(sub *subscribers.Subscriber) recipient {
	r := recipient{id: sub.ID, subscriberID: sub.SubscriberID, sub: sub}
	r.to, _ = json.Marshal(map[string]string{"subscriberId": sub.SubscriberID})
	return r
}

// plan is everything a trigger writes, decided before the write transaction.
type plan struct {
	tenant        platform.Tenant
	transactionID string
	// generated is set when Herald made transactionID up: no other trigger
	// can have it, so it is not claimed (docs/storage.md, "Transaction
	// claims").
	generated   bool
	wf          *workflows.Workflow
	preferences json.RawMessage // as the notification stores them
	payload     json.RawMessage
	overrides   json.RawMessage
	attachments json.RawMessage // the trigger's files as its notifications keep them; nil for none
	severity    string
	critical    bool
	actor       json.RawMessage
	contextKeys []string
	template    json.RawMessage
	chain       []chainStep // the trigger step, then the active ones
	// snapshots are the workflow's values its rows name by key, and
	// templateColumn and preferencesColumn what a notification's columns
	// hold; "" for the template and preferences themselves (snapshots.go).
	snapshots                         []workflowSnapshot
	templateColumn, preferencesColumn string
	channels                          []string
	recipients                        []recipient

	// What a trigger's transaction writes besides its rows, each nil for
	// none: a broadcast batch's progress (broadcast.go), and the request's
	// answer for its Idempotency-Key (platform.IdempotentAnswer).
	progress write
	answer   write
}

// noActor is the actor (docs/api.md, "The feed") of a trigger that names
// none: most notifications', so their actor column holds "" for it
// (sqldb.LeftOut), which actorColumn reads back.
var noActor = json.RawMessage(`{"type":"none","data":null}`)

// actorColumn reads a notification's actor.
var actorColumn = sqldb.LeftOutColumn("actor", `'`+string(noActor)+`'`)

// named is a subscriber a trigger names, as its actor or a recipient.
type named struct {
	ref  recipientRef
	path string                  // where its problems are reported: "actor", "to.0"
	sub  *subscribers.Subscriber // the subscriber, once found or upserted
	body json.RawMessage         // what to upsert: its object, or a new subscriberId
}

// actorJSON is the actor (docs/api.md, "The feed") of a subscriber: a user,
// whose data is its avatar, which inboxes show beside the message. It keeps
// the subscriber's _id as well, so that a step's templates can read the
// actor's fields as actor.*; a message shows only the type and the data.
func actorJSON(sub *subscribers.Subscriber) (json.RawMessage, error) {
	return json.Marshal(struct {
		Type         string  `json:"type"`
		Data         *string `json:"data"`
		SubscriberID string  `json:"_subscriberId"`
	}{"user", sub.Avatar, sub.ID})
}

// templateSummary is the notification's template: {_id, name, origin, triggers}.
func templateSummary(wf *workflows.Workflow) json.RawMessage {
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

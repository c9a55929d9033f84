package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// Topics is what a trigger to topics needs from the subscribers domain
// (subscribers.Store; checked in app/wire.go).
type Topics interface {
	// TopicsByKey returns the environment's topics among keys, by key.
	TopicsByKey(ctx context.Context, environmentID string, keys []string) (map[string]subscribers.Topic, error)
	// TopicMembersAfter returns the next page of a fan-out to topics, in
	// subscriberId order after the cursor, less the excluded subscriberIds,
	// with the cursor it ends at and whether it is the last.
	TopicMembersAfter(ctx context.Context, environmentID string, topics []subscribers.Topic, after string, limit int, exclude []string) ([]subscribers.TopicMember, string, bool, error)
	// CountTopicKeyMembers answers how many memberships the topics among
	// keys have.
	CountTopicKeyMembers(ctx context.Context, environmentID string, keys []string) (int64, error)
}

// kindTopics marks a fan-out in activity_broadcasts that reaches the members
// of topics; a broadcast's kind is "broadcast".
const kindTopics = "topics"

// topicRef is a `to` entry {type: "Topic", topicKey, exclude?}.
type topicRef struct {
	Type     string   `json:"type"`
	TopicKey string   `json:"topicKey"`
	Exclude  []string `json:"exclude"`
}

// topicSummary is an entry of a notification's topics (docs/api.md,
// "Notifications").
type topicSummary struct {
	ID  string `json:"_topicId"`
	Key string `json:"topicKey"`
}

// isTopic reports whether a `to` entry names a topic.
func isTopic(item json.RawMessage) bool {
	var obj struct {
		Type string `json:"type"`
	}
	return isObject(item) && json.Unmarshal(item, &obj) == nil && strings.EqualFold(obj.Type, "topic")
}

// parseTopics reads the topic entries of `to`: each needs a well-formed
// topicKey, and at most maxRecipients subscriberIds to exclude.
func parseTopics(raw json.RawMessage) ([]topicRef, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
	}
	var out []topicRef
	for _, item := range list {
		if !isTopic(item) {
			continue
		}
		var ref topicRef
		if err := json.Unmarshal(item, &ref); err != nil {
			return nil, errors.New("each topic needs a topicKey and may list subscriberIds to exclude")
		}
		if !subscribers.ValidTopicKey(ref.TopicKey) {
			return nil, fmt.Errorf("topicKey %q is not a valid topic key", ref.TopicKey)
		}
		if len(ref.Exclude) > maxRecipients {
			return nil, fmt.Errorf("a topic may exclude at most %d subscribers", maxRecipients)
		}
		out = append(out, ref)
	}
	return out, nil
}

// fanPage is one batch of a fan-out: the subscribers it reaches, the
// topics that reached each (a topic fan-out's), and where it ends.
type fanPage struct {
	subs   []subscribers.Subscriber
	topics [][]topicSummary
	next   string
	last   bool
}

// page reads b's next batch: the environment's subscribers for a
// broadcast, its topics' members for a trigger to topics.
func (b *broadcast) page(ctx context.Context, t *triggerer, size int) (fanPage, error) {
	if b.members != nil {
		return b.members(ctx, b.after, size)
	}
	subs, err := t.subscribers.SubscribersAfter(ctx, b.p.tenant.EnvironmentID, b.after, size)
	if err != nil {
		return fanPage{}, err
	}
	page := fanPage{subs: subs, next: b.after, last: len(subs) < size}
	if n := len(subs); n > 0 {
		page.next = subs[n-1].SubscriberID
	}
	return page, nil
}

// withTopics readies b to reach the members of the topics its request
// names: it finds them (an unknown key is ignored and returned, as the
// reference acknowledges such a trigger) and leaves out the actor, the
// subscribers the request names directly, and every topic's exclude list.
func (t *triggerer) withTopics(ctx context.Context, b *broadcast, req triggerRequest) (unknown []string, err error) {
	refs, err := parseTopics(req.To)
	if err != nil {
		return nil, platform.InvalidField("to", nil, "%s", err.Error())
	}
	if t.topics == nil {
		return nil, platform.InvalidField("to", nil, "topics are not supported here")
	}
	var keys, exclude []string
	for _, ref := range refs {
		keys = append(keys, ref.TopicKey)
		exclude = append(exclude, ref.Exclude...)
	}
	env := b.p.tenant.EnvironmentID
	found, err := t.topics.TopicsByKey(ctx, env, keys)
	if err != nil {
		return nil, err
	}
	var topics []subscribers.Topic
	seen := map[string]bool{}
	for _, k := range keys {
		tp, ok := found[k]
		switch {
		case seen[k]:
		case ok:
			topics = append(topics, tp)
		default:
			unknown = append(unknown, k)
		}
		seen[k] = true
	}
	direct, _ := parseRecipients(req.To)
	for _, ref := range direct {
		exclude = append(exclude, ref.subscriberID)
	}
	if actor := actorRef(req.Actor); actor != nil {
		exclude = append(exclude, actor.ref.subscriberID)
	}
	b.kind = kindTopics
	b.members = func(ctx context.Context, after string, size int) (fanPage, error) {
		if len(topics) == 0 {
			return fanPage{next: after, last: true}, nil
		}
		members, next, last, err := t.topics.TopicMembersAfter(ctx, env, topics, after, size, exclude)
		if err != nil {
			return fanPage{}, err
		}
		page := fanPage{next: next, last: last, subs: make([]subscribers.Subscriber, len(members)), topics: make([][]topicSummary, len(members))}
		for i, m := range members {
			page.subs[i] = m.Subscriber
			for _, tp := range m.Topics {
				page.topics[i] = append(page.topics[i], topicSummary{ID: tp.ID, Key: tp.Key})
			}
		}
		return page, nil
	}
	return unknown, nil
}

// triggerTopics writes a trigger whose `to` names topics: its direct
// recipients with the first batch, then the topics' members, a batch per
// transaction, durable and resumed after a crash as a broadcast is
// (fanOut). An unknown topic is ignored and named in the answer's error.
func (t *triggerer) triggerTopics(ctx context.Context, p *plan, req triggerRequest, res *triggerResult) (*triggerResult, error) {
	req.TransactionID = p.transactionID // a resumed fan-out rebuilds its plan under it
	req.To = toWithoutChannels(req.To)
	req.Actor, _ = withoutChannels(req.Actor)      // a resumed fan-out keeps the actor resolved now
	req.Payload, _ = splitAttachments(req.Payload) // a resumed fan-out reads its files from its notifications
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	b := &broadcast{p: p, request: body}
	unknown, err := t.withTopics(ctx, b, req)
	if err != nil {
		return nil, err
	}
	for _, k := range unknown {
		res.Error = append(res.Error, fmt.Sprintf("Topic %q was not found; the trigger ignored it", k))
	}
	if p.answer, err = platform.IdempotentAnswer(ctx, 201, res); err != nil {
		return nil, err
	}
	// Accepted: as a broadcast, the fan-out no longer depends on the client.
	err = t.fanOut(context.WithoutCancel(ctx), b)
	if err != nil && !errors.Is(err, errBroadcastStopped) {
		return nil, err
	}
	return res, nil
}

// resumeTopics readies an unfinished trigger to topics to go on: its
// request is a trigger's, with its topics in `to`.
func (t *triggerer) resumeTopics(ctx context.Context, b *broadcast, logger *slog.Logger) error {
	var req triggerRequest
	if err := json.Unmarshal(b.request, &req); err != nil {
		return err
	}
	unknown, err := t.withTopics(ctx, b, req)
	if len(unknown) > 0 {
		logger.Warn("topics deleted since the trigger; their members not reached yet are not", "topics", unknown)
	}
	return err
}

// topicsJSON is the notification's topics: those that reached its
// subscriber, [] for a direct recipient.
func (r *recipient) topicsJSON() string {
	if len(r.topics) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(r.topics)
	return string(b)
}

const insertNotificationTopicSQL = `INSERT INTO notification_topics (environment_id, topic_key, created_at, notification_id)
	VALUES (?, ?, ?, ?)`

// insertNotificationTopics indexes a notification under each topic that
// reached it, for GET /v1/notifications?topicKey=.
func (s *Store) insertNotificationTopics(ctx context.Context, tx *sql.Tx, env, at string, r *recipient) error {
	for _, tp := range r.topics {
		if err := s.db.WriteLater(ctx, tx, insertNotificationTopicSQL, env, tp.Key, at, r.nid); err != nil {
			return fmt.Errorf("insert notification topic: %w", err)
		}
	}
	return nil
}

// newTriggerer returns a triggerer that finds workflows and subscribers
// through the given domains, and topics through subscribers when it serves
// them (subscribers.Store does; app/wire.go checks it).
func newTriggerer(store *Store, workflows Workflows, subscribers Subscribers) *triggerer {
	t := &triggerer{store: store, workflows: workflows, subscribers: subscribers}
	t.topics, _ = subscribers.(Topics)
	t.contexts, _ = subscribers.(Contexts)
	return t
}

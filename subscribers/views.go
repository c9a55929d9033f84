package subscribers

import (
	"context"
	"net/url"

	"github.com/herald-notify/herald/platform"
)

// SearchPage is one page of a subscriber search, with the cursors of the
// pages around it ("" at either end).
type SearchPage struct {
	Subscribers    []Subscriber
	Next, Previous string
	TotalCount     int
	Capped         bool // TotalCount stopped counting
}

// Search reads one page as GET /v2/subscribers with query reads it
// (docs/api.md, "Subscriber search"): the same filters, limits, cursors and
// 4xx errors.
func (s *Store) Search(ctx context.Context, environmentID string, query url.Values) (SearchPage, error) {
	sq, err := readSearchQuery(platform.QueryOf(query))
	if err != nil {
		return SearchPage{}, err
	}
	page, err := s.search(ctx, environmentID, sq)
	if err != nil {
		return SearchPage{}, err
	}
	out := SearchPage{TotalCount: page.TotalCount, Capped: page.Capped, Subscribers: make([]Subscriber, len(page.Subscribers))}
	for i, sub := range page.Subscribers {
		out.Subscribers[i] = sub.toResponse(true)
	}
	if page.Next != nil {
		out.Next = page.Next.encode()
	}
	if page.Previous != nil {
		out.Previous = page.Previous.encode()
	}
	return out, nil
}

// PreferenceSheet is a subscriber's preferences as they would set them:
// the global channels and, for each active workflow, its channels, each
// on or off.
type PreferenceSheet struct {
	Global    map[string]bool // the channels of the environment's workflows
	Workflows []WorkflowPreferences
	Schedule  *Schedule // nil when the subscriber set none
}

// WorkflowPreferences is a subscriber's preferences for one workflow.
type WorkflowPreferences struct {
	ID, WorkflowID, Name string
	Critical             bool            // the subscriber cannot turn it off
	Channels             map[string]bool // the channels of its steps
	BySubscriber         map[string]bool // the channels the subscriber set, rather than the workflow's defaults
}

// PreferenceSheet reads the subscriber's preferences for every active
// workflow, as GET /v1/subscribers/{subscriberId}/preferences does, or a
// 404.
func (s *Store) PreferenceSheet(ctx context.Context, environmentID, subscriberID string) (PreferenceSheet, error) {
	st, err := s.preferenceState(ctx, environmentID, subscriberID)
	if err != nil {
		return PreferenceSheet{}, err
	}
	out := PreferenceSheet{Global: st.globalChannels(), Schedule: st.schedule}
	for _, v := range st.listed() {
		wp := WorkflowPreferences{ID: v.wf.ID, WorkflowID: v.wf.WorkflowID, Name: v.wf.Name, Critical: v.resolved.Critical,
			Channels: v.channels(false), BySubscriber: map[string]bool{}}
		for c, d := range v.resolved.Channels {
			if d.Rule.bySubscriber() {
				wp.BySubscriber[c] = true
			}
		}
		out.Workflows = append(out.Workflows, wp)
	}
	return out, nil
}

// TopicsOf returns the topics the subscriber is a member of, by key, or a
// 404.
func (s *Store) TopicsOf(ctx context.Context, environmentID, subscriberID string) (out []Topic, err error) {
	defer platform.Wrap(&err, "topics of subscriber %s", subscriberID)
	ref, err := s.subscriberRef(ctx, environmentID, subscriberID)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("t.", topicColumns)+`
		FROM topic_subscribers ts JOIN topics t ON t.id = ts.topic_id
		WHERE ts.subscriber_ref = ? ORDER BY t.key`, ref)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// TopicPage is one page of topics, with the cursors of the pages around it.
type TopicPage struct {
	Topics         []Topic
	Next, Previous string
	TotalCount     int
	Capped         bool
}

// Topics reads one page as GET /v2/topics with query reads it: key and
// name as case-insensitive substrings, the same cursors and errors.
func (s *Store) Topics(ctx context.Context, environmentID string, query url.Values) (TopicPage, error) {
	q := platform.QueryOf(query)
	p := readPageQuery(q)
	key, name := q.String("key"), q.String("name")
	if err := q.Err(); err != nil {
		return TopicPage{}, err
	}
	topics, next, previous, total, err := s.topicPage(ctx, environmentID, key, name, p)
	if err != nil {
		return TopicPage{}, err
	}
	return TopicPage{Topics: topics, Next: cursorText(next), Previous: cursorText(previous), TotalCount: total,
		Capped: total >= countCap}, nil
}

func cursorText(c *cursor) string {
	if c == nil {
		return ""
	}
	return c.encode()
}

// Topic returns the topic whose key is key, or a 404.
func (s *Store) Topic(ctx context.Context, environmentID, key string) (Topic, error) {
	if !ValidTopicKey(key) {
		return Topic{}, platform.NotFound("Topic %q not found", key)
	}
	t, err := s.topic(ctx, s.db, environmentID, key)
	if err != nil {
		return Topic{}, err
	}
	return *t, nil
}

// Member is a subscriber of a topic.
type Member struct {
	SubscriberID                 string
	FirstName, LastName, Email   string
	SubscriptionID, SubscribedAt string
}

// MemberPage is one page of a topic's members, with the cursors of the
// pages around it.
type MemberPage struct {
	Members        []Member
	Next, Previous string
}

// TopicMembers reads one page of the topic's members as GET
// /v2/topics/{topicKey}/subscriptions with query reads it, or a 404.
func (s *Store) TopicMembers(ctx context.Context, environmentID, key string, query url.Values) (MemberPage, error) {
	t, err := s.Topic(ctx, environmentID, key)
	if err != nil {
		return MemberPage{}, err
	}
	q := platform.QueryOf(query)
	p := readPageQuery(q)
	if err := q.Err(); err != nil {
		return MemberPage{}, err
	}
	subs, next, previous, err := s.subscriptionPage(ctx, t, "", p)
	if err != nil {
		return MemberPage{}, err
	}
	out := MemberPage{Next: cursorText(next), Previous: cursorText(previous)}
	for _, sub := range subs {
		m := Member{SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID, SubscribedAt: sub.CreatedAt}
		if r := sub.Subscriber; r != nil {
			m.FirstName, m.LastName, m.Email = deref(r.FirstName), deref(r.LastName), deref(r.Email)
		}
		out.Members = append(out.Members, m)
	}
	return out, nil
}

// ContextPage is one page of contexts, with the cursors of the pages
// around it.
type ContextPage struct {
	Contexts       []Context
	Next, Previous string
	TotalCount     int
	Capped         bool
}

// ContextList reads one page as GET /v2/contexts with query reads it (id,
// search, the same cursors and errors), and of one type when query's type
// names one.
func (s *Store) ContextList(ctx context.Context, environmentID string, query url.Values) (ContextPage, error) {
	q := platform.QueryOf(query)
	p := readPageQuery(q)
	f := contextFilter{typ: q.String("type"), id: q.String("id"), search: q.String("search")}
	if f.typ != "" && !contextPartPattern.MatchString(f.typ) {
		q.Fail("type", f.typ, "must be 1 to 100 letters, digits, _ or -")
	}
	if err := q.Err(); err != nil {
		return ContextPage{}, err
	}
	list, next, previous, total, err := s.contextPage(ctx, environmentID, f, p)
	if err != nil {
		return ContextPage{}, err
	}
	return ContextPage{Contexts: list, Next: cursorText(next), Previous: cursorText(previous), TotalCount: total,
		Capped: total >= countCap}, nil
}

// Context returns the environment's context typ:id, or a 404.
func (s *Store) Context(ctx context.Context, environmentID, typ, id string) (Context, error) {
	if !contextPartPattern.MatchString(typ) || !contextPartPattern.MatchString(id) {
		return Context{}, platform.NotFound("Context %q was not found", typ+":"+id)
	}
	return s.context(ctx, s.db, environmentID, typ+":"+id)
}

package subscribers

import (
	"context"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// TopicMember is one subscriber a trigger to topics reaches.
type TopicMember struct {
	Subscriber Subscriber // as SubscribersAfter answers it
	Topics     []Topic    // which of the trigger's topics it is in
}

// TopicMembersAfter returns the next page of a fan-out to topics: the
// distinct subscribers in any of topics whose subscriberId is greater than
// after, in subscriberId order, at most limit, less those whose
// subscriberId is in exclude. next is the cursor the page ends at and last
// says whether it is the fan-out's last; a page may hold fewer members
// than limit (some excluded) and still not be the last.
//
// Each topic is read along its primary key from the cursor, limit rows at
// most, each membership joined to its subscriber's row in the same query,
// and the pages are merged: a page costs one query per topic, as a
// broadcast's costs one, whatever the size of the topics, so a fan-out to
// many topics never sorts their members, and no member is read twice.
func (s *Store) TopicMembersAfter(ctx context.Context, environmentID string, topics []Topic, after string, limit int, exclude []string) (members []TopicMember, next string, last bool, err error) {
	defer platform.Wrap(&err, "topic members after %q", after)
	type member struct {
		sub    *subscriber
		topics []Topic
	}
	in := map[string]*member{}  // subscriberId → its row and its topics among those read
	bound, bounded := "", false // members past the smallest full page's end are not all known yet
	for _, t := range topics {
		subs, err := s.membersAfter(ctx, environmentID, t.ID, after, limit)
		if err != nil {
			return nil, "", false, err
		}
		for _, sub := range subs {
			m := in[sub.SubscriberID]
			if m == nil {
				m = &member{sub: sub}
				in[sub.SubscriberID] = m
			}
			m.topics = append(m.topics, t)
		}
		if len(subs) == limit && (!bounded || subs[len(subs)-1].SubscriberID < bound) {
			bound, bounded = subs[len(subs)-1].SubscriberID, true
		}
	}
	ids := make([]string, 0, len(in))
	for id := range in {
		if !bounded || id <= bound {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	next, last = after, !bounded
	if len(ids) > 0 {
		next = ids[len(ids)-1]
	}
	if len(exclude) > 0 {
		skip := make(map[string]bool, len(exclude))
		for _, id := range exclude {
			skip[id] = true
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return skip[id] })
	}
	ordered := make([]*subscriber, len(ids))
	for i, id := range ids {
		ordered[i] = in[id].sub
	}
	docs, err := s.documents(ctx, environmentID, ordered)
	if err != nil {
		return nil, "", false, err
	}
	members = make([]TopicMember, len(docs))
	for i, doc := range docs {
		members[i] = TopicMember{Subscriber: doc, Topics: in[ids[i]].topics}
	}
	return members, next, last, nil
}

// membersAfter reads up to limit members of a topic after the cursor, in
// subscriberId order, each with its subscriber's row. Deleting a
// subscriber deletes its memberships (a trigger on subscribers), so every
// membership joins a row and a full page means there may be more.
func (s *Store) membersAfter(ctx context.Context, environmentID, topicID, after string, limit int) ([]*subscriber, error) {
	rows, err := s.db.Query(ctx, membersAfterSQL, topicID, after, environmentID, limit)
	if err != nil {
		return nil, err
	}
	return s.scanAll(rows)
}

// membersAfterSQL reads a page of a topic's members with their rows.
var membersAfterSQL = `SELECT ` + prefixed("s.", subscriberColumns) + ` FROM topic_subscribers t
	JOIN subscribers s ON s.id = t.subscriber_ref
	WHERE t.topic_id = ? AND t.subscriber_id > ? AND s.environment_id = ?
	ORDER BY t.subscriber_id LIMIT ?`

// CountTopicKeyMembers answers how many memberships the environment's
// topics among keys have: at least the subscribers a trigger to them
// reaches, a subscriber in two of them counted twice.
func (s *Store) CountTopicKeyMembers(ctx context.Context, environmentID string, keys []string) (n int64, err error) {
	defer platform.Wrap(&err, "count topic members")
	if len(keys) == 0 {
		return 0, nil
	}
	args := []any{environmentID}
	for _, k := range keys {
		args = append(args, k)
	}
	err = s.db.QueryRow(ctx, `SELECT count(*) FROM topic_subscribers WHERE topic_id IN
		(SELECT id FROM topics WHERE environment_id = ? AND key IN (`+sqldb.Placeholders(len(keys))+`))`, args...).Scan(&n)
	return n, err
}

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
// most, and the pages are merged: a page costs the same read whatever the
// size of the topics, so a fan-out to many topics never sorts their members.
func (s *Store) TopicMembersAfter(ctx context.Context, environmentID string, topics []Topic, after string, limit int, exclude []string) (members []TopicMember, next string, last bool, err error) {
	defer platform.Wrap(&err, "topic members after %q", after)
	in := map[string][]Topic{}  // subscriberId → its topics among those read
	bound, bounded := "", false // members past the smallest full page's end are not all known yet
	for _, t := range topics {
		ids, err := s.membersAfter(ctx, t.ID, after, limit)
		if err != nil {
			return nil, "", false, err
		}
		for _, id := range ids {
			in[id] = append(in[id], t)
		}
		if len(ids) == limit && (!bounded || ids[len(ids)-1] < bound) {
			bound, bounded = ids[len(ids)-1], true
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
	ids = slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(exclude, id) })
	subs, err := s.storedIn(ctx, s.db, environmentID, ids)
	if err != nil {
		return nil, "", false, err
	}
	ordered := make([]*subscriber, 0, len(ids))
	for _, id := range ids {
		if sub, ok := subs[id]; ok { // deleted since: its memberships went with it
			ordered = append(ordered, sub)
		}
	}
	docs, err := s.documents(ctx, environmentID, ordered)
	if err != nil {
		return nil, "", false, err
	}
	members = make([]TopicMember, len(docs))
	for i, doc := range docs {
		members[i] = TopicMember{Subscriber: doc, Topics: in[ordered[i].SubscriberID]}
	}
	return members, next, last, nil
}

// membersAfter reads up to limit subscriberIds of a topic after the cursor.
func (s *Store) membersAfter(ctx context.Context, topicID, after string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT subscriber_id FROM topic_subscribers
		WHERE topic_id = ? AND subscriber_id > ? ORDER BY subscriber_id LIMIT ?`, topicID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]string, 0, limit)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

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

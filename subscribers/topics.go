package subscribers

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// topicKeyPattern is what a topic key must match: the pattern of a
// workflowId (docs/api.md, "The write side"; docs/preferences-and-topics.md,
// "Topics"), at most maxTopicKey characters.
var topicKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9]+(?:[-_.][a-zA-Z0-9]+)*$`)

const maxTopicKey = 100

// ValidTopicKey reports whether key can name a topic.
func ValidTopicKey(key string) bool {
	return len(key) <= maxTopicKey && topicKeyPattern.MatchString(key)
}

func init() {
	platform.RegisterValidation("topickey", ValidTopicKey)
}

// Topic is a stored topic.
type Topic struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	Key            string
	Name           string
	CreatedAt      string
	UpdatedAt      string
}

const topicColumns = `id, organization_id, environment_id, key, name, created_at, updated_at`

func scanTopic(row scanner) (*Topic, error) {
	var t Topic
	err := row.Scan(&t.ID, &t.OrganizationID, &t.EnvironmentID, &t.Key, &t.Name, &t.CreatedAt, &t.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	return &t, err
}

// TopicsByKey returns the environment's topics among keys, keyed by key;
// keys with no topic are absent.
func (s *Store) TopicsByKey(ctx context.Context, environmentID string, keys []string) (out map[string]Topic, err error) {
	defer platform.Wrap(&err, "topics by key")
	out = map[string]Topic{}
	if len(keys) == 0 {
		return out, nil
	}
	args := []any{environmentID}
	for _, k := range keys {
		args = append(args, k)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+topicColumns+` FROM topics
		WHERE environment_id = ? AND key IN (`+sqldb.Placeholders(len(keys))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, err
		}
		out[t.Key] = *t
	}
	return out, rows.Err()
}

// topic reads one topic by key, or a 404.
func (s *Store) topic(ctx context.Context, q querier, environmentID, key string) (*Topic, error) {
	t, err := scanTopic(q.QueryRowContext(ctx, `SELECT `+topicColumns+` FROM topics WHERE environment_id = ? AND key = ?`,
		environmentID, key))
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("Topic %q not found", key)
	}
	return t, err
}

// querier is what a pool and a transaction both read through.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// lockTopic takes turns, in tx, with other processes' writes of the
// environment's topic key: a write reads the topic before it creates,
// renames or deletes it, and two processes subscribing to a new topic at
// once would both create it, one then failing on its unique key. SQLite's
// one writer serialises them already.
func (s *Store) lockTopic(ctx context.Context, tx *sql.Tx, environmentID, key string) error {
	return s.db.LockKey(ctx, tx, "topics/"+environmentID+"/"+key)
}

// upsertTopic creates the topic, or when it exists and rename is set,
// renames it; created reports which. failIfExists turns an existing one
// into a 409.
func (s *Store) upsertTopic(ctx context.Context, tx *sql.Tx, tenant platform.Tenant, key, name string, rename, failIfExists bool) (t *Topic, created bool, err error) {
	if err := s.lockTopic(ctx, tx, tenant.EnvironmentID, key); err != nil {
		return nil, false, err
	}
	t, err = s.topic(ctx, tx, tenant.EnvironmentID, key)
	var nf *platform.Error
	switch {
	case errors.As(err, &nf) && nf.Status == 404:
		now := sqldb.FormatTime(s.now())
		t = &Topic{ID: sqldb.NewIDAt(s.now()), OrganizationID: tenant.OrganizationID, EnvironmentID: tenant.EnvironmentID,
			Key: key, Name: name, CreatedAt: now, UpdatedAt: now}
		_, err = tx.ExecContext(ctx, `INSERT INTO topics (`+topicColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.OrganizationID, t.EnvironmentID, t.Key, t.Name, t.CreatedAt, t.UpdatedAt)
		return t, true, err
	case err != nil:
		return nil, false, err
	case failIfExists:
		return nil, false, platform.Conflict("Topic %q already exists", key)
	case rename && name != t.Name:
		return s.renameTopic(ctx, tx, t, name)
	}
	return t, false, nil
}

func (s *Store) renameTopic(ctx context.Context, q querier, t *Topic, name string) (*Topic, bool, error) {
	t.Name, t.UpdatedAt = name, sqldb.FormatTime(s.now())
	_, err := q.ExecContext(ctx, `UPDATE topics SET name = ?, updated_at = ? WHERE id = ?`, t.Name, t.UpdatedAt, t.ID)
	return t, false, err
}

// createTopic is POST /v1/topics's write: a new topic, or a 409.
func (s *Store) createTopic(ctx context.Context, tenant platform.Tenant, key, name string) (t *Topic, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		t, _, err = s.upsertTopic(ctx, tx, tenant, key, name, false, true)
		return err
	})
	return t, err
}

// saveTopic is POST /v2/topics's write: create, or rename an existing one.
func (s *Store) saveTopic(ctx context.Context, tenant platform.Tenant, key string, name *string, failIfExists bool) (t *Topic, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		n := ""
		if name != nil {
			n = *name
		}
		t, _, err = s.upsertTopic(ctx, tx, tenant, key, n, name != nil, failIfExists)
		return err
	})
	return t, err
}

// renameTopicByKey is PATCH /v1|v2/topics/{key}: a 404 when it is missing.
func (s *Store) renameTopicByKey(ctx context.Context, environmentID, key, name string) (t *Topic, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.lockTopic(ctx, tx, environmentID, key); err != nil {
			return err
		}
		if t, err = s.topic(ctx, tx, environmentID, key); err != nil {
			return err
		}
		t, _, err = s.renameTopic(ctx, tx, t, name)
		return err
	})
	return t, err
}

// deleteTopic deletes a topic. Unless force is set, a topic that still has
// subscribers is a 409 (v1); with it, its subscriptions go too (v2).
func (s *Store) deleteTopic(ctx context.Context, environmentID, key string, force bool) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.lockTopic(ctx, tx, environmentID, key); err != nil {
			return err
		}
		t, err := s.topic(ctx, tx, environmentID, key)
		if err != nil {
			return err
		}
		if !force {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM topic_subscribers WHERE topic_id = ? LIMIT 1`, t.ID).Scan(&one)
			if err == nil {
				return platform.Conflict("Topic %q still has subscribers; remove them first", key)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM topic_subscribers WHERE topic_id = ?`, t.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM topics WHERE id = ?`, t.ID)
		return err
	})
}

// memberIDs returns the subscriberIds of a topic's members, in order.
func (s *Store) memberIDs(ctx context.Context, topicID string) (out []string, err error) {
	defer platform.Wrap(&err, "topic members")
	rows, err := s.db.QueryContext(ctx, `SELECT subscriber_id FROM topic_subscribers WHERE topic_id = ? ORDER BY subscriber_id`, topicID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out = []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Subscription is one subscriber's membership of a topic.
type Subscription struct {
	ID           string
	Topic        Topic
	SubscriberID string // the subscriber's subscriberId
	Subscriber   *subscriber
	CreatedAt    string
	UpdatedAt    string // when it was last named; "" where it was not read
}

// Identifier is the subscription's identifier, as the reference makes it
// by default: Herald keeps one subscription per subscriber and topic.
func (sub Subscription) Identifier() string {
	return "tk_" + sub.Topic.Key + ":si_" + sub.SubscriberID
}

// subscribe adds the subscribers to the topic, creating the topic (named
// name) when it does not exist. It returns the subscriptions of those that
// exist, already subscribed or not, and the subscriberIds that do not.
func (s *Store) subscribe(ctx context.Context, tenant platform.Tenant, key, name string, subscriberIDs []string) (subs []Subscription, missing []string, err error) {
	defer platform.Wrap(&err, "subscribe to topic %s", key)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		t, _, err := s.upsertTopic(ctx, tx, tenant, key, name, false, false)
		if err != nil {
			return err
		}
		subs, missing = nil, nil
		found, err := s.storedIn(ctx, tx, tenant.EnvironmentID, subscriberIDs)
		if err != nil {
			return err
		}
		now := sqldb.FormatTime(s.now())
		for _, id := range dedupe(subscriberIDs) {
			sub, ok := found[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO topic_subscribers (topic_id, subscriber_id, id, environment_id, subscriber_ref, created_at)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (topic_id, subscriber_id) DO NOTHING`,
				t.ID, id, sqldb.NewIDAt(s.now()), tenant.EnvironmentID, sub.ID, now)
			if err != nil {
				return err
			}
		}
		subs, err = s.subscriptions(ctx, tx, *t, found, subscriberIDs)
		return err
	})
	return subs, missing, err
}

// unsubscribe removes the subscribers from the topic (404 when it does
// not exist). It returns the subscriptions removed, the subscriberIds with
// no subscriber and those that were not subscribed.
func (s *Store) unsubscribe(ctx context.Context, environmentID, key string, subscriberIDs []string) (removed []Subscription, missing, notSubscribed []string, err error) {
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		removed, missing, notSubscribed = nil, nil, nil
		t, err := s.topic(ctx, tx, environmentID, key)
		if err != nil {
			return err
		}
		found, err := s.storedIn(ctx, tx, environmentID, subscriberIDs)
		if err != nil {
			return err
		}
		if removed, err = s.subscriptions(ctx, tx, *t, found, subscriberIDs); err != nil {
			return err
		}
		for _, id := range dedupe(subscriberIDs) {
			if _, ok := found[id]; !ok {
				missing = append(missing, id)
			} else if !slices.ContainsFunc(removed, func(sub Subscription) bool { return sub.SubscriberID == id }) {
				notSubscribed = append(notSubscribed, id)
			}
		}
		args := []any{t.ID}
		for _, id := range subscriberIDs {
			args = append(args, id)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM topic_subscribers WHERE topic_id = ? AND subscriber_id IN (`+
			sqldb.Placeholders(len(subscriberIDs))+`)`, args...)
		return err
	})
	return removed, missing, notSubscribed, err
}

// storedIn reads the environment's subscribers among ids, keyed by subscriberId.
func (s *Store) storedIn(ctx context.Context, q querier, environmentID string, ids []string) (map[string]*subscriber, error) {
	out := map[string]*subscriber{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{environmentID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+subscriberColumns+` FROM subscribers
		WHERE environment_id = ? AND subscriber_id IN (`+sqldb.Placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	subs, err := s.scanAll(rows)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		out[sub.SubscriberID] = sub
	}
	return out, nil
}

// subscriptions reads the topic's subscriptions of the subscriberIds
// given, in their order, filling in the subscribers from found.
func (s *Store) subscriptions(ctx context.Context, q querier, t Topic, found map[string]*subscriber, subscriberIDs []string) ([]Subscription, error) {
	out := []Subscription{}
	if len(subscriberIDs) == 0 {
		return out, nil
	}
	args := []any{t.ID}
	for _, id := range subscriberIDs {
		args = append(args, id)
	}
	rows, err := q.QueryContext(ctx, `SELECT id, subscriber_id, created_at, coalesce(updated_at, created_at) FROM topic_subscribers
		WHERE topic_id = ? AND subscriber_id IN (`+sqldb.Placeholders(len(subscriberIDs))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[string]Subscription{}
	for rows.Next() {
		sub := Subscription{Topic: t}
		if err := rows.Scan(&sub.ID, &sub.SubscriberID, &sub.CreatedAt, &sub.UpdatedAt); err != nil {
			return nil, err
		}
		sub.Subscriber = found[sub.SubscriberID]
		byID[sub.SubscriberID] = sub
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range dedupe(subscriberIDs) {
		if sub, ok := byID[id]; ok {
			out = append(out, sub)
		}
	}
	return out, nil
}

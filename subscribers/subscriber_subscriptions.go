package subscribers

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// handleSubscriberSubscriptions serves GET
// /v2/subscribers/{subscriberId}/subscriptions: a cursor page of the
// subscriber's topic subscriptions, of every topic or of the topic key.
func handleSubscriberSubscriptions(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		p := readPageQuery(q)
		key := q.String("key")
		if err := q.Err(); err != nil {
			return err
		}
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		subscriberID := r.PathValue("subscriberId")
		found, err := store.storedIn(ctx, store.db, env, []string{subscriberID})
		if err != nil {
			return err
		}
		sub := found[subscriberID]
		if sub == nil {
			return platform.NotFound("Subscriber %q not found", subscriberID)
		}
		subs, next, previous, err := store.subscriberSubscriptionPage(ctx, sub, key, p)
		if err != nil {
			return err
		}
		res := cursorPage[subscriptionV2]{Data: make([]subscriptionV2, len(subs)), Next: encoded(next), Previous: encoded(previous),
			TotalCount: len(subs)}
		for i, s := range subs {
			res.Data[i] = toSubscriptionV2(s)
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// subscriberSubscriptionPage reads a cursor page of sub's subscriptions,
// ordered by the subscription's creation, of the topic key when it is set.
func (s *Store) subscriberSubscriptionPage(ctx context.Context, sub *subscriber, key string, p pageQuery) (page []Subscription, next, previous *cursor, err error) {
	defer platform.Wrap(&err, "subscriber subscriptions")
	col := map[string]string{"_id": "ts.id", "createdAt": "ts.created_at", "updatedAt": "ts.created_at"}[p.orderBy]
	cond, args, tail := p.sql(col, "ts.id")
	where := []string{"ts.subscriber_ref = ?"}
	args = append([]any{sub.ID}, args...)
	if cond != "" {
		where = append(where, cond)
	}
	if key != "" {
		where, args = append(where, "t.key = ?"), append(args, key)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT ts.id, ts.subscriber_id, ts.created_at, `+prefixed("t.", topicColumns)+`
		FROM topic_subscribers ts JOIN topics t ON t.id = ts.topic_id
		WHERE `+strings.Join(where, " AND ")+tail, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var all []Subscription
	for rows.Next() {
		item := Subscription{Subscriber: sub}
		t := &item.Topic
		if err := rows.Scan(&item.ID, &item.SubscriberID, &item.CreatedAt,
			&t.ID, &t.OrganizationID, &t.EnvironmentID, &t.Key, &t.Name, &t.CreatedAt, &t.UpdatedAt); err != nil {
			return nil, nil, nil, err
		}
		all = append(all, item)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	page, next, previous = window(p, all, func(item Subscription) cursor {
		c := cursor{OrderBy: p.orderBy, ID: item.ID}
		if p.orderBy != "_id" {
			c.Value = item.CreatedAt
		}
		return c
	})
	return page, next, previous, nil
}

// handleSubscriptionUpdateV2 serves PATCH
// /v2/topics/{topicKey}/subscriptions/{identifier}: the subscription's
// name. Preferences per subscription are not served, so a body that sets
// any is refused rather than stored to no effect.
func handleSubscriptionUpdateV2(store *Store) http.Handler {
	type request struct {
		Name        *string `json:"name" validate:"omitempty,max=256"`
		Preferences []any   `json:"preferences"`
	}
	type response struct {
		ID         string         `json:"_id"`
		Identifier string         `json:"identifier"`
		Name       *string        `json:"name,omitempty"`
		Topic      topicV2        `json:"topic"`
		Subscriber map[string]any `json:"subscriber"`
		CreatedAt  string         `json:"createdAt"`
		UpdatedAt  string         `json:"updatedAt"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[request](r)
		if err != nil {
			return err
		}
		if len(req.Preferences) > 0 {
			return platform.InvalidField("preferences", req.Preferences,
				"preferences per topic subscription are not served; set the subscriber's own (PATCH /v2/subscribers/{subscriberId}/preferences)")
		}
		identifier := r.PathValue("identifier")
		subscriberID, ok := strings.CutPrefix(identifier, "tk_"+key+":si_")
		if !ok {
			return platform.NotFound("Subscription %q not found in topic %q", identifier, key)
		}
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		sub, err := store.subscription(ctx, env, key, subscriberID)
		var nf *platform.Error
		if errors.As(err, &nf) && nf.Status == http.StatusNotFound {
			return platform.NotFound("Subscription %q not found in topic %q", identifier, key)
		}
		if err != nil {
			return err
		}
		name, updatedAt, err := store.renameSubscription(ctx, sub, req.Name)
		if err != nil {
			return err
		}
		v2 := toSubscriptionV2(sub)
		return platform.JSON(w, http.StatusOK, response{ID: sub.ID, Identifier: sub.Identifier(), Name: name,
			Topic: v2.Topic, Subscriber: v2.Subscriber, CreatedAt: sub.CreatedAt, UpdatedAt: updatedAt})
	})
}

// renameSubscription sets sub's name when name is not nil, and returns its
// name and when it last changed.
func (s *Store) renameSubscription(ctx context.Context, sub Subscription, name *string) (stored *string, updatedAt string, err error) {
	defer platform.Wrap(&err, "rename subscription")
	if name != nil {
		_, err := s.db.ExecContext(ctx, `UPDATE topic_subscribers SET name = ?, updated_at = ? WHERE topic_id = ? AND subscriber_id = ?`,
			*name, sqldb.FormatTime(s.now()), sub.Topic.ID, sub.SubscriberID)
		if err != nil {
			return nil, "", err
		}
	}
	err = s.db.QueryRowContext(ctx, `SELECT name, coalesce(updated_at, created_at) FROM topic_subscribers
		WHERE topic_id = ? AND subscriber_id = ?`, sub.Topic.ID, sub.SubscriberID).Scan(&stored, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", platform.NotFound("Subscription %q not found", sub.Identifier())
	}
	return stored, updatedAt, err
}

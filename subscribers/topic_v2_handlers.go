package subscribers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// notFoundErrors reports subscriberIds with no subscriber in a v2 batch.
func notFoundErrors(missing []string) []batchError {
	var errs []batchError
	for _, id := range missing {
		errs = append(errs, batchError{id, "SUBSCRIBER_NOT_FOUND", "Subscriber " + id + " was not found"})
	}
	return errs
}

// handleTopicSaveV2 serves POST /v2/topics: create the topic, or rename it
// when it exists (409 with ?failIfExists=true). Always 201, as the
// reference answers.
func handleTopicSaveV2(store *Store) http.Handler {
	type body struct {
		Key  string  `json:"key" validate:"required,topickey"`
		Name *string `json:"name" validate:"omitempty,max=256"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		fail := q.Bool("failIfExists")
		if err := q.Err(); err != nil {
			return err
		}
		req, err := platform.Decode[body](r)
		if err != nil {
			return err
		}
		t, err := store.saveTopic(r.Context(), platform.TenantFrom(r.Context()), req.Key, req.Name, fail != nil && *fail)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, toTopicV2(*t))
	})
}

// cursorPage is the answer of the v2 cursor lists.
type cursorPage[T any] struct {
	Data             []T     `json:"data"`
	Next             *string `json:"next"`
	Previous         *string `json:"previous"`
	TotalCount       int     `json:"totalCount"`
	TotalCountCapped bool    `json:"totalCountCapped"`
}

func encoded(c *cursor) *string {
	if c == nil {
		return nil
	}
	s := c.encode()
	return &s
}

// handleTopicListV2 serves GET /v2/topics: a cursor page (docs/api.md,
// "Lists and paging"), key and name matched as case-insensitive substrings.
func handleTopicListV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		p := readPageQuery(q)
		key, name := q.String("key"), q.String("name")
		if err := q.Err(); err != nil {
			return err
		}
		topics, next, previous, total, err := store.topicPage(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, key, name, p)
		if err != nil {
			return err
		}
		res := cursorPage[topicV2]{Data: make([]topicV2, len(topics)), Next: encoded(next), Previous: encoded(previous),
			TotalCount: total, TotalCountCapped: total >= countCap}
		for i, t := range topics {
			res.Data[i] = toTopicV2(t)
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// subscriptionV2 is a subscription as v2 answers it.
type subscriptionV2 struct {
	ID         string         `json:"_id"`
	Identifier string         `json:"identifier"`
	CreatedAt  string         `json:"createdAt"`
	Topic      topicV2        `json:"topic"`
	Subscriber map[string]any `json:"subscriber"`
}

func toSubscriptionV2(sub Subscription) subscriptionV2 {
	out := subscriptionV2{ID: sub.ID, Identifier: sub.Identifier(), CreatedAt: sub.CreatedAt, Topic: toTopicV2(sub.Topic)}
	if s := sub.Subscriber; s != nil {
		out.Subscriber = map[string]any{"_id": s.ID, "subscriberId": s.SubscriberID, "avatar": s.Avatar,
			"firstName": s.FirstName, "lastName": s.LastName, "email": s.Email}
	}
	return out
}

// handleSubscriptionListV2 serves GET /v2/topics/{topicKey}/subscriptions:
// a cursor page of the topic's subscriptions, optionally of one
// subscriberId; 404 for a missing topic.
func handleSubscriptionListV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, err := topicKeyPath(r)
		if err != nil {
			return err
		}
		q := platform.NewQuery(r)
		p := readPageQuery(q)
		subscriberID := q.String("subscriberId")
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		t, err := store.topic(ctx, store.db, platform.TenantFrom(ctx).EnvironmentID, key)
		if err != nil {
			return err
		}
		subs, next, previous, err := store.subscriptionPage(ctx, *t, subscriberID, p)
		if err != nil {
			return err
		}
		res := cursorPage[subscriptionV2]{Data: make([]subscriptionV2, len(subs)), Next: encoded(next), Previous: encoded(previous)}
		for i, sub := range subs {
			res.Data[i] = toSubscriptionV2(sub)
		}
		res.TotalCount = len(subs)
		return platform.JSON(w, http.StatusOK, res)
	})
}

// subscriptionsBody is the body of POST and DELETE
// /v2/topics/{topicKey}/subscriptions: subscriptions, each a subscriberId
// or {subscriberId, identifier?}, or the older subscriberIds.
type subscriptionsBody struct {
	Subscriptions []json.RawMessage `json:"subscriptions" validate:"omitempty,min=1,max=100"`
	SubscriberIDs []string          `json:"subscriberIds" validate:"omitempty,min=1,max=100,dive,required,max=256"`
	Name          string            `json:"name" validate:"max=256"`
}

// Valid reads each subscription entry, which must name a subscriberId.
func (b subscriptionsBody) Valid(context.Context) map[string]string {
	problems := map[string]string{}
	if len(b.Subscriptions) == 0 && len(b.SubscriberIDs) == 0 {
		problems["subscriptions"] = "must name at least one subscriber"
	}
	if _, bad := b.ids(); bad != "" {
		problems[bad] = "must be a subscriberId or an object with a subscriberId"
	}
	return problems
}

// ids returns the subscriberIds the body names, or the path of an entry
// that names none.
func (b subscriptionsBody) ids() ([]string, string) {
	out := append([]string{}, b.SubscriberIDs...)
	for i, raw := range b.Subscriptions {
		var id string
		if json.Unmarshal(raw, &id) != nil {
			var obj struct {
				SubscriberID string `json:"subscriberId"`
			}
			json.Unmarshal(raw, &obj)
			id = obj.SubscriberID
		}
		if id == "" || len(id) > 256 {
			return nil, "subscriptions." + strconv.Itoa(i)
		}
		out = append(out, id)
	}
	return out, ""
}

// batchError is one entry of a v2 subscription batch's errors.
type batchError struct {
	SubscriberID string `json:"subscriberId"`
	Code         string `json:"code"`
	Message      string `json:"message"`
}

// changedSubscription is a subscription as the answers of POST and DELETE
// /v2/topics/{topicKey}/subscriptions list it: the reference's SDK refuses
// an item without updatedAt: when the subscription was last named, else
// when it was made.
type changedSubscription struct {
	subscriptionV2
	UpdatedAt string `json:"updatedAt"`
}

// batchAnswer writes a v2 subscription batch: status when any succeeded,
// 400 with the same body when every one failed.
func batchAnswer(w http.ResponseWriter, status int, subs []Subscription, errs []batchError) error {
	data := make([]changedSubscription, len(subs))
	for i, sub := range subs {
		data[i] = changedSubscription{toSubscriptionV2(sub), cmp.Or(sub.UpdatedAt, sub.CreatedAt)}
	}
	res := map[string]any{"data": data, "meta": map[string]int{"totalCount": len(subs) + len(errs),
		"successful": len(subs), "failed": len(errs)}}
	if len(errs) > 0 {
		res["errors"] = errs
	}
	if len(subs) == 0 && len(errs) > 0 {
		res["statusCode"], res["message"] = http.StatusBadRequest, "No subscription was changed"
		status = http.StatusBadRequest
	}
	return platform.JSON(w, status, res)
}

// handleSubscribeV2 serves POST /v2/topics/{topicKey}/subscriptions: the
// topic is created when missing (named name, else its key); subscribers
// that do not exist are reported per id as SUBSCRIBER_NOT_FOUND.
func handleSubscribeV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[subscriptionsBody](r)
		if err != nil {
			return err
		}
		ids, _ := req.ids()
		subs, missing, err := store.subscribe(r.Context(), platform.TenantFrom(r.Context()), key, req.Name, ids)
		if err != nil {
			return err
		}
		errs := notFoundErrors(missing)
		return batchAnswer(w, http.StatusCreated, subs, errs)
	})
}

// handleUnsubscribeV2 serves DELETE /v2/topics/{topicKey}/subscriptions:
// 404 for a missing topic; per id SUBSCRIBER_NOT_FOUND or
// SUBSCRIPTION_NOT_FOUND.
func handleUnsubscribeV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[subscriptionsBody](r)
		if err != nil {
			return err
		}
		ids, _ := req.ids()
		removed, missing, notSubscribed, err := store.unsubscribe(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, key, ids)
		if err != nil {
			return err
		}
		errs := notFoundErrors(missing)
		for _, id := range notSubscribed {
			errs = append(errs, batchError{id, "SUBSCRIPTION_NOT_FOUND", "Subscriber " + id + " is not in topic " + key})
		}
		return batchAnswer(w, http.StatusOK, removed, errs)
	})
}

// handleSubscriptionGetV2 serves GET
// /v2/topics/{topicKey}/subscriptions/{identifier}: the subscription, or
// 204 when there is none, as the reference answers.
func handleSubscriptionGetV2(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, err := topicKeyPath(r)
		if err != nil {
			return err
		}
		identifier := r.PathValue("identifier")
		prefix := "tk_" + key + ":si_"
		subscriberID, ok := strings.CutPrefix(identifier, prefix)
		ctx := r.Context()
		var sub Subscription
		if ok {
			sub, err = store.subscription(ctx, platform.TenantFrom(ctx).EnvironmentID, key, subscriberID)
		}
		var nf *platform.Error
		if !ok || (errors.As(err, &nf) && nf.Status == http.StatusNotFound) {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		if err != nil {
			return err
		}
		name, _, err := store.renameSubscription(ctx, sub, nil)
		if err != nil {
			return err
		}
		out := map[string]any{"id": sub.ID, "identifier": sub.Identifier()}
		if name != nil {
			out["name"] = *name
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

package subscribers

import (
	"context"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// topicV1 is a topic as v1 answers it, with its members' subscriberIds.
type topicV1 struct {
	ID             string   `json:"_id"`
	OrganizationID string   `json:"_organizationId"`
	EnvironmentID  string   `json:"_environmentId"`
	Key            string   `json:"key"`
	Name           string   `json:"name"`
	Subscribers    []string `json:"subscribers"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

func (s *Store) toTopicV1(ctx context.Context, t *Topic) (topicV1, error) {
	members, err := s.memberIDs(ctx, t.ID)
	return topicV1{ID: t.ID, OrganizationID: t.OrganizationID, EnvironmentID: t.EnvironmentID, Key: t.Key, Name: t.Name,
		Subscribers: members, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}, err
}

// topicV2 is a topic as v2 answers it.
type topicV2 struct {
	ID        string  `json:"_id"`
	Key       string  `json:"key"`
	Name      *string `json:"name,omitempty"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

func toTopicV2(t Topic) topicV2 {
	out := topicV2{ID: t.ID, Key: t.Key, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.Name != "" {
		out.Name = &t.Name
	}
	return out
}

// topicKeyPath checks the {topicKey} of a path: a malformed one names no
// topic (404), as the "Identifiers and timestamps" section of docs/api.md
// has it for a malformed id in a path.
func topicKeyPath(r *http.Request) (string, error) {
	key := r.PathValue("topicKey")
	if !ValidTopicKey(key) {
		return "", platform.NotFound("Topic %q not found", key)
	}
	return key, nil
}

// decodeTopicWrite reads the {topicKey} of a write's path (topicKeyPath)
// and decodes its body.
func decodeTopicWrite[T any](r *http.Request) (key string, body T, err error) {
	if key, err = topicKeyPath(r); err != nil {
		return key, body, err
	}
	body, err = platform.Decode[T](r)
	return key, body, err
}

// handleTopicCreateV1 serves POST /v1/topics: 201 {_id, key}, or 409 when
// the key is taken.
func handleTopicCreateV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[NewTopic](r)
		if err != nil {
			return err
		}
		t, err := store.createTopic(r.Context(), platform.TenantFrom(r.Context()), req.Key, req.Name)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, map[string]string{"_id": t.ID, "key": t.Key})
	})
}

// handleTopicListV1 serves GET /v1/topics: a page of topics, newest first,
// with key and name matched exactly.
func handleTopicListV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		page, size := q.Int("page", 0, 0, 10_000), q.Int("pageSize", 10, 1, 10)
		key, name := q.String("key"), q.String("name")
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		topics, total, err := store.topicListV1(ctx, platform.TenantFrom(ctx).EnvironmentID, key, name, page, size)
		if err != nil {
			return err
		}
		data := make([]topicV1, len(topics))
		for i := range topics {
			if data[i], err = store.toTopicV1(ctx, &topics[i]); err != nil {
				return err
			}
		}
		return platform.JSON(w, http.StatusOK, map[string]any{"data": data, "page": page, "pageSize": size, "totalCount": total})
	})
}

// handleTopicGet serves GET /v1/topics/{topicKey} (v2 false) and GET
// /v2/topics/{topicKey}.
func handleTopicGet(store *Store, v2 bool) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, err := topicKeyPath(r)
		if err != nil {
			return err
		}
		ctx := r.Context()
		t, err := store.topic(ctx, store.db, platform.TenantFrom(ctx).EnvironmentID, key)
		if err != nil {
			return err
		}
		return store.writeTopic(ctx, w, http.StatusOK, t, v2)
	})
}

func (s *Store) writeTopic(ctx context.Context, w http.ResponseWriter, status int, t *Topic, v2 bool) error {
	if v2 {
		return platform.JSON(w, status, toTopicV2(*t))
	}
	res, err := s.toTopicV1(ctx, t)
	if err != nil {
		return err
	}
	return platform.JSON(w, status, res)
}

// handleTopicRename serves PATCH /v1/topics/{topicKey} and PATCH
// /v2/topics/{topicKey}: {name} renames the topic.
func handleTopicRename(store *Store, v2 bool) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[TopicName](r)
		if err != nil {
			return err
		}
		ctx := r.Context()
		t, err := store.renameTopicByKey(ctx, platform.TenantFrom(ctx).EnvironmentID, key, req.Name)
		if err != nil {
			return err
		}
		return store.writeTopic(ctx, w, http.StatusOK, t, v2)
	})
}

// handleTopicDelete serves DELETE /v1/topics/{topicKey} (204; 409 while it
// has subscribers) and DELETE /v2/topics/{topicKey} (200
// {acknowledged: true}; its subscriptions go with it).
func handleTopicDelete(store *Store, v2 bool) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, err := topicKeyPath(r)
		if err != nil {
			return err
		}
		if err := store.deleteTopic(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, key, v2); err != nil {
			return err
		}
		if v2 {
			return platform.JSON(w, http.StatusOK, map[string]bool{"acknowledged": true})
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

// subscribersBody is the body of POST /v1/topics/{topicKey}/subscribers
// and of its removal.
type subscribersBody struct {
	Subscribers []string `json:"subscribers" validate:"required,min=1,max=100,dive,required,max=256"`
}

// handleTopicSubscribeV1 serves POST /v1/topics/{topicKey}/subscribers: the
// subscribers that exist are added (again harmlessly), a missing topic is
// created as Autogenerated-<key>, and subscriberIds with no subscriber are
// listed under failed.notFound.
func handleTopicSubscribeV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[subscribersBody](r)
		if err != nil {
			return err
		}
		subs, missing, err := store.subscribe(r.Context(), platform.TenantFrom(r.Context()), key, "Autogenerated-"+key, req.Subscribers)
		if err != nil {
			return err
		}
		res := map[string]any{"succeeded": subscriberIDsOf(subs)}
		if len(missing) > 0 {
			res["failed"] = map[string][]string{"notFound": missing}
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

func subscriberIDsOf(subs []Subscription) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.SubscriberID
	}
	return out
}

// handleTopicUnsubscribeV1 serves POST
// /v1/topics/{topicKey}/subscribers/removal: 204, whoever was in it.
func handleTopicUnsubscribeV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, req, err := decodeTopicWrite[subscribersBody](r)
		if err != nil {
			return err
		}
		if _, _, _, err := store.unsubscribe(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, key, req.Subscribers); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

// handleTopicSubscriberV1 serves GET
// /v1/topics/{topicKey}/subscribers/{subscriberId}: the membership, or 404.
func handleTopicSubscriberV1(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		key, err := topicKeyPath(r)
		if err != nil {
			return err
		}
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		subscriberID := r.PathValue("subscriberId")
		sub, err := store.subscription(ctx, env, key, subscriberID)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, map[string]string{
			"_organizationId": sub.Topic.OrganizationID, "_environmentId": sub.Topic.EnvironmentID,
			"_subscriberId": sub.Subscriber.ID, "_topicId": sub.Topic.ID, "topicKey": sub.Topic.Key,
			"externalSubscriberId": sub.SubscriberID})
	})
}

// subscription reads one subscriber's membership of a topic, or a 404.
func (s *Store) subscription(ctx context.Context, environmentID, key, subscriberID string) (Subscription, error) {
	t, err := s.topic(ctx, s.db, environmentID, key)
	if err != nil {
		return Subscription{}, err
	}
	found, err := s.storedIn(ctx, s.db, environmentID, []string{subscriberID})
	if err != nil {
		return Subscription{}, err
	}
	subs, err := s.subscriptions(ctx, s.db, *t, found, []string{subscriberID})
	if err != nil {
		return Subscription{}, err
	}
	if len(subs) == 0 {
		return Subscription{}, platform.NotFound("Subscriber %q is not in topic %q", subscriberID, key)
	}
	return subs[0], nil
}

package subscribers_test

import (
	"context"
	"encoding/json"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// These answer the store's typed reads as the API's JSON, which the tests
// decode into their own wire type (subscriberJSON) and compare byte for byte.

func subscriberDoc(store *subscribers.Store, ctx context.Context, env, subscriberID string) (json.RawMessage, error) {
	sub, err := store.Subscriber(ctx, env, subscriberID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sub)
}

func upsertDocs(store *subscribers.Store, ctx context.Context, tenant platform.Tenant, bodies []json.RawMessage, paths []string) ([]json.RawMessage, error) {
	subs, err := store.UpsertSubscribers(ctx, tenant, bodies, paths)
	if err != nil {
		return nil, err
	}
	return docsOf(subs)
}

func afterDocs(store *subscribers.Store, ctx context.Context, env, after string, limit int) ([]json.RawMessage, error) {
	subs, err := store.SubscribersAfter(ctx, env, after, limit)
	if err != nil {
		return nil, err
	}
	return docsOf(subs)
}

func byIDDocs(store *subscribers.Store, ctx context.Context, env string, ids []string) (map[string]json.RawMessage, error) {
	subs, err := store.SubscribersByID(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	return docMap(subs)
}

func bySubscriberIDDocs(store *subscribers.Store, ctx context.Context, env string, ids []string) (map[string]json.RawMessage, error) {
	subs, err := store.SubscribersBySubscriberID(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	return docMap(subs)
}

func docsOf(subs []subscribers.Subscriber) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(subs))
	for i, sub := range subs {
		var err error
		if out[i], err = json.Marshal(sub); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func docMap(subs map[string]subscribers.Subscriber) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(subs))
	for k, sub := range subs {
		var err error
		if out[k], err = json.Marshal(sub); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func identityDoc(store *subscribers.Store, ctx context.Context, env, subscriberID string) (json.RawMessage, error) {
	id, err := store.SubscriberIdentity(ctx, env, subscriberID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(id)
}

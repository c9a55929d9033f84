package subscribers

import "net/http"

// AddRoutes registers the subscriber endpoints (docs/api.md,
// "Channel credentials", "Subscriber search" and "The write side"),
// subscriber preferences and topics (docs/preferences-and-topics.md).
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("POST /v1/subscribers", handleSubscriberCreate(store, false))
	mux.Handle("GET /v1/subscribers", handleSubscriberListV1(store))
	mux.Handle("POST /v1/subscribers/bulk", handleSubscriberBulk(store)) // the reference platform's older clients (bulk.go)
	mux.Handle("GET /v1/subscribers/{subscriberId}", handleSubscriberGet(store))
	mux.Handle("PUT /v1/subscribers/{subscriberId}", handleSubscriberUpdate(store))
	mux.Handle("DELETE /v1/subscribers/{subscriberId}", handleSubscriberDelete(store))
	mux.Handle("PATCH /v1/subscribers/{subscriberId}/credentials", handleCredentialsUpdate(store, false))
	mux.Handle("PUT /v1/subscribers/{subscriberId}/credentials", handleCredentialsUpdate(store, true))
	mux.Handle("DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}", handleCredentialsDelete(store))

	mux.Handle("GET /v2/subscribers", handleSubscriberSearch(store))
	mux.Handle("POST /v2/subscribers", handleSubscriberCreate(store, true))
	mux.Handle("GET /v2/subscribers/{subscriberId}", handleSubscriberGet(store))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}", handleSubscriberUpdate(store))
	mux.Handle("DELETE /v2/subscribers/{subscriberId}", handleSubscriberDelete(store))

	mux.Handle("GET /v1/subscribers/{subscriberId}/preferences", handlePreferencesList(store))
	mux.Handle("GET /v1/subscribers/{subscriberId}/preferences/{parameter}", handlePreferencesByLevel(store))
	mux.Handle("PATCH /v1/subscribers/{subscriberId}/preferences", handleGlobalPreferenceUpdateV1(store))
	mux.Handle("PATCH /v1/subscribers/{subscriberId}/preferences/{parameter}", handlePreferenceUpdateV1(store))
	mux.Handle("GET /v2/subscribers/{subscriberId}/preferences", handlePreferencesV2(store))
	mux.Handle("GET /v2/subscribers/{subscriberId}/preferences/global", handleGlobalPreferencesV2(store))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/preferences", handlePreferenceUpdateV2(store))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/preferences/bulk", handlePreferencesBulkV2(store))

	mux.Handle("PATCH /v1/subscribers/{subscriberId}/online-status", handleSubscriberOnlineStatus(store))

	mux.Handle("POST /v1/tenants", handleTenantCreate(store))
	mux.Handle("GET /v1/tenants", handleTenantList(store))
	mux.Handle("GET /v1/tenants/{identifier}", handleTenantGet(store))
	mux.Handle("PATCH /v1/tenants/{identifier}", handleTenantUpdate(store))
	mux.Handle("DELETE /v1/tenants/{identifier}", handleTenantDelete(store))

	mux.Handle("POST /v1/topics", handleTopicCreateV1(store))
	mux.Handle("GET /v1/topics", handleTopicListV1(store))
	mux.Handle("GET /v1/topics/{topicKey}", handleTopicGet(store, false))
	mux.Handle("PATCH /v1/topics/{topicKey}", handleTopicRename(store, false))
	mux.Handle("DELETE /v1/topics/{topicKey}", handleTopicDelete(store, false))
	mux.Handle("POST /v1/topics/{topicKey}/subscribers", handleTopicSubscribeV1(store))
	mux.Handle("POST /v1/topics/{topicKey}/subscribers/removal", handleTopicUnsubscribeV1(store))
	mux.Handle("GET /v1/topics/{topicKey}/subscribers/{subscriberId}", handleTopicSubscriberV1(store))
	mux.Handle("POST /v2/topics", handleTopicSaveV2(store))
	mux.Handle("GET /v2/topics", handleTopicListV2(store))
	mux.Handle("GET /v2/topics/{topicKey}", handleTopicGet(store, true))
	mux.Handle("PATCH /v2/topics/{topicKey}", handleTopicRename(store, true))
	mux.Handle("DELETE /v2/topics/{topicKey}", handleTopicDelete(store, true))
	mux.Handle("GET /v2/topics/{topicKey}/subscriptions", handleSubscriptionListV2(store))
	mux.Handle("POST /v2/topics/{topicKey}/subscriptions", handleSubscribeV2(store))
	mux.Handle("DELETE /v2/topics/{topicKey}/subscriptions", handleUnsubscribeV2(store))
	mux.Handle("GET /v2/topics/{topicKey}/subscriptions/{identifier}", handleSubscriptionGetV2(store))
	mux.Handle("PATCH /v2/topics/{topicKey}/subscriptions/{identifier}", handleSubscriptionUpdateV2(store))
	mux.Handle("GET /v2/subscribers/{subscriberId}/subscriptions", handleSubscriberSubscriptions(store))

	mux.Handle("POST /v2/contexts", handleContextCreate(store))
	mux.Handle("GET /v2/contexts", handleContextList(store))
	mux.Handle("GET /v2/contexts/{type}/{id}", handleContextGet(store))
	mux.Handle("PATCH /v2/contexts/{type}/{id}", handleContextUpdate(store))
	mux.Handle("DELETE /v2/contexts/{type}/{id}", handleContextDelete(store))
}

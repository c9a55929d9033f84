package messaging

import "net/http"

// AddRoutes registers the messaging API: the in-app feed and its read/seen
// state (docs/api.md, "The feed" and "Mark-as") and the messages list and
// deletes (docs/api.md, "Messages").
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("GET /v1/subscribers/{subscriberId}/notifications/feed", handleFeed(store))
	mux.Handle("POST /v1/subscribers/{subscriberId}/messages/mark-as", handleMarkAs(store))
	mux.Handle("GET /v1/messages", handleMessageList(store))
	mux.Handle("POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", handleMessageAction(store))
	// Legacy routes of the reference platform's older clients (legacy.go).
	mux.Handle("POST /v1/subscribers/{subscriberId}/messages/markAs", handleLegacyMarkAs(store))
	mux.Handle("POST /v1/subscribers/{subscriberId}/messages/mark-all", handleMarkAll(store))
	mux.Handle("GET /v1/subscribers/{subscriberId}/notifications/unseen", handleUnseenCount(store))
	mux.Handle("DELETE /v1/messages/{messageId}", handleMessageDelete(store))
	mux.Handle("DELETE /v1/messages/transaction/{transactionId}", handleTransactionDelete(store))

	// The inbox (docs/inbox.md): a subscriber token instead of an API key.
	if store.inbox == nil {
		return
	}
	mux.Handle("POST /v1/inbox/session", handleInboxSession(store))
	mux.Handle("GET /v1/inbox/notifications", handleInboxNotifications(store, inboxRoute))
	mux.Handle("GET /v1/inbox/notifications/count", handleInboxCount(store, inboxRoute))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/read", handleInboxMark(store, inboxRoute, actionRead))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unread", handleInboxMark(store, inboxRoute, actionUnread))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/archive", handleInboxMark(store, inboxRoute, actionArchive))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unarchive", handleInboxMark(store, inboxRoute, actionUnarchive))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/snooze", handleInboxSnooze(store, inboxRoute))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unsnooze", handleInboxMark(store, inboxRoute, actionUnsnooze))
	mux.Handle("POST /v1/inbox/notifications/seen", handleInboxBulk(store, inboxRoute, "seen"))
	mux.Handle("POST /v1/inbox/notifications/read", handleInboxBulk(store, inboxRoute, "read"))
	mux.Handle("POST /v1/inbox/notifications/archive", handleInboxBulk(store, inboxRoute, "archive"))
	mux.Handle("POST /v1/inbox/notifications/read-archive", handleInboxBulk(store, inboxRoute, "read-archive"))
	mux.Handle("POST /v1/inbox/notifications/delete", handleInboxBulk(store, inboxRoute, "delete"))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/complete", handleInboxAction(store, "done"))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/revert", handleInboxAction(store, "pending"))
	mux.Handle("DELETE /v1/inbox/notifications/{id}/delete", handleInboxDelete(store, inboxRoute))
	// The same notifications from a server, with the API key
	// (docs/inbox.md, "The same notifications from a server").
	api := store.apiRoute()
	mux.Handle("GET /v2/subscribers/{subscriberId}/notifications", handleInboxNotifications(store, api))
	mux.Handle("GET /v2/subscribers/{subscriberId}/notifications/count", handleInboxCount(store, api))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/read", handleInboxMark(store, api, actionRead))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unread", handleInboxMark(store, api, actionUnread))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/archive", handleInboxMark(store, api, actionArchive))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unarchive", handleInboxMark(store, api, actionUnarchive))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/snooze", handleInboxSnooze(store, api))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unsnooze", handleInboxMark(store, api, actionUnsnooze))
	mux.Handle("POST /v2/subscribers/{subscriberId}/notifications/seen", handleInboxBulk(store, api, "seen"))
	mux.Handle("POST /v2/subscribers/{subscriberId}/notifications/read", handleInboxBulk(store, api, "read"))
	mux.Handle("POST /v2/subscribers/{subscriberId}/notifications/archive", handleInboxBulk(store, api, "archive"))
	mux.Handle("POST /v2/subscribers/{subscriberId}/notifications/read-archive", handleInboxBulk(store, api, "read-archive"))
	mux.Handle("POST /v2/subscribers/{subscriberId}/notifications/delete", handleInboxBulk(store, api, "delete"))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/complete",
		handleSubscriberNotificationAction(store, "done"))
	mux.Handle("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/revert",
		handleSubscriberNotificationAction(store, "pending"))
	mux.Handle("DELETE /v2/subscribers/{subscriberId}/notifications/{notificationId}", handleInboxDelete(store, api))
	mux.Handle("GET /socket.io/", handleSocket(store))
	if store.inbox.Preferences != nil {
		mux.Handle("GET /v1/inbox/preferences", handleInboxPreferences(store))
		mux.Handle("GET /v1/inbox/preferences/global", handleInboxGlobalPreference(store))
		mux.Handle("PATCH /v1/inbox/preferences", handleInboxPreferenceUpdate(store))
		mux.Handle("PATCH /v1/inbox/preferences/bulk", handleInboxPreferencesBulk(store))
		mux.Handle("PATCH /v1/inbox/preferences/{workflowId}", handleInboxPreferenceUpdate(store))
	}
	if store.inbox.WebPush != nil {
		mux.Handle("GET /v1/inbox/web-push", handleInboxWebPushKey(store))
		mux.Handle("POST /v1/inbox/web-push/subscriptions", handleInboxWebPushSubscribe(store))
	}
}

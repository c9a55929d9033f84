package messaging

import "net/http"

// AddRoutes registers the messaging API: the in-app feed and its read/seen
// state (docs/api.md, "The feed" and "Mark-as") and the messages list and
// deletes (docs/api.md, "Messages").
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("GET /v1/subscribers/{subscriberId}/notifications/feed", handleFeed(store))
	mux.Handle("POST /v1/subscribers/{subscriberId}/messages/mark-as", handleMarkAs(store))
	mux.Handle("GET /v1/messages", handleMessageList(store))
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
	mux.Handle("GET /v1/inbox/notifications", handleInboxNotifications(store))
	mux.Handle("GET /v1/inbox/notifications/count", handleInboxCount(store))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/read", handleInboxMark(store, actionRead))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unread", handleInboxMark(store, actionUnread))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/archive", handleInboxMark(store, actionArchive))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unarchive", handleInboxMark(store, actionUnarchive))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/snooze", handleInboxSnooze(store))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/unsnooze", handleInboxMark(store, actionUnsnooze))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/complete", handleInboxAction(store, "done"))
	mux.Handle("PATCH /v1/inbox/notifications/{id}/revert", handleInboxAction(store, "pending"))
	mux.Handle("DELETE /v1/inbox/notifications/{id}/delete", handleInboxDelete(store))
	mux.Handle("POST /v1/inbox/notifications/seen", handleInboxBulk(store, "seen"))
	mux.Handle("POST /v1/inbox/notifications/read", handleInboxBulk(store, "read"))
	mux.Handle("POST /v1/inbox/notifications/archive", handleInboxBulk(store, "archive"))
	mux.Handle("POST /v1/inbox/notifications/read-archive", handleInboxBulk(store, "read-archive"))
	mux.Handle("POST /v1/inbox/notifications/delete", handleInboxBulk(store, "delete"))
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

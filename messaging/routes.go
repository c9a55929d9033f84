package messaging

import "net/http"

// AddRoutes registers the messaging API: the in-app feed and its read/seen
// state (spec §4.4, §4.7) and the messages list and deletes (spec §4.8).
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
}

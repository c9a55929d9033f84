package activity

import "net/http"

// AddRoutes registers the trigger and activity endpoints. Triggers find
// workflows through workflows and recipients through subscribers; the lists
// embed subscribers read through subscribers too.
func AddRoutes(mux *http.ServeMux, store *Store, workflows Workflows, subscribers Subscribers) {
	t := &triggerer{store: store, workflows: workflows, subscribers: subscribers}
	mux.Handle("POST /v1/events/trigger", handleTrigger(t))
	mux.Handle("POST /v1/events/trigger/bulk", handleTriggerBulk(t))
	mux.Handle("POST /v1/events/trigger/broadcast", handleTriggerBroadcast(t))
	mux.Handle("DELETE /v1/events/trigger/{transactionId}", handleTriggerCancel(store))
	mux.Handle("GET /v1/notifications", handleNotificationList(store, subscribers))
	mux.Handle("GET /v1/notifications/{notificationId}", handleNotificationGet(store, subscribers))
}

package activity

import "net/http"

// AddRoutes registers the trigger and activity endpoints. Triggers find
// workflows through workflows and recipients through subscribers; the lists
// embed subscribers read through subscribers too. A trigger runs a first
// in-app step itself with worker's runner (inline.go); a nil worker leaves
// every step to whichever worker runs the queue.
func AddRoutes(mux *http.ServeMux, store *Store, worker *Worker, workflows Workflows, subscribers Subscribers) {
	t := newTriggerer(store, workflows, subscribers)
	if worker != nil {
		t.run = &worker.runner
	}
	mux.Handle("POST /v1/events/trigger", handleTrigger(t))
	mux.Handle("POST /v1/events/trigger/bulk", handleTriggerBulk(t))
	mux.Handle("POST /v1/events/trigger/broadcast", handleTriggerBroadcast(t))
	mux.Handle("DELETE /v1/events/trigger/{transactionId}", handleTriggerCancel(store))
	mux.Handle("GET /v1/notifications", handleNotificationList(store, subscribers))
	mux.Handle("GET /v1/notifications/{notificationId}", handleNotificationGet(store, subscribers))
	mux.Handle("GET /v1/execution-details", handleExecutionDetails(store, subscribers))
}

package subscribers

import "net/http"

// AddRoutes registers the subscriber endpoints: spec §4.1 and §4.2 plus the
// write side of contract §7.
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("POST /v1/subscribers", handleSubscriberCreate(store, false))
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
}

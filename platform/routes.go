package platform

import "net/http"

// AddRoutes registers the platform's own API routes.
func AddRoutes(mux *http.ServeMux, db *DB) {
	mux.Handle("GET /v1/environments", handleEnvironmentList(db))
}

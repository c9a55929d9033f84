package platform

import (
	"net/http"

	"github.com/herald-notify/herald/sqldb"
)

// AddRoutes registers the platform's own API routes.
func AddRoutes(mux *http.ServeMux, db *sqldb.DB) {
	mux.Handle("GET /v1/environments", handleEnvironmentList(db))
}

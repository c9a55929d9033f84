package webhooks

import "net/http"

// AddRoutes registers the outbound webhook endpoints' routes
// (docs/webhooks.md).
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("GET /v2/webhooks/event-types", handleEventTypes())
	mux.Handle("POST /v2/webhooks/endpoints", handleEndpointCreate(store))
	mux.Handle("GET /v2/webhooks/endpoints", handleEndpointList(store))
	mux.Handle("GET /v2/webhooks/endpoints/{endpointId}", handleEndpointGet(store))
	mux.Handle("PATCH /v2/webhooks/endpoints/{endpointId}", handleEndpointUpdate(store))
	mux.Handle("DELETE /v2/webhooks/endpoints/{endpointId}", handleEndpointDelete(store))
	mux.Handle("POST /v2/webhooks/endpoints/{endpointId}/secret/rotate", handleSecretRotate(store))
	mux.Handle("POST /v2/webhooks/endpoints/{endpointId}/test", handleEndpointTest(store))
	mux.Handle("GET /v2/webhooks/endpoints/{endpointId}/deliveries", handleDeliveryList(store))
	mux.Handle("POST /v2/webhooks/endpoints/{endpointId}/deliveries/{deliveryId}/replay", handleDeliveryReplay(store))
	mux.Handle("POST /v2/webhooks/endpoints/{endpointId}/replay", handleReplaySince(store))
}

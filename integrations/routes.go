package integrations

import "net/http"

// AddRoutes registers the integrations API (docs/api.md, "Integrations" and
// "The write side").
func AddRoutes(mux *http.ServeMux, store *Store) {
	mux.Handle("POST /v1/integrations", handleIntegrationCreate(store))
	mux.Handle("GET /v1/integrations", handleIntegrationList(store))
	mux.Handle("GET /v1/integrations/active", handleIntegrationActiveList(store))
	mux.Handle("GET /v1/integrations/in-app/status", handleInAppStatus(store))
	mux.Handle("GET /v1/integrations/webhook/provider/{providerId}/status", handleWebhookSupportStatus(store))
	mux.Handle("PUT /v1/integrations/{integrationId}", handleIntegrationUpdate(store))
	mux.Handle("POST /v1/integrations/{integrationId}/set-primary", handleIntegrationSetPrimary(store))
	mux.Handle("DELETE /v1/integrations/{integrationId}", handleIntegrationDelete(store))
	mux.Handle("GET /v1/integrations/{integrationId}", handleIntegrationGet(store))
	mux.Handle("POST /webhooks/organizations/{organizationId}/environments/{environmentId}/{channel}/{integrationId}", handleReceipt(store))
	mux.Handle("GET /webhooks/organizations/{organizationId}/environments/{environmentId}/{channel}/{integrationId}", handleReceipt(store))
}

package integrations

import (
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// handleInAppStatus serves GET /v1/integrations/in-app/status: whether the
// caller's environment has an active in-app integration, so an inbox can
// open sessions there.
func handleInAppStatus(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		_, err := s.InboxIntegration(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID)
		if err != nil && !errors.Is(err, platform.ErrNotFound) {
			return err
		}
		return platform.JSON(w, http.StatusOK, err == nil)
	})
}

// handleWebhookSupportStatus serves GET
// /v1/integrations/webhook/provider/{providerId}/status: whether Herald
// reads the delivery receipts of the environment's integration named by
// providerId (a providerId, or an integration's _id). An environment with
// no such integration is a 404, as there is nothing to receive them for.
func handleWebhookSupportStatus(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ref := r.PathValue("providerId")
		in, err := s.one(r.Context(), s.db, `WHERE environment_id = ? AND deleted = 0 AND (provider_id = ? OR id = ?)
			ORDER BY is_primary DESC, created_at, id LIMIT 1`, platform.TenantFrom(r.Context()).EnvironmentID, ref, ref)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Integration for %s was not found", ref)
		}
		if err != nil {
			return err
		}
		_, reads := receiptReaders[in.ProviderID]
		return platform.JSON(w, http.StatusOK, reads)
	})
}

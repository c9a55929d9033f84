package platform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// BenchmarkAuth_RevocationCheck compares what the keyring pays to notice a
// revocation made by another process: the one query it runs at most every
// 100 ms (the count of revocations), against checking the key itself on
// every request, and against an authenticated request as a whole.
func BenchmarkAuth_RevocationCheck(b *testing.B) {
	srv := platformtest.NewServer(b, nil)
	db := srv.App.DB
	hash := platform.HashAPIKey(platformtest.DevKey)
	b.Run("RevocationCountQuery", func(b *testing.B) {
		for b.Loop() {
			var n int64
			if err := db.QueryRowContext(context.Background(), `SELECT CAST(value AS INTEGER) FROM settings WHERE name = 'api_keys_revoked'`).Scan(&n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("KeyQueryPerRequest", func(b *testing.B) {
		for b.Loop() {
			var ok bool
			if err := db.QueryRowContext(context.Background(), `SELECT revoked_at IS NULL FROM api_keys WHERE hash = ?`, hash).Scan(&ok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AuthenticatedRequest", func(b *testing.B) {
		h := srv.Config.Handler
		for b.Loop() {
			req := httptest.NewRequest("GET", "/v1/nothing-here", nil)
			req.Header.Set("Authorization", "ApiKey "+platformtest.DevKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusNotFound {
				b.Fatal(w.Code)
			}
		}
	})
}

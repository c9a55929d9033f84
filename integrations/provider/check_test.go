package provider

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestCheck_FCMTokenExchange: check: true on fcm exchanges the service
// account's signed JWT for an access token, and a refusal is the check's
// failure with Google's reason.
func TestCheck_FCMTokenExchange(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		status       int
		ok           bool
	}{
		{"OK", `{"access_token":"at","expires_in":3600,"token_type":"Bearer"}`, http.StatusOK, true},
		{"ErrInvalidGrant", `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`, http.StatusBadRequest, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var grant string
			google := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				grant = r.PostForm.Get("grant_type")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			}))
			defer google.Close()
			var c Credentials
			c.Set("serviceAccount", serviceAccount(google.URL+"/token"))
			err := Check(t.Context(), "fcm", c, Deps{Client: google.Client()})
			is.Equal(grant, "urn:ietf:params:oauth:grant-type:jwt-bearer") // the service account's JWT grant
			is.Equal(err == nil, tc.ok)                                    // accepted, or refused
			if !tc.ok {
				is.True(strings.Contains(err.Error(), "Invalid JWT Signature.")) // with Google's reason
			}
		})
	}
}

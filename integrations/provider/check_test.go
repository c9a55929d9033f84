package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/platform/platformtest"
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

// TestSend_PushBatches: a provider that takes many tokens a request gets
// them in batches of its documented limit.
func TestSend_PushBatches(t *testing.T) {
	is := is.New(t)
	var sizes []int
	beams := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Users []string `json:"users"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		sizes = append(sizes, len(body.Users))
		io.WriteString(w, `{"publishId":"pb"}`)
	}))
	defer beams.Close()
	var c Credentials
	c.Set("baseUrl", beams.URL)
	c.Set("instanceId", "inst")
	c.Set("secretKey", "k")
	s, err := New("pusher-beams", c, Deps{Client: NewHTTPClient(platformtest.Loopback, 5*time.Second)})
	is.NoErr(err) // built
	tokens := make([]string, 1500)
	for i := range tokens {
		tokens[i] = fmt.Sprint("user-", i)
	}
	_, err = s.Send(t.Context(), Message{ID: "m1", DeviceTokens: tokens, Title: "T", Content: "Hi"})
	is.NoErr(err)                     // sent
	is.Equal(sizes, []int{1000, 500}) // Beams takes 1,000 users a request
}

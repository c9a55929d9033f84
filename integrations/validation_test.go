package integrations_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// TestIntegration_CreateProviderRules: Herald refuses what it cannot send
// through, with a 422 that names the field, and stores nothing
// (docs/providers.md, "Rules that hold for every provider").
func TestIntegration_CreateProviderRules(t *testing.T) {
	srv, _ := newServer(t)
	for _, tc := range []struct {
		name, body, field, says string
	}{
		{"ErrUnsupportedProvider", `{"providerId":"carrier-pigeon","channel":"sms"}`, "providerId", "twilio"},
		{"ErrProviderOfAnotherChannel", `{"providerId":"twilio","channel":"email"}`, "channel", "sms"},
		{"ErrNoSendAPI", `{"providerId":"service-email","channel":"email"}`, "providerId", "sendgrid"},
		{"ErrMissingCredential", `{"providerId":"twilio","channel":"sms","active":true,"credentials":{"accountSid":"AC1","from":"+1"}}`,
			"credentials.token", "required"},
		{"ErrServiceAccountNotJSON", `{"providerId":"fcm","channel":"push","credentials":{"serviceAccount":"{not json"}}`,
			"credentials.serviceAccount", "JSON"},
		{"ErrServiceAccountWithoutKey", `{"providerId":"fcm","channel":"push","credentials":{"serviceAccount":"{\"project_id\":\"p\",\"client_email\":\"a@p\"}"}}`,
			"credentials.serviceAccount", "private_key"},
		{"ErrServiceAccountBadKey", `{"providerId":"fcm","channel":"push","credentials":{"serviceAccount":"{\"project_id\":\"p\",\"client_email\":\"a@p\",\"private_key\":\"nope\"}"}}`,
			"credentials.serviceAccount", "PEM"},
		{"ErrAPNsKey", `{"providerId":"apns","channel":"push","credentials":{"secretKey":"not a key","apiKey":"K","projectName":"T","applicationId":"com.acme"}}`,
			"credentials.secretKey", ".p8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := len(listAll(t, srv))
			res := srv.Dev.Do(t, "POST", "/v1/integrations", tc.body)
			is.Equal(res.Status, http.StatusUnprocessableEntity) // refused
			var body struct {
				Errors map[string]struct {
					Messages []string `json:"messages"`
				} `json:"errors"`
			}
			res.Decode(t, &body)
			got, ok := body.Errors[tc.field]
			is.True(ok)                                                         // the 422 names the field
			is.True(strings.Contains(strings.Join(got.Messages, " "), tc.says)) // and says why
			is.Equal(len(listAll(t, srv)), before)                              // nothing stored
		})
	}
}

// TestIntegration_CheckDialsTheProvider: check: true makes the provider's
// cheapest authenticated call, and says when there is none to make.
func TestIntegration_CheckDialsTheProvider(t *testing.T) {
	srv, _ := newServer(t)
	var path, auth string
	status := http.StatusOK
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		w.WriteHeader(status)
		w.Write([]byte(`{"errors":[{"message":"The provided authorization grant is invalid"}]}`))
	}))
	defer api.Close()
	sendgrid := `{"providerId":"sendgrid","channel":"email","check":true,"credentials":{"apiKey":"SG.k","from":"a@b.c","baseUrl":"` + api.URL + `"}}`

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations", sendgrid)
		is.Equal(res.Status, http.StatusCreated)           // the key works: saved
		is.Equal(path, "/v3/scopes")                       // SendGrid's cheapest authenticated call
		is.Equal(auth, "Bearer SG.k")                      // with the key
		is.Equal(res.Header.Get("Herald-Check"), "dialed") // and the answer says so
	})
	t.Run("ErrRefused", func(t *testing.T) {
		is := is.New(t)
		status = http.StatusUnauthorized
		defer func() { status = http.StatusOK }()
		before := len(listAll(t, srv))
		res := srv.Dev.Do(t, "POST", "/v1/integrations", sendgrid)
		is.Equal(res.Status, http.StatusUnprocessableEntity)                          // refused
		is.True(strings.Contains(string(res.Body), "authorization grant is invalid")) // with the provider's reason
		is.True(strings.Contains(string(res.Body), "credentials.apiKey"))             // on the key
		is.True(!strings.Contains(string(res.Body), "SG.k"))                          // which is not echoed
		is.Equal(len(listAll(t, srv)), before)                                        // nothing stored
	})
	t.Run("OKShapeOnly", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"plunk","channel":"email","check":true,
			"credentials":{"apiKey":"sk_k","from":"a@b.c"}}`)
		is.Equal(res.Status, http.StatusCreated)          // nothing to call: the shape passed
		is.Equal(res.Header.Get("Herald-Check"), "shape") // and the answer says only the shape was checked
	})
}

// listAll is every live integration of the organization.
func listAll(t *testing.T, srv *platformtest.Server) []integrationBody {
	t.Helper()
	var out []integrationBody
	srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &out)
	return out
}

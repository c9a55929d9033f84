package integrations_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestIntegrations_InAppStatus(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t)
	res := srv.Dev.Do(t, "GET", "/v1/integrations/in-app/status", "")
	is.Equal(res.Status, 200)                             // answered
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // the seeded in-app integration is active

	var inApp []integrationBody
	for _, in := range list(t, srv.Dev, "/v1/integrations") {
		if in.Channel == "in_app" && in.EnvironmentID == srv.App.Development.ID {
			inApp = append(inApp, in)
		}
	}
	is.Equal(len(inApp), 1)                                                                         // one in-app integration in Development
	is.Equal(srv.Dev.Do(t, "PUT", "/v1/integrations/"+inApp[0].ID, `{"active":false}`).Status, 200) // turned off
	res = srv.Dev.Do(t, "GET", "/v1/integrations/in-app/status", "")
	is.Equal(strings.TrimSpace(string(res.Body)), "false") // no inbox sessions now
	res = srv.Prod.Do(t, "GET", "/v1/integrations/in-app/status", "")
	is.Equal(strings.TrimSpace(string(res.Body)), "true") // Production's is its own
}

func TestIntegrations_WebhookSupportStatus(t *testing.T) {
	srv, _ := newServer(t)
	sendgrid := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","credentials":{"apiKey":"k","from":"a@example.com"}}`)
	mustCreate(t, srv.Dev, `{"providerId":"email-webhook","channel":"email","credentials":{"webhookUrl":"https://mail.example.com/hook"}}`)
	for _, tc := range []struct {
		name, ref string
		status    int
		body      string
	}{
		{"OK receipts read", "sendgrid", 200, "true"},
		{"OK by integration id", sendgrid.ID, 200, "true"},
		{"OK receipts not read", "email-webhook", 200, "false"},
		{"ErrNoSuchIntegration", "mailgun", 404, ""},
		{"ErrUnknownProvider", "carrier-pigeon", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "GET", "/v1/integrations/webhook/provider/"+tc.ref+"/status", "")
			is.Equal(res.Status, tc.status) // the status
			if tc.body != "" {
				is.Equal(strings.TrimSpace(string(res.Body)), tc.body) // whether Herald reads the receipts
			}
		})
	}
	t.Run("ErrOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		res := srv.Prod.Do(t, "GET", "/v1/integrations/webhook/provider/sendgrid/status", "")
		is.Equal(res.Status, 404) // Development's integration is not Production's
	})
}

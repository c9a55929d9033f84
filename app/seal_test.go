package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// setUpChatWorkflow creates a chat-webhook integration and the workflow
// "ping" whose one step posts to the subscriber's chat webhook.
func setUpChatWorkflow(t *testing.T, srv *apptest.Server) {
	t.Helper()
	fallback := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,
		"identifier":"hook","credentials":{"webhookUrl":"`+fallback.URL+`"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi"}}]}`)
}

// A subscriber's channels as a version that did not seal them wrote them
// are delivered to, and the next start seals them.
func TestSeal_PlainChannelsDeliveredThenSealedAtStart(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := apptest.NewServer(t)
	setUpChatWorkflow(t, srv)
	hook := apptest.NewChatHook(t, http.StatusOK)
	url := hook.URL + "/services/T0SECRET/xoxSecretPath"
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"bob"}`)
	_, err := srv.App.DB.ExecContext(ctx, `UPDATE subscribers SET channels = ? WHERE subscriber_id = 'bob'`,
		`[{"providerId":"chat-webhook","integrationIdentifier":"","_integrationId":"","credentials":{"webhookUrl":"`+url+`"}}]`)
	is.NoErr(err) // written plain

	tx := apptest.Trigger(t, srv, `{"name":"ping","to":"bob"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:completed")
	is.Equal(len(hook.Received()), 1) // delivered to the webhook read plain
	_, err = srv.App.DB.ExecContext(ctx, `UPDATE messages SET direct_webhook_url = ?`, url)
	is.NoErr(err) // its message written plain too

	srv.StartAgain(t)
	var raw string
	is.NoErr(srv.App.DB.QueryRowContext(ctx, `SELECT channels FROM subscribers WHERE subscriber_id = 'bob'`).Scan(&raw)) // the row
	is.True(strings.HasPrefix(raw, "sealed:v1:"))                                                                        // sealed by the start
	is.True(!strings.Contains(raw, "xoxSecretPath"))                                                                     // no plain webhook URL left
	is.NoErr(srv.App.DB.QueryRowContext(ctx, `SELECT direct_webhook_url FROM messages`).Scan(&raw))                      // the message
	is.True(strings.HasPrefix(raw, "sealed:v1:"))                                                                        // sealed by the start too

	res := srv.Dev.Do(t, "GET", "/v1/subscribers/bob", "")
	is.Equal(res.Status, 200)                        // still read
	is.True(strings.Contains(string(res.Body), url)) // the API answers the webhook URL
	tx = apptest.Trigger(t, srv, `{"name":"ping","to":"bob"}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:completed")
	is.Equal(len(hook.Received()), 2) // and delivers to it sealed
}

// A provider that echoes the webhook URL, in its refusal or in a redirect,
// does not put it in the log.
func TestSeal_SendFailureLogsNoWebhookURL(t *testing.T) {
	for name, answer := range map[string]http.HandlerFunc{
		"refusal": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"no hook at http://` + r.Host + r.URL.RequestURI() + ` (` + r.URL.Path + `)"}`))
		},
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://"+r.Host+r.URL.RequestURI(), http.StatusMovedPermanently)
		},
	} {
		t.Run("OK "+name, func(t *testing.T) {
			is := is.New(t)
			echoing := httptest.NewServer(answer)
			t.Cleanup(echoing.Close)
			logs := &platformtest.SyncBuffer{}
			srv := apptest.NewServer(t, apptest.Logs(logs))
			setUpChatWorkflow(t, srv)
			apptest.SetUpChat(t, srv, "bob", echoing.URL+"/services/T0SECRET/xoxSecretPath?token=qSecretQuery")

			tx := apptest.Trigger(t, srv, `{"name":"ping","to":"bob"}`)
			apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:failed")
			log := logs.String()
			is.True(strings.Contains(log, `"send failed"`))  // the failure is logged
			is.True(!strings.Contains(log, "xoxSecretPath")) // without the webhook's path
			is.True(!strings.Contains(log, "qSecretQuery"))  // nor its query
		})
	}
}

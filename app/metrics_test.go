package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// call sends a request to url with key ("" sends none) and returns the
// status and body, unchecked against the API description.
func call(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "ApiKey "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func TestMetrics_ScrapeAfterATrigger(t *testing.T) {
	is := is.New(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "channel archived", http.StatusBadRequest)
	}))
	t.Cleanup(refusing.Close)
	logs := &platformtest.SyncBuffer{}
	srv := apptest.NewServer(t, apptest.Logs(logs)) // sends may reach loopback, where the refusing webhook is
	base := srv.URL
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
			"credentials":{"webhookUrl":"` + refusing.URL + `"}}`},
		{"POST", "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
			"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi"}}]}`},
		{"POST", "/v1/subscribers", `{"subscriberId":"ada"}`},
		{"PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"chat-webhook","credentials":{"webhookUrl":"` + refusing.URL + `"}}`},
	} {
		status, body := call(t, step.method, base+step.path, platformtest.DevKey, step.body)
		if status >= 300 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, status, body)
		}
	}
	before := platformtest.Scrape(t, base+"/metrics")
	_, had := platformtest.Sample(before, "herald_triggers_total", map[string]string{"status": "processed"})
	is.True(!had) // nothing triggered yet

	status, body := call(t, "POST", base+"/v1/events/trigger", platformtest.DevKey, `{"name":"ping","to":"ada"}`)
	is.Equal(status, 201) // triggered
	var ack struct {
		TransactionID string `json:"transactionId"`
	}
	is.NoErr(json.Unmarshal(body, &ack)) // the trigger's answer

	var after map[string]*dto.MetricFamily
	platformtest.Eventually(t, 10*time.Second, func() bool {
		after = platformtest.Scrape(t, base+"/metrics")
		n, _ := platformtest.Sample(after, "herald_jobs_finished_total", map[string]string{"lane": "chat", "status": "failed"})
		return n == 1
	}, "the chat job to be counted as failed")

	n, _ := platformtest.Sample(after, "herald_triggers_total", map[string]string{"status": "processed"})
	is.Equal(n, 1.0) // the trigger counted
	n, _ = platformtest.Sample(after, "herald_http_request_duration_seconds",
		map[string]string{"route": "/v1/events/trigger", "method": "POST", "status": "201"})
	is.Equal(n, 1.0) // the request counted under its route pattern
	n, _ = platformtest.Sample(after, "herald_http_request_duration_seconds",
		map[string]string{"route": "/v1/subscribers/{subscriberId}/credentials", "method": "PATCH", "status": "200"})
	is.Equal(n, 1.0) // a path with an id is counted under its pattern, not its path
	n, _ = platformtest.Sample(after, "herald_sends_duration_seconds", map[string]string{"provider": "chat-webhook", "outcome": "failed"})
	is.Equal(n, 1.0) // the refused send counted by provider and outcome
	_, ok := platformtest.Sample(after, "herald_queue_due_jobs", map[string]string{"lane": "email"})
	is.True(ok) // every lane's backlog is reported, empty ones too
	_, ok = platformtest.Sample(after, "herald_queue_oldest_due_seconds", map[string]string{"lane": "chat"})
	is.True(ok) // and the age of its oldest due job
	_, ok = platformtest.Sample(after, "go_sql_open_connections", map[string]string{"db_name": "writer"})
	is.True(ok) // the database pools' stats
	_, ok = platformtest.Sample(after, "herald_retention_removed_rows", nil)
	is.True(ok) // what the retention sweeper deleted
	_, ok = platformtest.Sample(after, "herald_inbox_sockets", nil)
	is.True(ok) // the live inbox sockets held

	var warned map[string]any
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"send failed"`) {
			is.NoErr(json.Unmarshal([]byte(line), &warned)) // the log line is JSON
		}
	}
	is.True(warned != nil)                                      // the failed send is logged
	is.Equal(warned["level"], "WARN")                           // at warn
	is.Equal(warned["workflow"], "ping")                        // with its workflow
	is.Equal(warned["step"], "chat")                            // its step
	is.Equal(warned["provider"], "chat-webhook")                // its provider
	is.Equal(warned["transaction_id"], ack.TransactionID)       // its transactionId
	is.True(strings.Contains(warned["reason"].(string), "400")) // and the provider's reason
	is.True(!strings.Contains(logs.String(), refusing.URL))     // the webhook URL, a credential, is not logged
}

func TestLogs_DeliveryThatReachesNoProviderIsLogged(t *testing.T) {
	is := is.New(t)
	logs := &platformtest.SyncBuffer{}
	base := apptest.NewServer(t, apptest.Logs(logs)).URL
	for _, step := range []struct{ path, body string }{
		{"/v2/workflows", `{"name":"Mail","workflowId":"mail","active":true,
			"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hello"}}]}`},
		{"/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`},
	} {
		if status, body := call(t, "POST", base+step.path, platformtest.DevKey, step.body); status != 201 {
			t.Fatalf("POST %s: %d %s", step.path, status, body)
		}
	}
	status, body := call(t, "POST", base+"/v1/events/trigger", platformtest.DevKey, `{"name":"mail","to":"ada"}`)
	is.Equal(status, 201) // triggered, with no email integration to send through
	var ack struct {
		TransactionID string `json:"transactionId"`
	}
	is.NoErr(json.Unmarshal(body, &ack)) // the trigger's answer

	var warned map[string]any
	platformtest.Eventually(t, 10*time.Second, func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"send failed"`) {
				return json.Unmarshal([]byte(line), &warned) == nil
			}
		}
		return false
	}, "the undeliverable step to be logged")
	is.Equal(warned["level"], "WARN")                                                           // at warn
	is.Equal(warned["outcome"], "not_sent")                                                     // it reached no provider
	is.Equal(warned["workflow"], "mail")                                                        // with its workflow
	is.Equal(warned["step"], "mail")                                                            // its step
	is.Equal(warned["transaction_id"], ack.TransactionID)                                       // its transactionId
	is.True(strings.Contains(warned["reason"].(string), "does not have an active integration")) // and why
}

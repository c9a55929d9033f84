package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herald-notify/herald/platform/platformtest"
)

const metricsKey = "metrics-test-key-0000000000000000"

// call sends a request to a server that run started and returns its status
// and body.
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

// scrape reads url's metrics with the Prometheus text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := call(t, "GET", url, "", "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return families
}

// sample returns the value of the family's series with exactly labels: a
// counter's or gauge's value, a histogram's count. ok is false when there
// is no such series.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (v float64, ok bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, want := range labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k {
					found = l.GetValue() == want
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetrics_ScrapeAfterATrigger(t *testing.T) {
	is := is.New(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "channel archived", http.StatusBadRequest)
	}))
	t.Cleanup(refusing.Close)
	base, stderr, _ := startRun(t, map[string]string{
		"HERALD_DB": ":memory:", "HERALD_API_KEY": metricsKey, "HERALD_LOG_FORMAT": "json",
		"HERALD_OUTBOUND_ALLOW": "127.0.0.0/8", // the refusing webhook is on this machine
	})
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
			"credentials":{"webhookUrl":"` + refusing.URL + `"}}`},
		{"POST", "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
			"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi"}}]}`},
		{"POST", "/v1/subscribers", `{"subscriberId":"ada"}`},
		{"PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"chat-webhook","credentials":{"webhookUrl":"` + refusing.URL + `"}}`},
	} {
		status, body := call(t, step.method, base+step.path, metricsKey, step.body)
		if status >= 300 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, status, body)
		}
	}
	before := scrape(t, base+"/metrics")
	_, had := sample(before, "herald_triggers_total", map[string]string{"status": "processed"})
	is.True(!had) // nothing triggered yet

	status, body := call(t, "POST", base+"/v1/events/trigger", metricsKey, `{"name":"ping","to":"ada"}`)
	is.Equal(status, 201) // triggered
	var ack struct {
		TransactionID string `json:"transactionId"`
	}
	is.NoErr(json.Unmarshal(body, &ack)) // the trigger's answer

	var after map[string]*dto.MetricFamily
	platformtest.Eventually(t, 10*time.Second, func() bool {
		after = scrape(t, base+"/metrics")
		n, _ := sample(after, "herald_jobs_finished_total", map[string]string{"lane": "chat", "status": "failed"})
		return n == 1
	}, "the chat job to be counted as failed")

	n, _ := sample(after, "herald_triggers_total", map[string]string{"status": "processed"})
	is.Equal(n, 1.0) // the trigger counted
	n, _ = sample(after, "herald_http_request_duration_seconds",
		map[string]string{"route": "/v1/events/trigger", "method": "POST", "status": "201"})
	is.Equal(n, 1.0) // the request counted under its route pattern
	n, _ = sample(after, "herald_http_request_duration_seconds",
		map[string]string{"route": "/v1/subscribers/{subscriberId}/credentials", "method": "PATCH", "status": "200"})
	is.Equal(n, 1.0) // a path with an id is counted under its pattern, not its path
	n, _ = sample(after, "herald_sends_duration_seconds", map[string]string{"provider": "chat-webhook", "outcome": "failed"})
	is.Equal(n, 1.0) // the refused send counted by provider and outcome
	_, ok := sample(after, "herald_queue_due_jobs", map[string]string{"lane": "email"})
	is.True(ok) // every lane's backlog is reported, empty ones too
	_, ok = sample(after, "herald_queue_oldest_due_seconds", map[string]string{"lane": "chat"})
	is.True(ok) // and the age of its oldest due job
	_, ok = sample(after, "go_sql_open_connections", map[string]string{"db_name": "writer"})
	is.True(ok) // the database pools' stats
	_, ok = sample(after, "herald_retention_removed_rows", nil)
	is.True(ok) // what the retention sweeper deleted
	_, ok = sample(after, "herald_inbox_sockets", nil)
	is.True(ok) // the live inbox sockets held

	var warned map[string]any
	for _, line := range strings.Split(stderr.String(), "\n") {
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
	is.True(!strings.Contains(stderr.String(), refusing.URL))   // the webhook URL, a credential, is not logged
}

func TestMetrics_OwnAddress(t *testing.T) {
	is := is.New(t)
	metricsAddr := freeAddr(t)
	base, _, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:", "HERALD_API_KEY": metricsKey},
		"-metrics-addr", metricsAddr)
	families := scrape(t, "http://"+metricsAddr+"/metrics")
	_, ok := sample(families, "go_goroutines", nil)
	is.True(ok) // served on the metrics address
	status, _ := call(t, "GET", base+"/metrics", "", "")
	is.Equal(status, 401) // and not beside the API, where every other path needs a key
}

func TestLogs_DeliveryThatReachesNoProviderIsLogged(t *testing.T) {
	is := is.New(t)
	base, stderr, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:", "HERALD_API_KEY": metricsKey, "HERALD_LOG_FORMAT": "json"})
	for _, step := range []struct{ path, body string }{
		{"/v2/workflows", `{"name":"Mail","workflowId":"mail","active":true,
			"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"Hello"}}]}`},
		{"/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`},
	} {
		if status, body := call(t, "POST", base+step.path, metricsKey, step.body); status != 201 {
			t.Fatalf("POST %s: %d %s", step.path, status, body)
		}
	}
	status, body := call(t, "POST", base+"/v1/events/trigger", metricsKey, `{"name":"mail","to":"ada"}`)
	is.Equal(status, 201) // triggered, with no email integration to send through
	var ack struct {
		TransactionID string `json:"transactionId"`
	}
	is.NoErr(json.Unmarshal(body, &ack)) // the trigger's answer

	var warned map[string]any
	platformtest.Eventually(t, 10*time.Second, func() bool {
		for _, line := range strings.Split(stderr.String(), "\n") {
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

func TestMetrics_AddressInUseStopsTheStart(t *testing.T) {
	is := is.New(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // an address another process holds
	defer taken.Close()
	env := map[string]string{"HERALD_DB": ":memory:", "HERALD_ADDR": "127.0.0.1:0", "HERALD_METRICS_ADDR": taken.Addr().String()}
	err = run(context.Background(), []string{"herald"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{})
	is.True(err != nil && strings.Contains(err.Error(), "metrics address")) // refused, naming the setting
}

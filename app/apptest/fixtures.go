package apptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/platform/platformtest"
)

// MustCreate posts body to path and fails the test unless it answers 201.
func MustCreate(t testing.TB, c platformtest.Client, path, body string) *platformtest.Response {
	t.Helper()
	return MustStatus(t, c, "POST", path, body, http.StatusCreated)
}

// MustStatus sends the request and fails the test unless it answers status.
func MustStatus(t testing.TB, c platformtest.Client, method, path, body string, status int) *platformtest.Response {
	t.Helper()
	res := c.Do(t, method, path, body)
	if res.Status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.Status, res.Body, status)
	}
	return res
}

// CreateHello creates the workflow "hello": one in-app step whose body is
// the Liquid template body.
func CreateHello(t testing.TB, srv *Server, body string) {
	t.Helper()
	quoted, _ := json.Marshal(body)
	MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Hello","workflowId":"hello","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":`+string(quoted)+`}}]}`)
}

// Trigger sends the trigger body and returns its transactionId, failing
// the test unless the trigger is processed.
func Trigger(t testing.TB, srv *Server, body string) string {
	t.Helper()
	var ack struct {
		Status        string `json:"status"`
		TransactionID string `json:"transactionId"`
	}
	MustCreate(t, srv.Dev, "/v1/events/trigger", body).Decode(t, &ack)
	if ack.Status != "processed" {
		t.Fatalf("trigger status %q", ack.Status)
	}
	return ack.TransactionID
}

// TriggerTo triggers workflow for subscriberID with payload (JSON) and
// returns the transactionId.
func TriggerTo(t testing.TB, srv *Server, workflow, subscriberID, payload string) string {
	t.Helper()
	return Trigger(t, srv, `{"name":"`+workflow+`","to":"`+subscriberID+`","payload":`+payload+`}`)
}

// Notification is a notification as a client reads it, with its jobs.
type Notification struct {
	ID   string `json:"_id"`
	Jobs []struct {
		ID               string `json:"_id"`
		Type             string `json:"type"`
		Status           string `json:"status"`
		ProviderID       string `json:"providerId"`
		ExecutionDetails []struct {
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"executionDetails"`
	} `json:"jobs"`
}

// NotificationOf reads the transaction's notification, if there is
// exactly one.
func NotificationOf(t testing.TB, srv *Server, txID string) (Notification, bool) {
	var out struct {
		Data []Notification `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications?transactionId="+txID, "").Decode(t, &out)
	if len(out.Data) != 1 {
		return Notification{}, false
	}
	return out.Data[0], true
}

// WaitJobs polls the transaction's notification until its jobs have the
// given "type:status" list, and returns it.
func WaitJobs(t testing.TB, srv *Server, txID string, want ...string) Notification {
	t.Helper()
	var last Notification
	platformtest.Eventually(t, 10*time.Second, func() bool {
		var ok bool
		if last, ok = NotificationOf(t, srv, txID); !ok {
			return false
		}
		var got []string
		for _, j := range last.Jobs {
			got = append(got, j.Type+":"+j.Status)
		}
		return strings.Join(got, ",") == strings.Join(want, ",")
	}, "jobs to become "+strings.Join(want, ","))
	return last
}

// WaitFailures polls until the transaction's job at index job has recorded
// n failed attempts and is queued again. A job is queued before its first
// attempt too, so its status alone cannot tell that an attempt is recorded.
func WaitFailures(t testing.TB, srv *Server, txID string, job, n int) {
	t.Helper()
	platformtest.Eventually(t, 10*time.Second, func() bool {
		got, ok := NotificationOf(t, srv, txID)
		return ok && len(got.Jobs) > job && got.Jobs[job].Status == "queued" && got.Failures(job) == n
	}, fmt.Sprintf("job %d to record %d failed attempts", job, n))
}

// Failures counts the Failed execution details of the job at index job.
func (n Notification) Failures(job int) int {
	failed := 0
	for _, d := range n.Jobs[job].ExecutionDetails {
		if d.Status == "Failed" {
			failed++
		}
	}
	return failed
}

// ChatHook is a webhook endpoint that records what is posted to it and
// answers with status.
type ChatHook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	status int
}

// NewChatHook starts a ChatHook, closed when the test ends.
func NewChatHook(t testing.TB, status int) *ChatHook {
	h := &ChatHook{status: status}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		status := h.status
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Close)
	return h
}

// Received is every body posted so far, in order.
func (h *ChatHook) Received() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.bodies...)
}

// SetUpChat creates a subscriber whose chat-webhook credentials point at url.
func SetUpChat(t testing.TB, srv *Server, subscriberID, url string) {
	t.Helper()
	MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+subscriberID+`"}`)
	res := srv.Dev.Do(t, "PATCH", "/v1/subscribers/"+subscriberID+"/credentials",
		`{"providerId":"chat-webhook","credentials":{"webhookUrl":"`+url+`"}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("credentials: %d %s", res.Status, res.Body)
	}
}

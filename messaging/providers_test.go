package messaging_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// providerAPI is a provider's API double: it answers each request with what
// answer returns for its body, and keeps the bodies.
type providerAPI struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newProviderAPI(t *testing.T, answer func(n int, body string, w http.ResponseWriter)) *providerAPI {
	a := &providerAPI{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.bodies = append(a.bodies, string(b))
		n := len(a.bodies)
		a.mu.Unlock()
		answer(n, string(b), w)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *providerAPI) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.bodies)
}

// jobDetail is an execution detail with its raw answer.
type jobDetail struct {
	Status string  `json:"status"`
	Detail string  `json:"detail"`
	Raw    *string `json:"raw"`
}

// stepDetails are the execution details of the transaction's job at index job.
func stepDetails(t *testing.T, srv *apptest.Server, txID string, job int) []jobDetail {
	t.Helper()
	var out struct {
		Data []struct {
			Jobs []struct {
				ExecutionDetails []jobDetail `json:"executionDetails"`
			} `json:"jobs"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications?transactionId="+txID, "").Decode(t, &out)
	if len(out.Data) != 1 || len(out.Data[0].Jobs) <= job {
		t.Fatalf("no job %d for %s", job, txID)
	}
	return out.Data[0].Jobs[job].ExecutionDetails
}

// oneStep creates the workflow "one" with a single step of channel.
func oneStep(t *testing.T, srv *apptest.Server, channel string) {
	t.Helper()
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"One","workflowId":"one","active":true,
		"steps":[{"name":"Step","type":"`+channel+`","controlValues":{"subject":"Hello","body":"Hi {{ payload.name }}"}}]}`)
}

func TestDelivery_ChatWebhookFallsBackToTheIntegration(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	hook := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,
		"credentials":{"webhookUrl":"`+hook.URL+`"}}`)
	oneStep(t, srv, "chat")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"new"}`) // no chat credentials of its own

	tx := apptest.Trigger(t, srv, `{"name":"one","to":"new","payload":{"name":"Bea"}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:completed")
	got := hook.Received()
	is.Equal(len(got), 1)                 // the integration's own webhook got it
	is.Equal(got[0]["content"], "Hi Bea") // rendered
}

func TestDelivery_ProviderMessageIDIsRecorded(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	api := newProviderAPI(t, func(_ int, _ string, w http.ResponseWriter) {
		w.Header().Set("X-Message-Id", "sg-42")
		w.WriteHeader(http.StatusAccepted)
	})
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"sendgrid","channel":"email","active":true,
		"credentials":{"apiKey":"SG.k","from":"no-reply@acme.test","baseUrl":"`+api.URL+`"}}`)
	oneStep(t, srv, "email")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`)

	tx := apptest.Trigger(t, srv, `{"name":"one","to":"ada","payload":{"name":"Ada"}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:completed")
	details := stepDetails(t, srv, tx, 1)
	last := details[len(details)-1]
	is.Equal(last.Detail, "Message sent")                              // the step succeeded
	is.True(last.Raw != nil && strings.Contains(*last.Raw, `"sg-42"`)) // with the provider's message id
	var msgs struct {
		Data []struct {
			Identifier string `json:"identifier"`
			Status     string `json:"status"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?channel=email", "").Decode(t, &msgs)
	is.Equal(len(msgs.Data), 1)                // one email
	is.Equal(msgs.Data[0].Identifier, "sg-42") // the message records the provider's id
	is.Equal(msgs.Data[0].Status, "sent")      // sent
}

func TestDelivery_RetryAfterIsHonoured(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	api := newProviderAPI(t, func(n int, _ string, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "300")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"sendgrid","channel":"email","active":true,
		"credentials":{"apiKey":"SG.k","from":"no-reply@acme.test","baseUrl":"`+api.URL+`"}}`)
	oneStep(t, srv, "email")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`)

	start := srv.App.Clock.Now()
	tx := apptest.Trigger(t, srv, `{"name":"one","to":"ada"}`)
	apptest.WaitFailures(t, srv, tx, 1, 1)
	details := stepDetails(t, srv, tx, 1)
	_, at, ok := strings.Cut(details[len(details)-1].Detail, "retrying at ")
	is.True(ok) // the retry is scheduled
	when, err := time.Parse(time.RFC3339, at)
	is.NoErr(err)                              // at a time
	is.True(when.Sub(start) > 299*time.Second) // no sooner than the provider asked, not the 10 s backoff
	srv.App.Clock.Advance(301 * time.Second)   // past it
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:completed")
	is.Equal(api.count(), 2) // sent again once
}

func TestDelivery_DeadPushTokenIsRemoved(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	api := newProviderAPI(t, func(_ int, body string, w http.ResponseWriter) {
		var msgs []struct {
			To string `json:"to"`
		}
		json.Unmarshal([]byte(body), &msgs)
		var tickets []any
		for _, m := range msgs {
			if m.To == "dead-token-0123456789" {
				tickets = append(tickets, map[string]any{"status": "error", "message": "gone", "details": map[string]string{"error": "DeviceNotRegistered"}})
			} else {
				tickets = append(tickets, map[string]any{"status": "ok", "id": "ticket-" + m.To})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": tickets})
	})
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"expo","channel":"push","active":true,
		"credentials":{"apiKey":"ex","baseUrl":"`+api.URL+`"}}`)
	oneStep(t, srv, "push")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	res := srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"expo","credentials":{"deviceTokens":["live-token-0123456789","dead-token-0123456789"]}}`)
	is.Equal(res.Status, http.StatusOK) // two device tokens

	tx := apptest.Trigger(t, srv, `{"name":"one","to":"ada","payload":{"name":"Ada"}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "push:completed")
	var sub struct {
		Channels []struct {
			ProviderID  string `json:"providerId"`
			Credentials struct {
				DeviceTokens []string `json:"deviceTokens"`
			} `json:"credentials"`
		} `json:"channels"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub)
	is.Equal(len(sub.Channels), 1)                                                        // the expo entry
	is.Equal(sub.Channels[0].Credentials.DeviceTokens, []string{"live-token-0123456789"}) // the dead token is gone, the live one kept
	named, whole := false, false
	for _, d := range stepDetails(t, srv, tx, 1) {
		named = named || strings.Contains(d.Detail, "no longer knows: dead-t…;")
		whole = whole || strings.Contains(d.Detail, "dead-token-0123456789")
	}
	is.True(named)  // the execution detail names the dead token by its first characters
	is.True(!whole) // and not whole
}

package integrations_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// TestSend_NamesTheReceiptRouteAsStatusCallback: with a public URL set,
// a send through a provider whose send call can name a status callback
// (Twilio's StatusCallback, Vonage's callback, Plivo's url, Telnyx's
// webhook_url, MessageBird's reportUrl) names the integration's receipt route, so that the
// provider posts the message's fate where Herald reads it; without
// inbound webhooks enabled, it names none.
func TestSend_NamesTheReceiptRouteAsStatusCallback(t *testing.T) {
	const public = "https://herald.example.com"
	for _, tc := range []struct {
		provider    string
		credentials map[string]any
		field       string // where the send carries the callback
		inbound     bool
	}{
		{"twilio", map[string]any{"accountSid": "AC1", "token": "t", "from": "+15550000000"}, "StatusCallback", true},
		{"nexmo", map[string]any{"apiKey": "k", "secretKey": "s", "from": "+15550000000"}, "callback", true},
		{"plivo", map[string]any{"accountSid": "MA1", "token": "t", "from": "+15550000000"}, "url", true},
		{"telnyx", map[string]any{"apiKey": "k", "from": "+15550000000"}, "webhook_url", true},
		{"messagebird", map[string]any{"accessKey": "k", "from": "+15550000000"}, "reportUrl", true},
		{"twilio", map[string]any{"accountSid": "AC1", "token": "t", "from": "+15550000000"}, "StatusCallback", false},
	} {
		name := tc.provider
		if !tc.inbound {
			name += " without inbound webhooks"
		}
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			var mu sync.Mutex
			var got map[string]string
			double := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				fields := map[string]string{}
				var doc map[string]any
				if json.Unmarshal(body, &doc) == nil {
					for k, v := range doc {
						if s, ok := v.(string); ok {
							fields[k] = s
						}
					}
				} else {
					form, _ := url.ParseQuery(string(body))
					for k := range form {
						fields[k] = form.Get(k)
					}
				}
				mu.Lock()
				got = fields
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"sid": "p-1", "message_uuid": []string{"p-1"}, "data": map[string]string{"id": "p-1"},
					"messages": []map[string]string{{"message-id": "p-1", "status": "0"}}})
			}))
			t.Cleanup(double.Close)
			srv := apptest.NewServer(t, apptest.PublicURL(public))
			creds := map[string]any{"baseUrl": double.URL}
			for k, v := range tc.credentials {
				creds[k] = v
			}
			body, _ := json.Marshal(map[string]any{"providerId": tc.provider, "channel": "sms", "credentials": creds, "active": true,
				"check": false, "configurations": map[string]any{"inboundWebhookEnabled": tc.inbound, "inboundWebhookSigningKey": "k"}})
			var in struct {
				ID string `json:"_id"`
			}
			apptest.MustCreate(t, srv.Dev, "/v1/integrations", string(body)).Decode(t, &in)
			apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Text","workflowId":"text","active":true,
				"steps":[{"name":"S","type":"sms","controlValues":{"body":"Hello"}}]}`)
			apptest.Trigger(t, srv, `{"name":"text","to":{"subscriberId":"ada","phone":"+15551234567"}}`)
			deadline := time.Now().Add(10 * time.Second)
			sent := func() map[string]string {
				mu.Lock()
				defer mu.Unlock()
				return got
			}
			for sent() == nil && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			is.True(sent() != nil) // the provider was called
			want := public + "/webhooks/organizations/" + srv.App.Development.OrganizationID + "/environments/" +
				srv.App.Development.ID + "/sms/" + in.ID
			if !tc.inbound {
				want = ""
			}
			is.Equal(sent()[tc.field], want) // the receipt route, or none
			if tc.inbound {
				is.True(strings.HasPrefix(sent()[tc.field], public)) // at the public URL
			}
		})
	}
}

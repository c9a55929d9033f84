package messaging_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/outbound"
)

func mustAllow(t *testing.T, list string) *outbound.Guard {
	t.Helper()
	o, err := outbound.ParseAllow(list)
	if err != nil {
		t.Fatalf("allow list %q: %v", list, err)
	}
	return o
}

// hookURL is the receiver's URL with its host written as host.
func hookURL(t *testing.T, hook *apptest.ChatHook, host string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(hook.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + net.JoinHostPort(host, port) + "/chat"
}

// chatWorkflow creates the chat workflow "ping" and an active chat-webhook
// integration posting to url.
func chatWorkflow(t *testing.T, srv *apptest.Server, url string) {
	t.Helper()
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"hook",
		"credentials":{"webhookUrl":"`+url+`"}}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Ping","workflowId":"ping","active":true,
		"steps":[{"name":"Chat","type":"chat","controlValues":{"body":"Hi {{ payload.name }}"}}]}`)
}

func TestOutbound_ChatWebhook(t *testing.T) {
	for _, tc := range []struct {
		name  string
		allow string // HERALD_OUTBOUND_ALLOW
		host  string // how the webhook URL names the receiver on 127.0.0.1
		sent  bool
	}{
		{"ErrLoopbackRefused", "", "127.0.0.1", false},
		{"ErrNameOfLoopbackRefused", "", "localhost", false},
		{"ErrOtherRangeAllowed", "10.0.0.0/8,example.com", "127.0.0.1", false},
		{"ErrMappedLoopbackRefused", "", "::ffff:127.0.0.1", false},
		{"OKAllowedByCIDR", "127.0.0.0/8", "127.0.0.1", true},
		{"OKAllowedByName", "LocalHost.", "localhost", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv := apptest.NewServer(t, apptest.Outbound(mustAllow(t, tc.allow)))
			hook := apptest.NewChatHook(t, http.StatusOK)
			chatWorkflow(t, srv, hookURL(t, hook, tc.host))
			apptest.SetUpChat(t, srv, "bob", hookURL(t, hook, tc.host))

			tx := apptest.Trigger(t, srv, `{"name":"ping","to":"bob","payload":{"name":"Bea"}}`)
			if tc.sent {
				apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:completed")
				is.Equal(len(hook.Received()), 1) // the allowed receiver got the message
				return
			}
			n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:failed") // refused at once, not retried
			var details []string
			for _, d := range n.Jobs[1].ExecutionDetails {
				details = append(details, d.Detail)
			}
			all := strings.Join(details, "\n")
			is.True(strings.Contains(all, "is on a private network")) // the detail says why
			is.True(strings.Contains(all, "HERALD_OUTBOUND_ALLOW"))   // and names the setting
			is.Equal(len(hook.Received()), 0)                         // the receiver saw nothing
		})
	}
}

// TestOutbound_SendFollowsNoRedirect: a receiver that is allowed cannot
// pass the send on, not even to a path of its own host.
func TestOutbound_SendFollowsNoRedirect(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	hook := apptest.NewChatHook(t, http.StatusOK)
	redirector := httptest.NewServer(http.RedirectHandler(hook.URL+"/stolen", http.StatusTemporaryRedirect))
	t.Cleanup(redirector.Close)
	chatWorkflow(t, srv, redirector.URL+"/chat")
	apptest.SetUpChat(t, srv, "bob", redirector.URL+"/chat")

	tx := apptest.Trigger(t, srv, `{"name":"ping","to":"bob","payload":{"name":"Bea"}}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "chat:failed")
	is.True(strings.Contains(n.Jobs[1].ExecutionDetails[len(n.Jobs[1].ExecutionDetails)-1].Detail, "redirects are not followed")) // says why
	is.Equal(len(hook.Received()), 0)                                                                                             // the redirect's target saw nothing
}

package console_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// api reads an API answer into v.
func api(t *testing.T, c platformtest.Client, path string, v any) {
	t.Helper()
	res := c.Do(t, "GET", path, "")
	if res.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	if err := json.Unmarshal(res.Body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func TestActivity_ListAndNotification(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	b := member(t, srv, "viewer@example.com", platform.RoleViewer)
	var list struct {
		Data []struct {
			ID            string `json:"_id"`
			TransactionID string `json:"transactionId"`
		} `json:"data"`
	}
	api(t, srv.Dev, "/v1/notifications", &list)
	n := list.Data[0]

	for _, tc := range []struct {
		name, query string
		status      int
		shows       string
	}{
		{"OK everything", "", 200, n.TransactionID},
		{"OK by transaction", "?transactionId=" + n.TransactionID, 200, n.TransactionID},
		{"OK by subscriber", "?search=ada", 200, n.TransactionID},
		{"OK by workflow and channel", "?channels=email&severity=none", 200, n.TransactionID},
		{"OK a search that finds none", "?search=nobody", 200, "No notification matches"},
		{"OK a local time range", "?afterLocal=2000-01-01T00%3A00&beforeLocal=2999-01-01T00%3A00", 200, n.TransactionID},
		{"ErrUnknownChannel", "?channels=pigeon", 422, "channels must be one of"},
		{"ErrEmptyRange", "?after=2030-01-01T00:00:00Z&before=2020-01-01T00:00:00Z", 400, "after (2030"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := b.get(devURL(srv, "activity") + tc.query)
			is.Equal(res.status, tc.status)               // as the API answers the same filters
			is.True(strings.Contains(res.body, tc.shows)) // what the page shows
		})
	}

	t.Run("the notification's page", func(t *testing.T) {
		is := is.New(t)
		platformtest.Eventually(t, 5*time.Second, func() bool {
			return strings.Contains(b.get(devURL(srv, "activity", n.ID)).body, "Message sent")
		}, "the in-app step to be sent")
		res := b.get(devURL(srv, "activity", n.ID))
		is.Equal(res.status, 200)                                                        // the notification
		is.True(strings.Contains(res.body, `class="timeline"`))                          // its steps as a timeline
		is.True(strings.Contains(res.body, "Hello Ada"))                                 // the in-app card as received
		is.True(strings.Contains(res.body, devURL(srv, "subscribers", "ada")))           // a link to the subscriber
		is.Equal(b.get(devURL(srv, "activity", "0123456789abcdef01234567")).status, 404) // an unknown id
		is.Equal(b.get(devURL(srv, "activity", "not-an-id")).status, 404)                // a malformed one
	})
	t.Run("an email in its frame", func(t *testing.T) {
		is := is.New(t)
		var msgs struct {
			Data []struct {
				ID      string `json:"_id"`
				Channel string `json:"channel"`
			} `json:"data"`
		}
		api(t, srv.Dev, "/v1/messages?limit=10", &msgs)
		for _, m := range msgs.Data {
			res := b.get(devURL(srv, "messages", m.ID, "email"))
			if m.Channel != "email" {
				is.Equal(res.status, 404) // only an email has a frame
				continue
			}
			is.Equal(res.status, 200)                                                                      // the email as sent
			is.True(strings.Contains(res.body, "Hi Ada"))                                                  // rendered
			is.True(strings.HasPrefix(res.header.Get("Content-Security-Policy"), "sandbox;"))              // nothing in it runs
			is.True(strings.Contains(res.header.Get("Content-Security-Policy"), "frame-ancestors 'self'")) // only the console frames it
		}
	})
}

func TestSubscriber_Edits(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	b := member(t, srv, "editor@example.com", platform.RoleEditor)
	page := devURL(srv, "subscribers", "ada")
	var sub struct {
		LastName *string `json:"lastName"`
		Email    *string `json:"email"`
		Data     any     `json:"data"`
		Channels []struct {
			ProviderID  string `json:"providerId"`
			Credentials struct {
				WebhookURL   *string  `json:"webhookUrl"`
				DeviceTokens []string `json:"deviceTokens"`
			} `json:"credentials"`
		} `json:"channels"`
	}
	profile := url.Values{"firstName": {"Ada"}, "lastName": {"Lovelace"}, "email": {"ada@example.com"}, "data": {`{"plan":"pro"}`}}

	t.Run("ErrBadEmailChangesNothing", func(t *testing.T) {
		is := is.New(t)
		bad := url.Values{"firstName": {"Ada"}, "lastName": {"Byron"}, "email": {"not an email"}}
		res := b.post(page+"/profile", bad)
		is.Equal(res.status, 422)                                            // refused
		is.True(strings.Contains(res.body, "must be a valid email address")) // saying why, by the field
		is.True(strings.Contains(res.body, `value="Byron"`))                 // with what was typed
		api(t, srv.Dev, "/v1/subscribers/ada", &sub)
		is.True(sub.LastName == nil) // nothing changed
	})
	t.Run("OK profile", func(t *testing.T) {
		is := is.New(t)
		is.Equal(b.post(page+"/profile", profile).status, 303) // saved
		api(t, srv.Dev, "/v1/subscribers/ada", &sub)
		is.Equal(*sub.LastName, "Lovelace")               // as the API reads it
		is.Equal(sub.Data, map[string]any{"plan": "pro"}) // data as an object
	})
	t.Run("OK credentials", func(t *testing.T) {
		is := is.New(t)
		is.Equal(b.post(page+"/credentials", url.Values{"providerId": {"slack"}, "credentials.webhookUrl": {"https://hooks.slack.com/x/y"}}).status, 303)
		for _, token := range []string{"token-one-1111", "token-two-2222"} {
			is.Equal(b.post(page+"/credentials", url.Values{"providerId": {"fcm"}, "credentials.deviceToken": {token}}).status, 303) // a token added
		}
		api(t, srv.Dev, "/v1/subscribers/ada", &sub)
		is.Equal(len(sub.Channels), 2) // both channels
		for _, c := range sub.Channels {
			if c.ProviderID == "fcm" {
				is.Equal(c.Credentials.DeviceTokens, []string{"token-one-1111", "token-two-2222"}) // each token kept
			}
		}
		res := b.get(page)
		is.True(strings.Contains(res.body, "••••1111")) // a token by its last four
		fp := regexp.MustCompile(`name="token" value="([0-9a-f]+)"`).FindStringSubmatch(res.body)
		is.True(fp != nil)                                                                                            // named in the form by a fingerprint
		is.Equal(b.post(page+"/credentials/remove", url.Values{"providerId": {"fcm"}, "token": {fp[1]}}).status, 303) // one removed
		api(t, srv.Dev, "/v1/subscribers/ada", &sub)
		for _, c := range sub.Channels {
			if c.ProviderID == "fcm" {
				is.Equal(len(c.Credentials.DeviceTokens), 1) // the other stays
			}
		}
		is.Equal(b.post(page+"/credentials/remove", url.Values{"providerId": {"slack"}}).status, 303) // a whole channel removed
		is.Equal(b.post(page+"/credentials", url.Values{"providerId": {"fcm"}}).status, 422)          // nothing to save
	})
	t.Run("OK a preference off", func(t *testing.T) {
		is := is.New(t)
		res := b.post(page+"/preferences", url.Values{"workflow": {"welcome"}, "channel": {"email"}, "enabled": {"false"}})
		is.Equal(res.status, 303) // saved
		var prefs struct {
			Workflows []struct {
				Channels map[string]bool `json:"channels"`
			} `json:"workflows"`
		}
		api(t, srv.Dev, "/v2/subscribers/ada/preferences", &prefs)
		is.Equal(prefs.Workflows[0].Channels["email"], false) // the API reads it off
		is.Equal(prefs.Workflows[0].Channels["in_app"], true) // and the other channel on
		is.Equal(b.post(page+"/preferences", url.Values{"workflow": {"nope"}, "channel": {"email"}, "enabled": {"true"}}).status, 404)
	})
	t.Run("OK topics", func(t *testing.T) {
		is := is.New(t)
		bob := devURL(srv, "subscribers", "bob")
		is.Equal(b.post(bob+"/topics", url.Values{"key": {"beta"}}).status, 303)  // joined
		is.True(strings.Contains(b.get(bob).body, devURL(srv, "topics", "beta"))) // and listed with a link
		is.Equal(b.post(bob+"/topics", url.Values{"key": {"beta"}, "remove": {"1"}}).status, 303)
		is.True(!strings.Contains(b.get(bob).body, devURL(srv, "topics", "beta"))) // left
		res := b.post(bob+"/topics", url.Values{"key": {"no-such-topic"}})
		is.Equal(res.status, 422)                        // an unknown topic
		is.True(strings.Contains(res.body, "not found")) // is said
	})
	is.New(t).Equal(b.get(devURL(srv, "subscribers", "nobody")).status, 404) // an unknown subscriber
}

func TestSubscribers_Search(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	b := member(t, srv, "viewer@example.com", platform.RoleViewer)
	for _, tc := range []struct {
		query      string
		status     int
		shows, not string
	}{
		{"", 200, "bob", "No subscriber matches"},
		{"?subscriberId=ada", 200, "ada@example.com", "/subscribers/bob\""},
		{"?name=Bo", 200, "/subscribers/bob\"", "/subscribers/ada\""},
		{"?email=nobody", 200, "No subscriber matches", "ada@example.com"},
		{"?after=garbage", 422, "cursor", "ada@example.com"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			is := is.New(t)
			res := b.get(devURL(srv, "subscribers") + tc.query)
			is.Equal(res.status, tc.status)               // as GET /v2/subscribers answers
			is.True(strings.Contains(res.body, tc.shows)) // what it finds
			is.True(!strings.Contains(res.body, tc.not))  // and not
		})
	}
}

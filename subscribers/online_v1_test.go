package subscribers_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

// The reference's older Node client sends the online flag as online.
func TestSubscriberOnlineStatus_OlderClientFlag(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev
	mustCreateSubscriber(t, c, `{"subscriberId":"ada"}`)
	type online struct {
		IsOnline bool `json:"isOnline"`
	}
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"OK online", `{"online":true}`, true},
		{"OK offline", `{"online":false}`, false},
		{"OK isOnline wins", `{"isOnline":true,"online":false}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var got online
			mustDo(t, c, "PATCH", "/v1/subscribers/ada/online-status", tc.body, 200, &got)
			is.Equal(got.IsOnline, tc.want) // the flag as sent
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"ErrNeither", `{}`},
		{"ErrOnlineNotBool", `{"online":"yes"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, "PATCH", "/v1/subscribers/ada/online-status", tc.body)
			is.Equal(res.Status, 422) // refused
			var e errorJSON
			is.NoErr(json.Unmarshal(res.Body, &e))
			is.True(len(e.Errors) == 1) // one field named
		})
	}
}

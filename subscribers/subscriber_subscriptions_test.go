package subscribers_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

type subscriptionPage struct {
	Data []struct {
		ID         string `json:"_id"`
		Identifier string `json:"identifier"`
		Topic      struct {
			Key string `json:"key"`
		} `json:"topic"`
		Subscriber struct {
			SubscriberID string `json:"subscriberId"`
		} `json:"subscriber"`
	} `json:"data"`
	Next *string `json:"next"`
}

func TestSubscriberSubscriptions_List(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	for _, id := range []string{"ada", "bob", "cy"} {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+id+`"}`)
	}
	apptest.MustCreate(t, srv.Dev, "/v2/topics/news/subscriptions", `{"subscriptions":["ada","bob"]}`)
	apptest.MustCreate(t, srv.Dev, "/v2/topics/alerts/subscriptions", `{"subscriptions":["ada"]}`)

	var page subscriptionPage
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/ada/subscriptions", "", 200).Decode(t, &page)
	is.Equal(len(page.Data), 2)                           // each of ada's topics
	is.Equal(page.Data[0].Subscriber.SubscriberID, "ada") // with the subscriber
	is.Equal(page.Data[0].Topic.Key, "alerts")            // newest first
	is.Equal(page.Data[0].Identifier, "tk_alerts:si_ada") // and its identifier
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/ada/subscriptions?key=news", "", 200).Decode(t, &page)
	is.True(len(page.Data) == 1 && page.Data[0].Topic.Key == "news") // of one topic
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/ada/subscriptions?limit=1", "", 200).Decode(t, &page)
	is.True(len(page.Data) == 1 && page.Next != nil) // a page, and a cursor past it
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/ada/subscriptions?limit=1&after="+url.QueryEscape(*page.Next), "", 200).Decode(t, &page)
	is.True(len(page.Data) == 1 && page.Data[0].Topic.Key == "news" && page.Next == nil) // the rest
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/subscribers/cy/subscriptions", "", 200).Decode(t, &page)
	is.Equal(len(page.Data), 0) // none for a subscriber in no topic

	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"unknown subscriber", "/v2/subscribers/nobody/subscriptions", 404},
		{"limit out of range", "/v2/subscribers/ada/subscriptions?limit=0", 422},
		{"both cursors", "/v2/subscribers/ada/subscriptions?after=a&before=b", 422},
		{"a forged cursor", "/v2/subscribers/ada/subscriptions?after=nope", 422},
		{"unknown order", "/v2/subscribers/ada/subscriptions?orderBy=name", 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(srv.Dev.Do(t, "GET", tc.path, "").Status, tc.status) // refused
		})
	}
}

func TestSubscriberSubscriptions_Update(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada"}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"bob"}`)
	apptest.MustCreate(t, srv.Dev, "/v2/topics/news/subscriptions", `{"subscriptions":["ada"]}`)
	const path = "/v2/topics/news/subscriptions/tk_news:si_ada"
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"preferences per subscription", path, `{"preferences":["welcome"]}`, 422},
		{"a name too long", path, `{"name":"` + strings.Repeat("n", 257) + `"}`, 422},
		{"a name of the wrong type", path, `{"name":7}`, 422},
		{"not JSON", path, `{`, 400},
		{"not subscribed", "/v2/topics/news/subscriptions/tk_news:si_bob", `{"name":"x"}`, 404},
		{"an identifier of another topic", "/v2/topics/news/subscriptions/tk_other:si_ada", `{"name":"x"}`, 404},
		{"unknown topic", "/v2/topics/nope/subscriptions/tk_nope:si_ada", `{"name":"x"}`, 404},
		{"an invalid topic key", "/v2/topics/a%20b/subscriptions/x", `{"name":"x"}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(srv.Dev.Do(t, "PATCH", tc.path, tc.body).Status, tc.status) // refused
		})
	}
	is := is.New(t)
	var got struct {
		Name *string `json:"name"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", path, "", 200).Decode(t, &got)
	is.True(got.Name == nil) // nothing refused named it

	var sub struct {
		ID         string `json:"_id"`
		Identifier string `json:"identifier"`
		Name       string `json:"name"`
		Topic      struct {
			Key string `json:"key"`
		} `json:"topic"`
		Subscriber struct {
			FirstName string `json:"firstName"`
		} `json:"subscriber"`
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
	}
	apptest.MustStatus(t, srv.Dev, "PATCH", path, `{"name":"Ada's news"}`, 200).Decode(t, &sub)
	is.Equal(sub.Name, "Ada's news")           // named
	is.Equal(sub.Identifier, "tk_news:si_ada") // the subscription
	is.Equal(sub.Topic.Key, "news")            // of its topic
	is.Equal(sub.Subscriber.FirstName, "Ada")  // and its subscriber
	is.True(sub.UpdatedAt >= sub.CreatedAt)    // changed now
	apptest.MustStatus(t, srv.Dev, "GET", path, "", 200).Decode(t, &got)
	is.True(got.Name != nil && *got.Name == "Ada's news") // it reads back
	apptest.MustStatus(t, srv.Dev, "PATCH", path, `{}`, 200).Decode(t, &sub)
	is.Equal(sub.Name, "Ada's news") // a body without a name keeps it
}

package messaging_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// feedIDs triggers the in-app workflow "hello" n times for subscriberID and
// returns the feed's message ids, newest first.
func feedIDs(t *testing.T, srv *apptest.Server, subscriberID string, n int) []string {
	t.Helper()
	for i := range n {
		apptest.Trigger(t, srv, fmt.Sprintf(`{"name":"hello","to":%q,"payload":{"n":%d}}`, subscriberID, i))
	}
	// A trigger writes its first in-app message itself, unless it runs out
	// of time and leaves it to the worker: the feed is polled.
	var ids []string
	platformtest.Eventually(t, 10*time.Second, func() bool {
		var feed struct {
			Data []struct {
				ID string `json:"_id"`
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/subscribers/"+subscriberID+"/notifications/feed?limit=100", "").Decode(t, &feed)
		ids = ids[:0]
		for _, m := range feed.Data {
			ids = append(ids, m.ID)
		}
		return len(ids) == n
	}, fmt.Sprintf("%d messages in the feed", n))
	return ids
}

// withoutTimes decodes messages and drops the fields that hold the time of
// the request, so two answers to the same change compare equal.
func withoutTimes(t *testing.T, res *platformtest.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	res.Decode(t, &out)
	for _, m := range out {
		delete(m, "lastSeenDate")
		delete(m, "lastReadDate")
		delete(m, "updatedAt")
	}
	return out
}

func feedTotal(t *testing.T, srv *apptest.Server, subscriberID, query string) int {
	t.Helper()
	var page struct {
		TotalCount int `json:"totalCount"`
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/"+subscriberID+"/notifications/feed?"+query, "").Decode(t, &page)
	return page.TotalCount
}

func TestLegacy_MarkAsAnswersWhatMarkAsAnswers(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	ids := feedIDs(t, srv, "ada", 2)

	legacy := srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":"`+ids[0]+`","mark":{"seen":true,"read":true}}`)
	is.Equal(legacy.Status, 201) // as mark-as
	modern := srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":["`+ids[0]+`"],"markAs":"read"}`)
	is.Equal(modern.Status, 201)                               // the modern route
	is.Equal(withoutTimes(t, legacy), withoutTimes(t, modern)) // the same answer
	is.Equal(feedTotal(t, srv, "ada", "read=true"), 1)         // one message read
	legacy = srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":["`+ids[1]+`"],"mark":{"seen":true}}`)
	is.Equal(legacy.Status, 201)                       // seen alone
	is.Equal(feedTotal(t, srv, "ada", "seen=true"), 2) // both seen
	is.Equal(feedTotal(t, srv, "ada", "read=true"), 1) // still one read
}

func TestLegacy_UnseenCountIsTheFeedsCount(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	ids := feedIDs(t, srv, "ada", 3)
	count := func(query string) int {
		var c struct {
			Count *int `json:"count"`
		}
		res := srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/unseen"+query, "")
		is.Equal(res.Status, 200) // counted
		res.Decode(t, &c)
		is.True(c.Count != nil) // {count}
		return *c.Count
	}
	is.Equal(count(""), feedTotal(t, srv, "ada", "seen=false")) // what the feed counts
	is.Equal(count(""), 3)                                      // three unseen
	srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+ids[0]+`","markAs":"seen"}`)
	is.Equal(count(""), 2)           // one seen now
	is.Equal(count("?seen=true"), 1) // and counted as seen
	is.Equal(count("?limit=1"), 1)   // the count stops at limit
}

func TestLegacy_MarkAll(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi")
	ids := feedIDs(t, srv, "ada", 3)
	srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+ids[0]+`","markAs":"read"}`)

	res := srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"read"}`)
	is.Equal(res.Status, 201)                           // as mark-as
	is.Equal(strings.TrimSpace(string(res.Body)), "2")  // the two that were not read
	is.Equal(feedTotal(t, srv, "ada", "read=false"), 0) // none unread now
	res = srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"unseen","feedIdentifier":["news"]}`)
	is.Equal(strings.TrimSpace(string(res.Body)), "0") // no message belongs to a feed
	res = srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"unseen"}`)
	is.Equal(strings.TrimSpace(string(res.Body)), "3")  // every message
	is.Equal(feedTotal(t, srv, "ada", "seen=false"), 3) // all unseen
}

func TestLegacy_BulkCreate(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada"}`)
	res := srv.Dev.Do(t, "POST", "/v1/subscribers/bulk", `{"subscribers":[
		{"subscriberId":"ada","lastName":"Lovelace"},{"subscriberId":"bea","email":"bea@example.com"}]}`)
	is.Equal(res.Status, 201) // created
	var out struct {
		Updated []struct{ SubscriberID string } `json:"updated"`
		Created []struct{ SubscriberID string } `json:"created"`
		Failed  []any                           `json:"failed"`
	}
	res.Decode(t, &out)
	is.Equal(len(out.Updated), 1)                // ada existed
	is.Equal(out.Updated[0].SubscriberID, "ada") // and is listed as updated
	is.Equal(len(out.Created), 1)                // bea is new
	is.Equal(out.Created[0].SubscriberID, "bea") // and listed as created
	is.Equal(len(out.Failed), 0)                 // nothing failed

	// Each subscriber reads as POST /v1/subscribers would have left it.
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"cy","email":"bea@example.com"}`)
	var bea, cy map[string]any
	srv.Dev.Do(t, "GET", "/v1/subscribers/bea", "").Decode(t, &bea)
	srv.Dev.Do(t, "GET", "/v1/subscribers/cy", "").Decode(t, &cy)
	for _, k := range []string{"_id", "subscriberId", "createdAt", "updatedAt"} {
		delete(bea, k)
		delete(cy, k)
	}
	is.Equal(bea, cy) // the same record as the modern route writes
	var ada map[string]any
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &ada)
	is.Equal(ada["firstName"], "Ada")     // an update keeps what it does not name
	is.Equal(ada["lastName"], "Lovelace") // and changes what it does
}

func TestLegacy_BadInput(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	many := make([]string, 501)
	for i := range many {
		many[i] = fmt.Sprintf(`{"subscriberId":"s%d"}`, i)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"ErrMarkAsWithoutMark", "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":"` + strings.Repeat("a", 24) + `"}`, 422},
		{"ErrMarkAsEmptyMark", "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":"` + strings.Repeat("a", 24) + `","mark":{}}`, 422},
		{"ErrMarkAsBadId", "POST", "/v1/subscribers/ada/messages/markAs", `{"messageId":"x","mark":{"seen":true}}`, 422},
		{"ErrMarkAsNull", "POST", "/v1/subscribers/ada/messages/markAs", `null`, 422},
		{"ErrMarkAsUnknownSubscriber", "POST", "/v1/subscribers/nobody/messages/markAs", `{"messageId":"` + strings.Repeat("a", 24) + `","mark":{"seen":true}}`, 404},
		{"ErrMarkAllBadMark", "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"gone"}`, 422},
		{"ErrMarkAllBadFeed", "POST", "/v1/subscribers/ada/messages/mark-all", `{"markAs":"read","feedIdentifier":5}`, 422},
		{"ErrMarkAllNotJSON", "POST", "/v1/subscribers/ada/messages/mark-all", `{`, 400},
		{"ErrUnseenLimit", "GET", "/v1/subscribers/ada/notifications/unseen?limit=0", "", 422},
		{"ErrUnseenSeen", "GET", "/v1/subscribers/ada/notifications/unseen?seen=maybe", "", 400},
		{"ErrUnseenUnknownSubscriber", "GET", "/v1/subscribers/nobody/notifications/unseen", "", 404},
		{"ErrBulkEmpty", "POST", "/v1/subscribers/bulk", `{"subscribers":[]}`, 422},
		{"ErrBulkTooMany", "POST", "/v1/subscribers/bulk", `{"subscribers":[` + strings.Join(many, ",") + `]}`, 422},
		{"ErrBulkItemWithoutId", "POST", "/v1/subscribers/bulk", `{"subscribers":[{"subscriberId":"ok"},{"firstName":"x"}]}`, 422},
		{"ErrBulkNotArray", "POST", "/v1/subscribers/bulk", `{"subscribers":{}}`, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.want) // a clear 4xx
			var e map[string]any
			is.NoErr(json.Unmarshal(res.Body, &e)) // a JSON error body
		})
	}
	var sub struct{ SubscriberID string }
	res := srv.Dev.Do(t, "GET", "/v1/subscribers/ok", "")
	if res.Status != 404 {
		res.Decode(t, &sub)
		t.Errorf("a refused bulk wrote %q", sub.SubscriberID)
	}
}

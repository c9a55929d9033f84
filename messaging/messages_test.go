package messaging_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// wireMessage is a message (docs/api.md, "Messages") as a strict client
// reads it.
type wireMessage struct {
	ID             string          `json:"_id"`
	SubscriberID   string          `json:"_subscriberId"`
	TransactionID  string          `json:"transactionId"`
	Channel        string          `json:"channel"`
	Content        json.RawMessage `json:"content"`
	Read           bool            `json:"read"`
	Seen           bool            `json:"seen"`
	LastReadDate   *string         `json:"lastReadDate"`
	LastSeenDate   *string         `json:"lastSeenDate"`
	Status         string          `json:"status"`
	ErrorText      string          `json:"errorText"`
	CTA            json.RawMessage `json:"cta"`
	FeedID         *string         `json:"_feedId"`
	ContextKeys    []string        `json:"contextKeys"`
	Subscriber     map[string]any  `json:"subscriber"`
	Template       map[string]any  `json:"template"`
	DeliveredAt    []string        `json:"deliveredAt"`
	CreatedAt      string          `json:"createdAt"`
	EnvironmentID  string          `json:"_environmentId"`
	OrganizationID string          `json:"_organizationId"`
	NotificationID string          `json:"_notificationId"`
}

func markAs(t *testing.T, h *harness, subscriberID string, ids any, mark string) (int, []wireMessage) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"messageId": ids, "markAs": mark})
	res := h.srv.Dev.Do(t, "POST", "/v1/subscribers/"+subscriberID+"/messages/mark-as", string(body))
	var out []wireMessage
	if res.Status == 201 {
		res.Decode(t, &out)
	}
	return res.Status, out
}

func TestMarkAs(t *testing.T) {
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	bob := h.src.addSubscriber(h.srv.App.Development, "bob", nil)
	var ids []string
	for i := range 5 {
		ids = append(ids, h.mustDeliver(t, job{subscriber: ada, controls: map[string]any{"body": fmt.Sprint(i)}}))
	}
	bobs := h.mustDeliver(t, job{subscriber: bob, controls: map[string]any{"body": "bob"}})

	for _, tc := range []struct {
		name       string
		ids        any
		mark       string
		read, seen bool
		readDate   bool // lastReadDate set
	}{
		{"OK read one", ids[0], "read", true, true, true},
		{"OK unread one stays seen", ids[0], "unread", false, true, true},
		{"OK unseen one", ids[0], "unseen", false, false, true},
		{"OK unread one sees it", ids[0], "unread", false, true, true},
		{"OK unseen again", ids[0], "unseen", false, false, true},
		{"OK seen one", ids[1], "seen", false, true, false},
		{"OK read many", ids[2:], "read", true, true, true},
		{"OK unseen many", ids[2:], "unseen", true, false, true},
		{"OK seen many", ids[2:], "seen", true, true, true},
		{"OK unread many", ids[2:], "unread", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h.srv.App.Clock.Advance(1000 * 1000 * 1000)
			status, out := markAs(t, h, "ada", tc.ids, tc.mark)
			is.Equal(status, 201) // marked
			want := 1
			if many, ok := tc.ids.([]string); ok {
				want = len(many)
			}
			is.Equal(len(out), want) // every given message returned
			for _, m := range out {
				is.Equal(m.Read, tc.read)                    // read state
				is.Equal(m.Seen, tc.seen)                    // seen state
				is.Equal(m.LastReadDate != nil, tc.readDate) // lastReadDate stamped by read/unread
				is.True(m.ContextKeys != nil)                // contextKeys present in mark-as
				is.Equal(len(m.ContextKeys), 0)              // and empty
				is.Equal(m.FeedID, nil)                      // _feedId null
				is.Equal(m.Channel, "in_app")                // the message
			}
		})
	}
	t.Run("OK lastReadDate is the mark time", func(t *testing.T) {
		is := is.New(t)
		_, out := markAs(t, h, "ada", ids[4], "read")
		now := sqldb.FormatTime(h.srv.App.Clock.Now())
		is.Equal(*out[0].LastReadDate, now) // stamped with the clock
		is.Equal(*out[0].LastSeenDate, now) // read also sees
		h.srv.App.Clock.Advance(time.Second)
		_, out = markAs(t, h, "ada", ids[4], "unread")
		now = sqldb.FormatTime(h.srv.App.Clock.Now())
		is.Equal(*out[0].LastReadDate, now) // unread stamps both dates
		is.Equal(*out[0].LastSeenDate, now)
	})
	t.Run("OK ids that are not the subscriber's are ignored", func(t *testing.T) {
		for _, id := range []string{bobs, "aaaaaaaaaaaaaaaaaaaaaaaa"} {
			is := is.New(t)
			status, out := markAs(t, h, "ada", id, "read")
			is.Equal(status, 201) // as the reference answers
			is.True(out != nil)   // with data: []
			is.Equal(len(out), 0) // naming nothing
		}
		res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/bob/notifications/feed", "")
		is.New(t).True(strings.Contains(string(res.Body), `"read":false`)) // bob's stays unread
	})
	t.Run("OK more ids than SQLite takes parameters", func(t *testing.T) {
		// The reference platform sets no bound but the body's size; 35,000
		// ids passed SQLite's 32,766 parameters when each was one (a 500).
		is := is.New(t)
		many := []string{ids[4], ids[4]}
		for i := range 35_000 {
			many = append(many, fmt.Sprintf("%024x", i))
		}
		status, out := markAs(t, h, "ada", many, "read")
		is.Equal(status, 201)       // marked
		is.Equal(len(out), 1)       // the one message of ada's among them, once
		is.Equal(out[0].ID, ids[4]) // the right one
		is.True(out[0].Read)        // read
	})
	t.Run("OK other subscriber's ids untouched", func(t *testing.T) {
		is := is.New(t)
		status, out := markAs(t, h, "ada", []string{ids[3], bobs}, "read")
		is.Equal(status, 201)       // ada's message marked
		is.Equal(len(out), 1)       // only ada's returned
		is.Equal(out[0].ID, ids[3]) // the right one
		res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/bob/notifications/feed", "")
		is.True(strings.Contains(string(res.Body), `"read":false`)) // bob's stays unread
	})
	for _, tc := range []struct {
		name   string
		sub    string
		body   string
		status int
		field  string
	}{
		{"ErrUnknownSubscriber", "nobody", fmt.Sprintf(`{"messageId":%q,"markAs":"read"}`, ids[0]), 404, ""},
		{"ErrMalformedId", "ada", `{"messageId":"nope","markAs":"read"}`, 422, "messageId"},
		{"ErrMalformedIdInArray", "ada", fmt.Sprintf(`{"messageId":[%q,"nope"],"markAs":"read"}`, ids[0]), 422, "messageId.1"},
		{"ErrEmptyArray", "ada", `{"messageId":[],"markAs":"read"}`, 422, "messageId"},
		{"ErrMissingId", "ada", `{"markAs":"read"}`, 422, "messageId"},
		{"ErrNumberId", "ada", `{"messageId":5,"markAs":"read"}`, 422, "messageId"},
		{"ErrBadMark", "ada", fmt.Sprintf(`{"messageId":%q,"markAs":"archived"}`, ids[0]), 422, "markAs"},
		{"ErrNotJSON", "ada", `{`, 400, ""},
		{"ErrNullBody", "ada", `null`, 422, "messageId"},
		{"ErrArrayBody", "ada", `[]`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.srv.Dev.Do(t, "POST", "/v1/subscribers/"+tc.sub+"/messages/mark-as", tc.body)
			is.Equal(res.Status, tc.status) // rejected
			if tc.field != "" {
				var body struct {
					Errors map[string]json.RawMessage `json:"errors"`
				}
				res.Decode(t, &body)
				_, ok := body.Errors[tc.field]
				is.True(ok) // names the field
			}
		})
	}
	for _, tc := range []struct{ body, field, value string }{
		{`{"messageId":["nope"],"markAs":"read"}`, "messageId.0", `"nope"`},
		{`{"messageId":5,"markAs":"read"}`, "messageId", `5`},
		{`{"messageId":[],"markAs":"read"}`, "messageId", `[]`},
		{`{"markAs":"read"}`, "messageId", `null`},
	} {
		t.Run("ErrEchoesValue "+tc.field+"="+tc.value, func(t *testing.T) {
			is := is.New(t)
			res := h.srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", tc.body)
			var body struct {
				Errors map[string]struct {
					Value json.RawMessage `json:"value"`
				} `json:"errors"`
			}
			res.Decode(t, &body)
			is.Equal(string(body.Errors[tc.field].Value), tc.value) // what the client sent (docs/api.md, "Errors")
		})
	}
	t.Run("OK other environment's ids are ignored", func(t *testing.T) {
		is := is.New(t)
		h.src.addSubscriber(h.srv.App.Production, "ada", nil)
		res := h.srv.Prod.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", fmt.Sprintf(`{"messageId":%q,"markAs":"read"}`, ids[1]))
		is.Equal(res.Status, 201)                           // nothing of Production's named
		is.Equal(strings.TrimSpace(string(res.Body)), `[]`) // so nothing marked
		_, out := markAs(t, h, "ada", ids[1], "seen")
		is.Equal(out[0].Read, false) // Development's message untouched
	})
}

func TestMessages_List(t *testing.T) {
	h := newHarness(t)
	dev := h.srv.App.Development
	ada := h.src.addSubscriber(dev, "ada", nil)
	bob := h.src.addSubscriber(dev, "bob", nil)
	h.src.workflows["5f00000000000000000000aa"] = json.RawMessage(`{"_id":"5f00000000000000000000aa","name":"Welcome",
		"preferenceSettings":{},"tags":[],"steps":[],"triggers":[]}`) // as workflows.Summary always answers
	h.src.addIntegration(dev, "sms", "generic-sms", map[string]any{"baseUrl": "http://127.0.0.1:1/never"})
	for i := range 1001 {
		sub := ada
		if i%2 == 1 {
			sub = bob
		}
		h.mustDeliver(t, job{subscriber: sub, transactionID: fmt.Sprintf("tx-%d", i%5), controls: map[string]any{"body": fmt.Sprint(i)}})
	}
	// An sms that failed is listed too, with its error.
	failed := h.deliver(t, job{subscriber: ada, channel: "sms", transactionID: "tx-sms", controls: map[string]any{"body": "code 1234"}})

	list := func(t *testing.T, query string) (int, page) {
		t.Helper()
		res := h.srv.Dev.Do(t, "GET", "/v1/messages"+query, "")
		var p page
		if res.Status == 200 {
			res.Decode(t, &p)
		}
		return res.Status, p
	}
	for _, tc := range []struct {
		name    string
		query   string
		total   int
		size    int
		hasMore bool
	}{
		{"OK default", "", 1002, 10, true},
		{"OK limit 1000", "?limit=1000", 1002, 1000, true},
		{"OK last page", "?limit=1000&page=1", 1002, 2, false},
		{"OK past the last page", "?limit=1000&page=2", 1002, 0, false}, // no row carries the count
		{"OK none match", "?transactionId=tx-none", 0, 0, false},
		{"OK channel", "?channel=sms", 1, 1, false},
		{"OK subscriber", "?subscriberId=bob&limit=1000", 500, 500, false},
		{"OK transactions repeated", "?transactionId=tx-1&transactionId=tx-2&limit=1000", 400, 400, false},
		{"OK transactions bracketed", "?transactionId[]=tx-1&transactionId[]=tx-sms&limit=1000", 201, 201, false},
		{"OK all filters", "?transactionId=tx-0&subscriberId=ada&channel=in_app&limit=50", 101, 50, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, p := list(t, tc.query)
			is.Equal(status, 200)            // listed
			is.Equal(p.TotalCount, tc.total) // every match counted
			is.Equal(p.PageSize, tc.size)    // items in this page
			is.Equal(len(p.Data), tc.size)   // as many as pageSize says
			is.Equal(p.HasMore, tc.hasMore)  // later pages
		})
	}
	t.Run("OK newest first with embeds", func(t *testing.T) {
		is := is.New(t)
		_, p := list(t, "?limit=2")
		is.Equal(p.Data[0].ID, failed.MessageID)               // the sms came last
		is.Equal(p.Data[0].Status, "error")                    // its delivery failed
		is.True(p.Data[0].ErrorText != "")                     // and says why
		is.Equal(string(p.Data[1].Content), `"1000"`)          // then the newest in_app
		is.Equal(p.Data[1].Subscriber["subscriberId"], "ada")  // subscriber embedded
		is.Equal(p.Data[1].Template["name"], "Welcome")        // workflow embedded
		is.Equal(len(p.Data[1].DeliveredAt), 1)                // delivered once
		is.Equal(p.Data[1].EnvironmentID, dev.ID)              // tenancy fields
		is.Equal(p.Data[1].OrganizationID, dev.OrganizationID) // tenancy fields
	})
	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"ErrLimit1001", "?limit=1001", 422},
		{"ErrLimit0", "?limit=0", 422},
		{"ErrChannel", "?channel=fax", 422},
		{"ErrPage", "?page=x", 400},
		{"ErrUnknownSubscriber", "?subscriberId=nobody", 404},
		{"ErrBadEscape", "?subscriberId=bob%zz", 400}, // never every subscriber's messages
		{"ErrSubscriberTwice", "?subscriberId=ada&subscriberId=bob", 422},
		{"ErrTooManyTransactions", "?" + strings.Repeat("transactionId=tx-1&", 100) + transactionIDs(101), 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, _ := list(t, tc.query)
			is.Equal(status, tc.status) // rejected
		})
	}
	t.Run("OK other environment sees none", func(t *testing.T) {
		is := is.New(t)
		res := h.srv.Prod.Do(t, "GET", "/v1/messages", "")
		var p page
		res.Decode(t, &p)
		is.Equal(p.TotalCount, 0) // Development's messages are invisible
	})
}

// transactionIDs is a query of n distinct transactionId values.
func transactionIDs(n int) string {
	var q []string
	for i := range n {
		q = append(q, fmt.Sprintf("transactionId=t%d", i))
	}
	return strings.Join(q, "&")
}

// page is a messages list response.
type page struct {
	TotalCount int           `json:"totalCount"`
	HasMore    bool          `json:"hasMore"`
	PageSize   int           `json:"pageSize"`
	Page       int           `json:"page"`
	Data       []wireMessage `json:"data"`
}

func TestMessages_Delete(t *testing.T) {
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	one := h.mustDeliver(t, job{subscriber: ada, transactionID: "tx-a"})
	h.mustDeliver(t, job{subscriber: ada, transactionID: "tx-b"})
	h.mustDeliver(t, job{subscriber: ada, transactionID: "tx-b"})
	keep := h.mustDeliver(t, job{subscriber: ada, transactionID: "tx-c"})

	t.Run("ErrOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		is.Equal(h.srv.Prod.Do(t, "DELETE", "/v1/messages/"+one, "").Status, 404)             // not Production's
		is.Equal(h.srv.Prod.Do(t, "DELETE", "/v1/messages/transaction/tx-b", "").Status, 404) // not Production's
	})
	t.Run("OK by id", func(t *testing.T) {
		is := is.New(t)
		res := h.srv.Dev.Do(t, "DELETE", "/v1/messages/"+one, "")
		is.Equal(res.Status, 200) // deleted
		var body struct {
			Acknowledged bool   `json:"acknowledged"`
			Status       string `json:"status"`
		}
		res.Decode(t, &body)
		is.True(body.Acknowledged)                                               // acknowledged
		is.Equal(body.Status, "deleted")                                         // status
		is.Equal(h.srv.Dev.Do(t, "DELETE", "/v1/messages/"+one, "").Status, 404) // gone
	})
	t.Run("ErrMalformedId", func(t *testing.T) {
		is := is.New(t)
		is.Equal(h.srv.Dev.Do(t, "DELETE", "/v1/messages/nope", "").Status, 404) // docs/api.md, "Identifiers and timestamps": path ids
	})
	t.Run("ErrChannel", func(t *testing.T) {
		is := is.New(t)
		is.Equal(h.srv.Dev.Do(t, "DELETE", "/v1/messages/transaction/tx-b?channel=fax", "").Status, 422) // unknown channel
	})
	t.Run("OK by transaction and channel", func(t *testing.T) {
		is := is.New(t)
		is.Equal(h.srv.Dev.Do(t, "DELETE", "/v1/messages/transaction/tx-b?channel=email", "").Status, 404) // no email in it
		res := h.srv.Dev.Do(t, "DELETE", "/v1/messages/transaction/tx-b?channel=in_app", "")
		is.Equal(res.Status, 204)                                                            // deleted
		is.Equal(len(res.Body), 0)                                                           // no body
		is.Equal(h.srv.Dev.Do(t, "DELETE", "/v1/messages/transaction/tx-b", "").Status, 404) // gone
		res = h.srv.Dev.Do(t, "GET", "/v1/messages", "")
		var p page
		res.Decode(t, &p)
		is.Equal(p.TotalCount, 1)    // one left
		is.Equal(p.Data[0].ID, keep) // the other transaction's
		res = h.srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
		var feed struct {
			TotalCount int `json:"totalCount"`
			Data       []struct {
				ID string `json:"_id"`
			} `json:"data"`
		}
		res.Decode(t, &feed)
		is.Equal(feed.TotalCount, 1)    // the feed shows what is left
		is.Equal(feed.Data[0].ID, keep) // and only that
	})
}

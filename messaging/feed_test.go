package messaging_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// feedPage is the feed response as a strict client reads it.
type feedPage struct {
	TotalCount *int  `json:"totalCount"`
	HasMore    *bool `json:"hasMore"`
	PageSize   *int  `json:"pageSize"`
	Page       *int  `json:"page"`
	Data       []struct {
		ID       string `json:"_id"`
		Content  string `json:"content"`
		Read     bool   `json:"read"`
		Seen     bool   `json:"seen"`
		Archived *bool  `json:"archived"`
		Channel  string `json:"channel"`
	} `json:"data"`
}

func TestFeed_Paging(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	bob := h.src.addSubscriber(h.srv.App.Development, "bob", nil)
	var ids []string
	for i := range 1000 {
		ids = append(ids, h.mustDeliver(t, job{subscriber: ada, controls: map[string]any{"body": fmt.Sprintf("Message %d", i)}}))
	}
	h.mustDeliver(t, job{subscriber: bob, controls: map[string]any{"body": "for bob"}})

	get := func(t *testing.T, query string) feedPage {
		t.Helper()
		res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed"+query, "")
		if res.Status != 200 {
			t.Fatalf("feed%s: %d %s", query, res.Status, res.Body)
		}
		var p feedPage
		res.Decode(t, &p)
		return p
	}

	t.Run("OK first page", func(t *testing.T) {
		is := is.New(t)
		p := get(t, "?limit=100")
		is.Equal(*p.TotalCount, 1000)               // every in_app message of ada counted
		is.True(*p.HasMore)                         // 900 more
		is.Equal(*p.PageSize, 100)                  // items in this page
		is.Equal(*p.Page, 0)                        // page echoed
		is.Equal(p.Data[0].Content, "Message 999")  // newest first
		is.Equal(p.Data[99].Content, "Message 900") // a full page
		is.Equal(*p.Data[0].Archived, false)        // docs/api.md, "What strict clients check"
	})
	t.Run("OK default limit", func(t *testing.T) {
		is := is.New(t)
		p := get(t, "")
		is.Equal(*p.PageSize, 10) // limit defaults to 10
		is.True(*p.HasMore)       // more pages
	})
	t.Run("OK last page", func(t *testing.T) {
		is := is.New(t)
		p := get(t, "?limit=100&page=9")
		is.Equal(*p.PageSize, 100)                // the last full page
		is.Equal(*p.HasMore, false)               // nothing after it
		is.Equal(p.Data[99].Content, "Message 0") // the oldest last
		p = get(t, "?limit=60&page=16")
		is.Equal(*p.PageSize, 40)   // a short last page
		is.Equal(*p.HasMore, false) // nothing after it
		p = get(t, "?limit=100&page=10")
		is.Equal(len(p.Data), 0)      // past the end
		is.Equal(*p.TotalCount, 1000) // still counts every match
		is.Equal(*p.HasMore, false)   // nothing after it
	})
	t.Run("OK pages visit every message once", func(t *testing.T) {
		is := is.New(t)
		seen := map[string]bool{}
		for pg := 0; ; pg++ {
			p := get(t, fmt.Sprintf("?limit=100&page=%d", pg))
			for _, item := range p.Data {
				is.True(!seen[item.ID]) // no message twice
				seen[item.ID] = true
			}
			if !*p.HasMore {
				break
			}
		}
		is.Equal(len(seen), 1000) // every message once
	})
	t.Run("OK read and seen filters", func(t *testing.T) {
		is := is.New(t)
		body, _ := json.Marshal(map[string]any{"messageId": ids[:100], "markAs": "read"})
		res := h.srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", string(body))
		is.Equal(res.Status, 201) // marked
		body, _ = json.Marshal(map[string]any{"messageId": ids[100:150], "markAs": "seen"})
		res = h.srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", string(body))
		is.Equal(res.Status, 201) // marked

		p := get(t, "?read=true&limit=100")
		is.Equal(*p.TotalCount, 100) // read ones
		is.Equal(*p.HasMore, false)  // all on one page
		for _, item := range p.Data {
			is.True(item.Read && item.Seen) // read implies seen
		}
		is.Equal(*get(t, "?read=false").TotalCount, 900)            // unread ones
		is.Equal(*get(t, "?seen=true").TotalCount, 150)             // seen ones
		is.Equal(*get(t, "?seen=true&read=false").TotalCount, 50)   // seen, not read
		is.Equal(*get(t, "?seen=false&read=false").TotalCount, 850) // untouched
	})
	t.Run("OK other subscriber", func(t *testing.T) {
		is := is.New(t)
		res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/bob/notifications/feed", "")
		var p feedPage
		res.Decode(t, &p)
		is.Equal(*p.TotalCount, 1)             // only bob's message
		is.Equal(p.Data[0].Content, "for bob") // and it is his
	})
	is.True(len(ids) == 1000) // all delivered
}

func TestFeed_PayloadFilter(t *testing.T) {
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	// The second and fourth are too large (past 256 bytes) for their
	// messages' rows, and are kept apart (payloadColumn): the filter reads
	// both places.
	pad := strings.Repeat("p", 300)
	payloads := []map[string]any{
		{"order": map[string]any{"status": "paid", "id": 7, "meta": map[string]any{"gift": true}}, "kind": "a"},
		{"order": map[string]any{"status": "paid", "id": 8}, "kind": "b", "list": []any{1, 2}, "pad": pad},
		{"order": map[string]any{"status": "open", "id": 7}, "kind": "a", "nothing": nil},
		{"kind": "a.b", `odd"key\\`: "x", "pad": pad},
		// PostgreSQL reads no JSON holding "\u0000" by path: this one
		// matches no filter there, as it matches none of these here.
		{"kind": "z\u0000"},
	}
	for i, p := range payloads {
		h.mustDeliver(t, job{subscriber: ada, payload: p, controls: map[string]any{"body": fmt.Sprint(i)}})
	}
	for _, tc := range []struct {
		name   string
		filter string
		want   string // contents, newest first
	}{
		{"OK nested string", `{"order":{"status":"paid"}}`, "1,0"},
		{"OK nested number", `{"order":{"id":7}}`, "2,0"},
		{"OK two keys", `{"order":{"status":"paid","id":7}}`, "0"},
		{"OK deep boolean", `{"order":{"meta":{"gift":true}}}`, "0"},
		{"OK top and nested", `{"kind":"a","order":{"status":"open"}}`, "2"},
		{"OK array as a whole", `{"list":[1,2]}`, "1"},
		{"OK null", `{"nothing":null}`, "2"},
		{"OK dot in a value", `{"kind":"a.b"}`, "3"},
		{"OK quote and backslash in a key", `{"odd\"key\\\\":"x"}`, "3"},
		{"OK no match", `{"order":{"status":"refunded"}}`, ""},
		{"OK type must match", `{"order":{"id":"7"}}`, ""},
		{"OK NUL in a value", `{"kind":"a\u0000"}`, ""},
		{"OK empty object matches all", `{}`, "4,3,2,1,0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			q := base64.StdEncoding.EncodeToString([]byte(tc.filter))
			res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?payload="+q, "")
			is.Equal(res.Status, 200) // filter accepted
			var p feedPage
			res.Decode(t, &p)
			var got []string
			for _, item := range p.Data {
				got = append(got, item.Content)
			}
			is.Equal(strings.Join(got, ","), tc.want) // matching items
			is.Equal(*p.TotalCount, len(got))         // counted exactly
		})
	}
}

// payloadBound is how many values a feed's payload filter may hold.
const payloadBound = 100

// manyKeys is a JSON object of n keys, each a filter value.
func manyKeys(n int) []byte {
	obj := map[string]int{}
	for i := range n {
		obj[fmt.Sprint("k", i)] = i
	}
	b, _ := json.Marshal(obj)
	return b
}

// A payload filter of as many values as it may hold is answered: each is a
// term of the query, and past SQLite's expression depth that was a 500.
func TestFeed_PayloadFilterAtItsBound(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?payload="+base64.StdEncoding.EncodeToString(manyKeys(payloadBound)), "")
	is.Equal(res.Status, 200)
}

func TestFeed_Errors(t *testing.T) {
	h := newHarness(t)
	h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	for _, tc := range []struct {
		name   string
		path   string
		status int
		field  string
	}{
		{"ErrBadBase64", "/v1/subscribers/ada/notifications/feed?payload=not*base64!", 400, "payload"},
		{"ErrPayloadNotJSON", "/v1/subscribers/ada/notifications/feed?payload=" + base64.StdEncoding.EncodeToString([]byte("{oops")), 400, "payload"},
		{"ErrPayloadNotObject", "/v1/subscribers/ada/notifications/feed?payload=" + base64.StdEncoding.EncodeToString([]byte("[1]")), 422, "payload"},
		{"ErrPayloadNestsTooDeep", "/v1/subscribers/ada/notifications/feed?payload=" + base64.StdEncoding.EncodeToString([]byte(`{"a":[[[[[[[[1]]]]]]]]}`)), 422, "payload"},
		{"ErrPayloadTooManyValues", "/v1/subscribers/ada/notifications/feed?payload=" + base64.StdEncoding.EncodeToString(manyKeys(payloadBound+1)), 422, "payload"},
		{"ErrPayloadKeyWithNUL", "/v1/subscribers/ada/notifications/feed?payload=" + base64.StdEncoding.EncodeToString([]byte(`{"a\u0000b":1}`)), 422, "payload"},
		{"ErrReadTwice", "/v1/subscribers/ada/notifications/feed?read=true&read=false", 422, "read"},
		{"ErrLimitZero", "/v1/subscribers/ada/notifications/feed?limit=0", 422, "limit"},
		{"ErrLimit101", "/v1/subscribers/ada/notifications/feed?limit=101", 422, "limit"},
		{"ErrNegativePage", "/v1/subscribers/ada/notifications/feed?page=-1", 422, "page"},
		{"ErrReadNotBoolean", "/v1/subscribers/ada/notifications/feed?read=maybe", 400, "read"},
		{"ErrUnknownSubscriber", "/v1/subscribers/nobody/notifications/feed", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.srv.Dev.Do(t, "GET", tc.path, "")
			is.Equal(res.Status, tc.status) // rejected
			var body struct {
				Message string                     `json:"message"`
				Errors  map[string]json.RawMessage `json:"errors"`
			}
			res.Decode(t, &body)
			is.True(body.Message != "") // says why
			if tc.field != "" {
				_, ok := body.Errors[tc.field]
				is.True(ok) // names the parameter
			}
		})
	}
	t.Run("ErrOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		res := h.srv.Prod.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
		is.Equal(res.Status, 404) // ada lives in Development only
	})
}

func TestFeed_ItemShape(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	ada := h.src.addSubscriber(h.srv.App.Development, "ada", nil)
	h.mustDeliver(t, job{subscriber: ada, payload: map[string]any{"name": "world", "n": 3}, controls: map[string]any{
		"subject":         "Hi {{ subscriber.firstName | upcase }}",
		"body":            "Hello {{ payload.name }} x{{ payload.n }}{{ payload.missing }}!",
		"avatar":          "https://example.com/a.png",
		"redirect":        map[string]any{"url": "https://example.com/{{ payload.name }}", "target": "_blank"},
		"primaryAction":   map[string]any{"label": "Open", "redirect": map[string]any{"url": "/open"}},
		"secondaryAction": map[string]any{"label": "Later"},
		"data":            map[string]any{"who": "{{ payload.name }}", "fixed": 1},
	}})
	res := h.srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	is.Equal(res.Status, 200) // feed read
	var p struct {
		Data []map[string]any `json:"data"`
	}
	res.Decode(t, &p)
	item := p.Data[0]
	for _, f := range []string{"_id", "_templateId", "_environmentId", "_organizationId", "_notificationId",
		"_subscriberId", "_jobId", "transactionId", "content", "channel", "cta", "status", "createdAt"} {
		_, ok := item[f]
		is.True(ok) // required feed item field present
	}
	is.Equal(item["content"], "Hello world x3!")                                // Liquid rendered, missing variable empty
	is.Equal(item["subject"], "Hi ADA")                                         // filters work
	is.Equal(item["avatar"], "https://example.com/a.png")                       // avatar kept
	is.Equal(item["channel"], "in_app")                                         // the feed is in_app only
	is.Equal(item["status"], "sent")                                            // delivered
	is.Equal(item["read"], false)                                               // new
	is.Equal(item["seen"], false)                                               // new
	is.Equal(item["archived"], false)                                           // docs/api.md, "What strict clients check"
	is.Equal(item["_feedId"], nil)                                              // no feeds
	is.Equal(item["providerId"], "service")                                     // in_app provider
	is.Equal(item["templateIdentifier"], "welcome")                             // the workflowId
	is.Equal(item["actor"], map[string]any{"type": "none", "data": nil})        // default actor
	is.Equal(item["tags"], []any{"news"})                                       // tags from the delivery
	is.Equal(item["data"], map[string]any{"who": "world", "fixed": float64(1)}) // data rendered
	is.Equal(item["payload"], map[string]any{"name": "world", "n": float64(3)}) // payload kept
	sub := item["subscriber"].(map[string]any)
	is.Equal(sub["subscriberId"], "ada")   // subscriber summary
	is.Equal(sub["_id"], ada["_id"])       // with its _id
	is.Equal(sub["firstName"], "Ada")      // and names
	is.Equal(sub["avatar"], ada["avatar"]) // and avatar
	cta := item["cta"].(map[string]any)
	is.Equal(cta["type"], "redirect")                                                             // a redirect
	is.Equal(cta["data"], map[string]any{"url": "https://example.com/world", "target": "_blank"}) // rendered URL
	buttons := cta["action"].(map[string]any)["buttons"].([]any)
	is.Equal(len(buttons), 2)                                  // primary and secondary
	is.Equal(buttons[0].(map[string]any)["type"], "primary")   // primary first
	is.Equal(buttons[0].(map[string]any)["content"], "Open")   // its label
	is.Equal(buttons[1].(map[string]any)["type"], "secondary") // then secondary
}

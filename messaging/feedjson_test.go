package messaging

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The feed's hand-written encoding (feedjson.go) must say what encoding/json
// says of the feed item (docs/api.md, "The feed"). feedItem and toFeedItem
// are that item as a struct: the reference the encoder is checked against.

// feedItem follows docs/api.md, "The feed" plus archived (docs/api.md,
// "What strict clients check").
type feedItem struct {
	ID                 string          `json:"_id"`
	TemplateID         string          `json:"_templateId"`
	MessageTemplateID  string          `json:"_messageTemplateId,omitempty"`
	EnvironmentID      string          `json:"_environmentId"`
	OrganizationID     string          `json:"_organizationId"`
	NotificationID     string          `json:"_notificationId"`
	SubscriberID       string          `json:"_subscriberId"`
	JobID              string          `json:"_jobId"`
	FeedID             *string         `json:"_feedId"`
	CreatedAt          string          `json:"createdAt"`
	UpdatedAt          string          `json:"updatedAt"`
	DeliveredAt        []string        `json:"deliveredAt"`
	LastSeenDate       *string         `json:"lastSeenDate"`
	LastReadDate       *string         `json:"lastReadDate"`
	Actor              json.RawMessage `json:"actor"`
	Subscriber         json.RawMessage `json:"subscriber"`
	TransactionID      string          `json:"transactionId"`
	TemplateIdentifier *string         `json:"templateIdentifier"`
	ProviderID         *string         `json:"providerId"`
	Content            string          `json:"content"`
	Subject            *string         `json:"subject"`
	Avatar             *string         `json:"avatar,omitempty"`
	Channel            string          `json:"channel"`
	Read               bool            `json:"read"`
	Seen               bool            `json:"seen"`
	Archived           bool            `json:"archived"`
	CTA                json.RawMessage `json:"cta"`
	Status             string          `json:"status"`
	Payload            json.RawMessage `json:"payload"`
	Data               json.RawMessage `json:"data"`
	Overrides          json.RawMessage `json:"overrides"`
	Tags               json.RawMessage `json:"tags"`
}

// toFeedItem is a message as a feed item (docs/api.md, "The feed"); sum is
// the subscriber's current summary, or nil to use the one stored at
// delivery.
func toFeedItem(m *message, sum json.RawMessage) feedItem {
	if sum == nil {
		sum = m.SubscriberSummary
	}
	var content string
	if json.Unmarshal(m.Content, &content) != nil {
		content = string(m.Content) // an EmailBlock array, shown as its JSON
	}
	data := m.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return feedItem{
		ID: m.ID, TemplateID: m.TemplateID, MessageTemplateID: m.MessageTemplateID,
		EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID, NotificationID: m.NotificationID,
		SubscriberID: m.SubscriberID, JobID: m.JobID, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		DeliveredAt: deliveredAt(m), LastSeenDate: m.LastSeenDate, LastReadDate: m.LastReadDate,
		Actor: m.Actor, Subscriber: sum, TransactionID: m.TransactionID,
		TemplateIdentifier: nullable(m.TemplateIdentifier), ProviderID: nullable(m.ProviderID),
		Content: content, Subject: m.Subject, Avatar: m.Avatar, Channel: m.Channel,
		Read: m.Read, Seen: m.Seen, CTA: m.CTA, Status: m.Status, Archived: m.Archived,
		Payload: m.Payload, Data: data, Overrides: m.Overrides, Tags: m.Tags,
	}
}

func TestAppendFeedItem_MatchesEncodingJSON(t *testing.T) {
	str := func(s string) *string { return &s }
	full := message{
		ID: "6560a0000000000000000001", EnvironmentID: "env", OrganizationID: "org", JobID: "job",
		NotificationID: "ntf", SubscriberID: "sub", TemplateID: "wf", MessageTemplateID: "step",
		TemplateIdentifier: "welcome", TransactionID: "tx", Channel: "in_app", ProviderID: "service",
		Content: []byte(`"Hello <b>\"Ada\"</b> & co\n\ttab \u2028 é 😀"`), Subject: str("Hi\x01"), Avatar: str("https://a.io/x.png"),
		CTA: []byte(`{"type":"redirect","data":{"url":"/x"}}`), Payload: []byte(`{"n": 1, "s": "<x>"}`),
		Overrides: []byte(`{}`), Data: []byte(`{"k":[1,2]}`), Tags: []byte(`["a","b"]`),
		Actor: []byte(`{"type":"none","data":null}`), SubscriberSummary: []byte(`{"_id":"sub","subscriberId":"ada"}`),
		Status: "sent", Read: true, LastReadDate: str("2026-11-22T00:00:00.000Z"),
		DeliveredAt: []byte(`["2026-11-22T00:00:00.000Z"]`), CreatedAt: "2026-11-22T00:00:00.000Z", UpdatedAt: "2026-11-22T00:00:01.000Z",
	}
	bare := message{ID: "6560a0000000000000000002", Channel: "in_app", Status: "sent",
		Content: []byte(`[{"type":"text","content":"block \"one\""}]`), CreatedAt: "c", UpdatedAt: "u"}
	odd := full
	odd.Content = []byte("\"bad \xff utf-8\"")
	odd.Subject = str("bad \xff utf-8")
	odd.DeliveredAt = nil
	archived := full
	archived.Archived = true
	// data with a "tags" field of its own, before the item's tags.
	tagged := full
	tagged.Data = []byte(`{"x":1,"tags":["not","these"]}`)
	tagged.Overrides = []byte(`{"email":{"tags":["o"],"blob":"` + strings.Repeat("o", 2048) + `"}}`)
	for name, tc := range map[string]struct {
		m   message
		sum json.RawMessage
	}{
		"every field":          {full, nil},
		"current summary":      {full, json.RawMessage(`{"_id":"sub","subscriberId":"ada","firstName":"Ada"}`)},
		"empty optional parts": {bare, nil},
		"invalid UTF-8":        {odd, nil},
		"archived":             {archived, nil},
		"data naming tags":     {tagged, nil},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			want, err := json.Marshal(toFeedItem(&tc.m, tc.sum))
			is.NoErr(err)
			got := appendFeedItem(nil, &tc.m, tc.sum)
			is.True(json.Valid(got))            // valid JSON
			is.Equal(duplicateKeys(t, got), "") // each field once: decoders differ on which copy wins
			var w, g any
			is.NoErr(json.Unmarshal(want, &w))
			is.NoErr(json.Unmarshal(got, &g))
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("feed item differs\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestAppendFeedPage_MatchesEncodingJSON(t *testing.T) {
	is := is.New(t)
	rows := []*message{
		{ID: "a", Channel: "in_app", Content: []byte(`"one"`), CreatedAt: "c", UpdatedAt: "u"},
		{ID: "b", Channel: "in_app", Content: []byte(`"two"`), CreatedAt: "c", UpdatedAt: "u", Seen: true},
	}
	sum := json.RawMessage(`{"_id":"s"}`)
	items := []feedItem{toFeedItem(rows[0], sum), toFeedItem(rows[1], sum)}
	want, err := json.Marshal(page[feedItem]{TotalCount: 12, HasMore: true, Data: items, PageSize: 2, Page: 3})
	is.NoErr(err)
	var w, g any
	is.NoErr(json.Unmarshal(want, &w))
	is.NoErr(json.Unmarshal(appendFeedPage(nil, 12, true, rows, sum, 3), &g))
	is.Equal(g, w) // the envelope matches
	is.NoErr(json.Unmarshal(appendFeedPage(nil, 0, false, nil, sum, 0), &g))
	is.Equal(g.(map[string]any)["data"], []any{}) // an empty page has data: [], never null
}

// duplicateKeys names the top-level keys of the JSON object b that appear
// more than once, or "" when none does.
func duplicateKeys(t *testing.T, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		t.Fatalf("read %s: %v", b, err)
	}
	seen, dups := map[string]bool{}, []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("read %s: %v", b, err)
		}
		key := tok.(string)
		if seen[key] {
			dups = append(dups, key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("read %s: %v", b, err)
		}
	}
	return strings.Join(dups, ", ")
}

package messaging

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

func TestAppendInboxNotification_AsEncodingJSON(t *testing.T) {
	text := func(s string) *string { return &s }
	full := inboxNotification{
		ID: "n1", TransactionID: "t<1>", Subject: text("Hi & \"you\""), Body: "line\nnext \u2028 é \x01",
		To:     inboxTo{ID: "s1", SubscriberID: "ada", FirstName: "Ada", LastName: "L", Avatar: "https://a/x.png"},
		IsRead: true, IsSeen: true, IsArchived: true, IsSnoozed: true, SnoozedUntil: text("2026-11-29T10:00:00.000Z"),
		DeliveredAt: []string{"2026-11-29T09:00:00.000Z", "2026-11-29T09:30:00.000Z"}, CreatedAt: "2026-11-29T09:00:00.000Z",
		ReadAt: text("r"), FirstSeenAt: text("f"), ArchivedAt: text("a"), Avatar: text("av"),
		PrimaryAction:   &inboxButton{Label: "Ack", IsCompleted: true, Redirect: &inboxRedirect{URL: "/ack", Target: "_blank"}},
		SecondaryAction: &inboxButton{Label: "No"},
		ChannelType:     "in_app", Tags: []string{"ops", "a\"b"}, Redirect: &inboxRedirect{URL: "/x"},
		Data:     json.RawMessage(`{"n":"2","nested":{"k":[1,2]}}`),
		Workflow: &inboxWorkflow{ID: "w", Identifier: "alerts", Name: "Alerts", Critical: true, Tags: []string{"x"}, Severity: "high"},
		Severity: "high",
	}
	bare := inboxNotification{ID: "n2", ChannelType: "in_app", Tags: []string{}, Severity: "none",
		Workflow: &inboxWorkflow{ID: "w", Identifier: "hello", Name: "Hello", Severity: "none"}}
	for _, tc := range []struct {
		name string
		n    inboxNotification
	}{
		{"every field", full},
		{"the fewest", bare},
		{"no workflow, nil tags", inboxNotification{ID: "n3"}},
		{"invalid UTF-8", inboxNotification{ID: "n4", Body: "a\xffb", Tags: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			want, err := json.Marshal(tc.n)
			is.NoErr(err)
			got := appendInboxNotification(nil, &tc.n)
			is.Equal(string(got), string(want)) // byte for byte
		})
	}
}

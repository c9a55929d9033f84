package apptest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/platform/platformtest"
)

// Inbox calls /v1/inbox/* as @novu/js does in a browser: a session bought
// with the environment's public identifier, then a subscriber token on
// every other route.
type Inbox struct {
	Token string // the subscriber token it sends; "" sends none
	t     testing.TB
	srv   *Server
}

// NewInbox is a client of srv's inbox that sends token.
func NewInbox(t testing.TB, srv *Server, token string) *Inbox {
	return &Inbox{Token: token, t: t, srv: srv}
}

// Session is the data of a session answer.
type Session struct {
	Token            string `json:"token"`
	TotalUnreadCount int    `json:"totalUnreadCount"`
	UnreadCount      struct {
		Total    int            `json:"total"`
		Severity map[string]int `json:"severity"`
	} `json:"unreadCount"`
	MaxSnoozeDurationHours int    `json:"maxSnoozeDurationHours"`
	IsDevelopmentMode      bool   `json:"isDevelopmentMode"`
	ApplicationIdentifier  string `json:"applicationIdentifier"`
}

// OpenInbox starts a session for subscriberID in the Development
// environment, with extra appended to the subscriber object (a hash, a
// field), and returns a client carrying its token.
func OpenInbox(t testing.TB, srv *Server, subscriberID, extra string) (*Inbox, Session) {
	t.Helper()
	c := NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+
		`","subscriber":{"subscriberId":"`+subscriberID+`","firstName":"Ada"`+extra+`}}`)
	if status != 201 {
		t.Fatalf("session: %d %s", status, body)
	}
	var out struct {
		Data Session `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	c.Token = out.Data.Token
	return c, out.Data
}

// Do sends a request with the inbox's headers and returns the status, body
// and header. The answer is held to the API description, as
// platformtest.Client.Do holds the API-key routes'.
func (c *Inbox) Do(method, path, body string) (int, []byte, http.Header) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Novu-API-Version", "2024-06-26")
	req.Header.Set("Novu-Client-Version", "@novu/js@3.19.2")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if spec, err := platformtest.LoadSpec(); err != nil {
		c.t.Errorf("API description: %v", err)
	} else if err := spec.CheckResponse(method, req.URL.EscapedPath(), res.StatusCode, res.Header, b); err != nil {
		c.t.Errorf("response of %s %s disagrees with the API description: %v", method, path, err)
	}
	return res.StatusCode, b, res.Header
}

// InboxNotification is a notification as the inbox lists it.
type InboxNotification struct {
	ID            string   `json:"id"`
	Body          string   `json:"body"`
	IsRead        bool     `json:"isRead"`
	IsSeen        bool     `json:"isSeen"`
	IsArchived    bool     `json:"isArchived"`
	IsSnoozed     bool     `json:"isSnoozed"`
	SnoozedUntil  string   `json:"snoozedUntil"`
	DeliveredAt   []string `json:"deliveredAt"`
	ReadAt        *string  `json:"readAt"`
	ArchivedAt    *string  `json:"archivedAt"`
	Tags          []string `json:"tags"`
	Severity      string   `json:"severity"`
	PrimaryAction *struct {
		Label       string `json:"label"`
		IsCompleted bool   `json:"isCompleted"`
	} `json:"primaryAction"`
	To struct {
		SubscriberID string `json:"subscriberId"`
	} `json:"to"`
	Workflow *struct {
		Identifier string `json:"identifier"`
		Name       string `json:"name"`
		Severity   string `json:"severity"`
	} `json:"workflow"`
}

// List reads GET /v1/inbox/notifications with query, and whether there
// are more.
func (c *Inbox) List(query string) ([]InboxNotification, bool) {
	c.t.Helper()
	status, body, _ := c.Do("GET", "/v1/inbox/notifications?"+query, "")
	if status != 200 {
		c.t.Fatalf("list %s: %d %s", query, status, body)
	}
	var out struct {
		Data    []InboxNotification `json:"data"`
		HasMore bool                `json:"hasMore"`
	}
	json.Unmarshal(body, &out)
	return out.Data, out.HasMore
}

// Wait polls the subscriber's inbox until it holds n notifications.
func (c *Inbox) Wait(n int) []InboxNotification {
	c.t.Helper()
	var got []InboxNotification
	platformtest.Eventually(c.t, 10*time.Second, func() bool {
		got, _ = c.List("limit=100")
		return len(got) == n
	}, "the inbox to hold the triggered notifications")
	return got
}

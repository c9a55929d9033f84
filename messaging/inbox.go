package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// The inbox is the subscriber-facing API the reference platform's inbox
// component (@novu/js) calls from a browser: /v1/inbox/* with a subscriber
// token (platform.SubscriberAuth), and live updates on /socket.io/.

// InboxSubscribers finds, creates or updates a session's subscriber;
// subscribers.Store satisfies it.
type InboxSubscribers interface {
	// SubscriberDatabaseID returns the subscriber's _id, or platform.ErrNotFound.
	SubscriberDatabaseID(ctx context.Context, environmentID, subscriberID string) (string, error)
	EnsureInboxSubscriber(ctx context.Context, tenant platform.Tenant, p subscribers.InboxProfile, update bool) (subscribers.InboxIdentity, error)
	// EnsureContexts creates the contexts a session names that the
	// environment does not have yet.
	EnsureContexts(ctx context.Context, tenant platform.Tenant, refs []subscribers.ContextRef) error
}

// InboxIntegrations finds the in-app integration an environment's inbox
// sessions go by (its hmac, whether a session may create its subscriber),
// or platform.ErrNotFound; integrations.Store satisfies it. It reads no
// cache: a session must see HMAC turned on as soon as it is
// (platform.SubscriberAuth.TokenGeneration).
type InboxIntegrations interface {
	InboxIntegration(ctx context.Context, environmentID string) (integrations.Integration, error)
	// WebPushKey is the VAPID public key of the environment's web-push
	// integration, or platform.ErrNotFound.
	WebPushKey(ctx context.Context, environmentID string) (string, error)
}

// InboxWorkflows names the workflows of inbox notifications and their
// severities; workflows.Store satisfies it.
type InboxWorkflows interface {
	InboxWorkflows(ctx context.Context, environmentID string, ids []string) (map[string]workflows.InboxWorkflow, error)
	WorkflowSeverities(ctx context.Context, environmentID string) (map[string]string, error)
}

// Presence keeps a subscriber's online status with its live inbox
// sockets; subscribers.Store satisfies it. Opened is called when this
// process opens its first socket of the subscriber (its _id), Closed when
// it closes its last.
type Presence interface {
	SocketsOpened(ctx context.Context, environmentID, subscriberRef string) error
	SocketsClosed(ctx context.Context, environmentID, subscriberRef string) error
}

// SnoozeTimer brings a snoozed message back when its snooze ends, through
// a queue that outlives the process (activity's jobs): Schedule makes it
// call EndSnooze(environmentID, messageID, until) at until, in place of
// what it had scheduled for the message, and Cancel drops that.
type SnoozeTimer interface {
	ScheduleUnsnooze(ctx context.Context, s Snooze) error
	CancelUnsnooze(ctx context.Context, environmentID, messageID string) error
}

// ErrSnoozeExpired is a SnoozeTimer's answer for a message whose
// notification retention has already removed: no job can be filed under
// it, so nothing would end the snooze.
var ErrSnoozeExpired = errors.New("the message's notification has expired")

// Snooze is one message's snooze: the message, what it was delivered for,
// and when the snooze ends.
type Snooze struct {
	EnvironmentID, MessageID, NotificationID string
	Until                                    time.Time
}

// InboxConfig is what the inbox routes need beside the store.
type InboxConfig struct {
	Auth         *platform.SubscriberAuth
	Subscribers  InboxSubscribers
	Integrations InboxIntegrations
	Workflows    InboxWorkflows
	Preferences  InboxPreferenceStore // nil: no /v1/inbox/preferences routes
	WebPush      WebPushSubscriptions // nil: no /v1/inbox/web-push routes
	Snoozes      SnoozeTimer          // nil: snoozes cannot be offered
	Live         LiveBus              // nil: no live updates
	Presence     Presence             // nil: sockets set no online status
	Logger       *slog.Logger         // nil: slog.Default()
	// MaxSnooze is the longest snooze a subscriber may set; the session
	// offers it as maxSnoozeDurationHours. 0 means DefaultMaxSnooze.
	MaxSnooze time.Duration
	// Closing is closed when Herald stops; open sockets close then.
	Closing <-chan struct{}
	// Metrics is where the live sockets are counted; nil counts none.
	Metrics *platform.Metrics
	// SocketsPerToken is how many sockets one token may hold open on this
	// process; 0 means DefaultSocketsPerToken, and a negative number no
	// limit.
	SocketsPerToken int
}

// DefaultSocketsPerToken lets one page open a few tabs, and one token no
// more than that: a socket costs the process memory and a goroutine for as
// long as it is open.
const DefaultSocketsPerToken = 10

// DefaultMaxSnooze is the reference platform's limit for its free tier,
// which applies to self-hosted installations too.
const DefaultMaxSnooze = 24 * time.Hour

// UseInbox gives the store what its inbox routes need; it returns s.
func (s *Store) UseInbox(cfg InboxConfig) *Store {
	if cfg.MaxSnooze <= 0 {
		cfg.MaxSnooze = DefaultMaxSnooze
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SocketsPerToken == 0 {
		cfg.SocketsPerToken = DefaultSocketsPerToken
	}
	s.inbox = &cfg
	s.live = cfg.Live
	cfg.Metrics.Gauge("herald_inbox_sockets", "Live inbox sockets open on this process.", s.openSockets)
	s.observePages(cfg.Metrics)
	return s
}

// messageCTA follows docs/api.md, "Calls to action", as the inbox reads it.
type messageCTA struct {
	Type string `json:"type"`
	Data struct {
		URL    string `json:"url"`
		Target string `json:"target"`
	} `json:"data"`
	Action *struct {
		Status  string `json:"status"`
		Buttons []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
			URL     string `json:"url"`
			Target  string `json:"target"`
		} `json:"buttons"`
		Result struct {
			Type string `json:"type"`
		} `json:"result"`
	} `json:"action"`
}

// inboxRedirect is where a notification or one of its buttons leads.
type inboxRedirect struct {
	URL    string `json:"url"`
	Target string `json:"target,omitempty"`
}

type inboxButton struct {
	Label       string         `json:"label"`
	IsCompleted bool           `json:"isCompleted"`
	Redirect    *inboxRedirect `json:"redirect,omitempty"`
}

type inboxWorkflow struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

type inboxTo struct {
	ID           string `json:"id"`
	SubscriberID string `json:"subscriberId"`
	FirstName    string `json:"firstName,omitempty"`
	LastName     string `json:"lastName,omitempty"`
	Avatar       string `json:"avatar,omitempty"`
}

// inboxNotification is a notification as the inbox client reads it
// (docs/inbox.md, "The notification object").
type inboxNotification struct {
	ID              string          `json:"id"`
	TransactionID   string          `json:"transactionId"`
	Subject         *string         `json:"subject,omitempty"`
	Body            string          `json:"body"`
	To              inboxTo         `json:"to"`
	IsRead          bool            `json:"isRead"`
	IsSeen          bool            `json:"isSeen"`
	IsArchived      bool            `json:"isArchived"`
	IsSnoozed       bool            `json:"isSnoozed"`
	SnoozedUntil    *string         `json:"snoozedUntil,omitempty"`
	DeliveredAt     []string        `json:"deliveredAt,omitempty"`
	CreatedAt       string          `json:"createdAt"`
	ReadAt          *string         `json:"readAt"`
	FirstSeenAt     *string         `json:"firstSeenAt"`
	ArchivedAt      *string         `json:"archivedAt"`
	Avatar          *string         `json:"avatar,omitempty"`
	PrimaryAction   *inboxButton    `json:"primaryAction,omitempty"`
	SecondaryAction *inboxButton    `json:"secondaryAction,omitempty"`
	ChannelType     string          `json:"channelType"`
	Tags            []string        `json:"tags"`
	Redirect        *inboxRedirect  `json:"redirect,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
	Workflow        *inboxWorkflow  `json:"workflow,omitempty"`
	Severity        string          `json:"severity"`
}

// toNotification converts m for a subscriber named to, with its workflow
// when it has one.
func toNotification(m *inboxMessage, to inboxTo, wf *workflows.InboxWorkflow) inboxNotification {
	n := inboxNotification{
		ID: m.ID, TransactionID: m.TransactionID, Subject: m.Subject, Body: contentText(m.Content), To: to,
		IsRead: m.Read, IsSeen: m.Seen, IsArchived: m.Archived, IsSnoozed: m.SnoozedUntil != nil,
		SnoozedUntil: m.SnoozedUntil, CreatedAt: m.CreatedAt, ReadAt: m.LastReadDate, FirstSeenAt: m.FirstSeenDate,
		ArchivedAt: m.ArchivedAt, Avatar: m.Avatar, ChannelType: m.Channel, Tags: []string{}, Severity: "none",
	}
	n.DeliveredAt = stringList(m.DeliveredAt)
	if len(m.Tags) > 2 && string(m.Tags) != "null" { // not [], which most messages have
		json.Unmarshal(m.Tags, &n.Tags)
	}
	if n.Tags == nil {
		n.Tags = []string{}
	}
	if len(m.Data) > 0 && string(m.Data) != "null" {
		n.Data = m.Data
	}
	var cta messageCTA
	if linksOrActs(m.CTA) && json.Unmarshal(m.CTA, &cta) == nil {
		if cta.Data.URL != "" {
			n.Redirect = &inboxRedirect{URL: cta.Data.URL, Target: cta.Data.Target}
		}
		if a := cta.Action; a != nil {
			for _, b := range a.Buttons {
				btn := &inboxButton{Label: b.Content, IsCompleted: a.Result.Type == b.Type && a.Status == "done"}
				if b.URL != "" {
					btn.Redirect = &inboxRedirect{URL: b.URL, Target: b.Target}
				}
				switch b.Type {
				case "primary":
					n.PrimaryAction = btn
				case "secondary":
					n.SecondaryAction = btn
				}
			}
		}
	}
	if wf != nil {
		n.Workflow = &inboxWorkflow{ID: wf.ID, Identifier: wf.Identifier, Name: wf.Name, Critical: wf.Critical,
			Tags: wf.Tags, Severity: wf.Severity}
		n.Severity = wf.Severity
	}
	return n
}

// stringList decodes a stored JSON array of strings, such as a message's
// delivery times: when no string in it escapes a character, without the
// JSON decoder, which every inbox read would run on each row.
func stringList(raw []byte) []string {
	inside, prefixed := bytes.CutPrefix(raw, []byte(`["`))
	inside, suffixed := bytes.CutSuffix(inside, []byte(`"]`))
	if !prefixed || !suffixed || len(raw) < 4 || bytes.IndexByte(raw, '\\') >= 0 {
		return decodedStringList(raw)
	}
	var out []string
	for s := range bytes.SplitSeq(inside, []byte(`","`)) {
		if !plainJSONString(s) {
			return decodedStringList(raw)
		}
		out = append(out, string(s))
	}
	return out
}

// decodedStringList is stringList through the JSON decoder; nil when raw
// is not a list of strings.
func decodedStringList(raw []byte) []string {
	var out []string
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// linksOrActs reports whether a stored cta may hold a redirect or action
// buttons: most hold neither ({"data":{},"type":"redirect"}), and need
// not be decoded. Herald writes cta itself, escaping no key, so a cta
// without a backslash and without those keys holds neither.
func linksOrActs(cta []byte) bool {
	return bytes.IndexByte(cta, '\\') >= 0 || bytes.Contains(cta, []byte(`"url"`)) || bytes.Contains(cta, []byte(`"action"`))
}

// contentText is an in_app message's content, stored as a JSON string.
func contentText(raw []byte) string {
	// A string with nothing escaped in it is its own text: most are, and
	// every inbox read converts a page of them.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainJSONString(raw[1:n-1]) {
		return string(raw[1 : n-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// plainJSONString reports whether b, the inside of a JSON string, decodes
// to itself: valid UTF-8 with nothing escaped and nothing that must be.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

// liveMessage is the raw message a notification_received event carries,
// which the client maps to a notification itself (reference B3): every
// field it reads, with cta always an object.
type liveMessage struct {
	ID            string          `json:"_id"`
	TransactionID string          `json:"transactionId"`
	Content       string          `json:"content"`
	Read          bool            `json:"read"`
	Seen          bool            `json:"seen"`
	Archived      bool            `json:"archived"`
	SnoozedUntil  *string         `json:"snoozedUntil,omitempty"`
	DeliveredAt   []string        `json:"deliveredAt"`
	CreatedAt     string          `json:"createdAt"`
	LastReadDate  *string         `json:"lastReadDate,omitempty"`
	FirstSeenDate *string         `json:"firstSeenDate,omitempty"`
	ArchivedAt    *string         `json:"archivedAt,omitempty"`
	Channel       string          `json:"channel"`
	Subscriber    liveSubscriber  `json:"subscriber"`
	Subject       *string         `json:"subject,omitempty"`
	Avatar        *string         `json:"avatar,omitempty"`
	CTA           json.RawMessage `json:"cta"`
	Tags          []string        `json:"tags"`
	Data          json.RawMessage `json:"data,omitempty"`
	Workflow      *inboxWorkflow  `json:"workflow,omitempty"`
	Severity      string          `json:"severity"`
}

type liveSubscriber struct {
	ID           string `json:"_id"`
	SubscriberID string `json:"subscriberId"`
	FirstName    string `json:"firstName,omitempty"`
	LastName     string `json:"lastName,omitempty"`
	Avatar       string `json:"avatar,omitempty"`
}

func toLiveMessage(m *inboxMessage, to inboxTo, wf *workflows.InboxWorkflow) liveMessage {
	n := toNotification(m, to, wf)
	cta := json.RawMessage(m.CTA)
	if len(cta) == 0 || cta[0] != '{' {
		cta = json.RawMessage(`{}`)
	}
	return liveMessage{ID: m.ID, TransactionID: m.TransactionID, Content: n.Body, Read: m.Read, Seen: m.Seen,
		Archived: m.Archived, SnoozedUntil: m.SnoozedUntil, DeliveredAt: orEmptyList(n.DeliveredAt), CreatedAt: m.CreatedAt,
		LastReadDate: m.LastReadDate, FirstSeenDate: m.FirstSeenDate, ArchivedAt: m.ArchivedAt, Channel: m.Channel,
		Subscriber: liveSubscriber{ID: to.ID, SubscriberID: to.SubscriberID, FirstName: to.FirstName,
			LastName: to.LastName, Avatar: to.Avatar},
		Subject: m.Subject, Avatar: m.Avatar, CTA: cta, Tags: n.Tags, Data: n.Data, Workflow: n.Workflow, Severity: n.Severity}
}

func orEmptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// The message events messaging raises (docs/webhooks.md, "Events").
const (
	EventSent       = "message.sent"
	EventDelivered  = "message.delivered"
	EventFailed     = "message.failed"
	EventSeen       = "message.seen"
	EventRead       = "message.read"
	EventUnread     = "message.unread"
	EventArchived   = "message.archived"
	EventUnarchived = "message.unarchived"
	EventSnoozed    = "message.snoozed"
	EventUnsnoozed  = "message.unsnoozed"
	EventBounced    = "message.bounced"
	EventOpened     = "message.opened"
	EventClicked    = "message.clicked"
	EventComplained = "message.complained"
)

// EventSink records the webhook events messaging raises. A change and the
// events it causes commit together: RaiseMessageEvents writes in the
// transaction that made the change, so a crash loses no event and invents
// none (docs/webhooks.md, "Delivery"). The outbound webhooks satisfy it.
type EventSink interface {
	// Wants reports whether some endpoint of the environment takes events
	// of that type, so that a change nobody listens to reads nothing more.
	// It is asked outside any write transaction.
	Wants(ctx context.Context, environmentID, eventType string) bool
	// RaiseMessageEvents records events inside tx.
	RaiseMessageEvents(ctx context.Context, tx *sql.Tx, events []MessageEvent) error
}

// UseEvents makes the store raise message events into sink; it returns s.
func (s *Store) UseEvents(sink EventSink) *Store {
	s.events = sink
	return s
}

// MessageEvent is one message event: its type, the message as the event
// carries it, and for a failure, why.
type MessageEvent struct {
	Type    string
	Message WebhookMessage
	Error   *MessageError
}

// MessageError is why a message failed, as message.sent and message.failed
// carry it.
type MessageError struct {
	Message string `json:"message"`
}

// WebhookMessage is a message as a webhook event carries it: the reference
// platform's message webhook object, with the identifiers a receiver needs
// to act without asking (docs/webhooks.md, "The message object").
type WebhookMessage struct {
	ID                 string   `json:"_id"`
	TemplateID         string   `json:"_templateId"`
	EnvironmentID      string   `json:"_environmentId"`
	OrganizationID     string   `json:"_organizationId"`
	NotificationID     string   `json:"_notificationId"`
	SubscriberRef      string   `json:"_subscriberId"`
	SubscriberID       string   `json:"subscriberId"`
	TemplateIdentifier string   `json:"templateIdentifier"`
	WorkflowID         string   `json:"workflowId"`
	StepID             string   `json:"stepId"`
	TransactionID      string   `json:"transactionId"`
	Channel            string   `json:"channel"`
	ProviderID         string   `json:"providerId"`
	Status             string   `json:"status"`
	Seen               bool     `json:"seen"`
	Read               bool     `json:"read"`
	Archived           bool     `json:"archived"`
	ArchivedAt         *string  `json:"archivedAt,omitempty"`
	SnoozedUntil       *string  `json:"snoozedUntil,omitempty"`
	DeliveredAt        []string `json:"deliveredAt"`
	FirstSeenDate      *string  `json:"firstSeenDate,omitempty"`
	LastSeenDate       *string  `json:"lastSeenDate,omitempty"`
	LastReadDate       *string  `json:"lastReadDate,omitempty"`
	ErrorID            *string  `json:"errorId,omitempty"`
	ErrorText          *string  `json:"errorText,omitempty"`
	ProviderResponseID *string  `json:"providerResponseId,omitempty"`
	CreatedAt          string   `json:"createdAt"`
	UpdatedAt          string   `json:"updatedAt"`
}

// webhookColumns are what a WebhookMessage is read from (scanWebhook).
var webhookColumns = `id, template_id, environment_id, organization_id, notification_id, subscriber_id,
	external_subscriber, template_identifier, step_id, transaction_id, channel, provider_id, status,
	seen, read, archived, archived_at, snoozed_until, ` + deliveredColumn + `, first_seen_date, last_seen_date,
	last_read_date, error_id, error_text, provider_message_id, created_at, ` + updatedColumn

func scanWebhook(row scanner) (WebhookMessage, error) {
	var m WebhookMessage
	var delivered string
	err := row.Scan(&m.ID, &m.TemplateID, &m.EnvironmentID, &m.OrganizationID, &m.NotificationID, &m.SubscriberRef,
		&m.SubscriberID, &m.TemplateIdentifier, &m.StepID, &m.TransactionID, &m.Channel, &m.ProviderID, &m.Status,
		&m.Seen, &m.Read, &m.Archived, &m.ArchivedAt, &m.SnoozedUntil, &delivered, &m.FirstSeenDate, &m.LastSeenDate,
		&m.LastReadDate, &m.ErrorID, &m.ErrorText, &m.ProviderResponseID, &m.CreatedAt, &m.UpdatedAt)
	if err != nil {
		return m, err
	}
	m.WorkflowID = m.TemplateIdentifier
	if m.Channel == "in_app" {
		m.ProviderResponseID = &m.ID // the in-app provider's message is the message
	}
	if err := json.Unmarshal([]byte(delivered), &m.DeliveredAt); err != nil || m.DeliveredAt == nil {
		m.DeliveredAt = []string{}
	}
	return m, nil
}

// raiseFor raises an event of eventType for each message among ids, read
// inside tx after the change that caused it. The caller asked wantsAny
// before tx began (no pool read may wait on the writer tx holds), and
// raises only what is wanted.
func (s *Store) raiseFor(ctx context.Context, tx *sql.Tx, env, eventType string, ids []string, why *MessageError) error {
	if s.events == nil || len(ids) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+webhookColumns+` FROM messages WHERE environment_id = ? AND `+s.queries.idsIn+`
		ORDER BY created_at, id`, env, idList(ids))
	if err != nil {
		return fmt.Errorf("read messages for %s: %w", eventType, err)
	}
	var events []MessageEvent
	for rows.Next() {
		m, err := scanWebhook(rows)
		if err != nil {
			rows.Close()
			return err
		}
		events = append(events, MessageEvent{Type: eventType, Message: m, Error: why})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range events {
		m := &events[i].Message
		if m.OrganizationID, err = s.orgs.Of(ctx, env, m.OrganizationID); err != nil {
			return err
		}
	}
	return s.events.RaiseMessageEvents(ctx, tx, events)
}

// wantsAny reports whether some endpoint of env takes one of the types.
func (s *Store) wantsAny(ctx context.Context, env string, types ...string) bool {
	if s.events == nil {
		return false
	}
	for _, t := range types {
		if s.events.Wants(ctx, env, t) {
			return true
		}
	}
	return false
}

// returningIDs runs an UPDATE … RETURNING id and returns the ids.
func returningIDs(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query+` RETURNING id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// inboxEvents is the event each inbox action raises.
var inboxEvents = map[inboxAction]string{
	actionRead: EventRead, actionUnread: EventUnread, actionArchive: EventArchived, actionUnarchive: EventUnarchived,
	actionSnooze: EventSnoozed, actionUnsnooze: EventUnsnoozed, actionSeen: EventSeen,
}

// markEvents is the event each mark of the v1 routes raises; unseen raises
// none, as in the reference platform.
var markEvents = map[string]string{"read": EventRead, "unread": EventUnread, "seen": EventSeen}

package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/templates"
)

// Sent is a stored message as its subscriber got it, for the console:
// what each channel showed, and its read and seen state. The targets a
// message was sealed with (a chat webhook URL, device tokens) are not in
// it.
type Sent struct {
	ID, NotificationID, TransactionID, JobID string
	SubscriberID                             string // the subscriber's subscriberId
	WorkflowID                               string // the workflow's _id
	WorkflowKey                              string // its workflowId
	Channel, ProviderID, Status              string // status: sent, warning or error
	Error                                    string // why it failed, when it did
	Subject                                  string // an email's subject, a push's title, an in-app card's subject
	Body                                     string // the text of an in-app card, an SMS, a chat or push message
	HTML                                     string // an email as it was sent
	To                                       string // the email address or phone number it went to
	Avatar                                   string // an in-app card's avatar
	RedirectURL                              string // where an in-app card leads
	Buttons                                  []Button
	Read, Seen                               bool
	CreatedAt                                string
}

// Button is one action button of an in-app card.
type Button struct {
	Type    string // primary or secondary
	Content string
	URL     string
}

// SentQuery picks messages, newest first: of a subscriber (by
// subscriberId), a channel, a transaction, a notification of that
// transaction, any of them together.
type SentQuery struct {
	SubscriberID   string
	Channel        string
	TransactionID  string
	NotificationID string // only with TransactionID, whose index it reads
	Page, Limit    int
}

// SentMessages returns one page of the messages q picks and how many there
// are in all. A subscriberId that names no subscriber is a 404.
func (s *Store) SentMessages(ctx context.Context, env string, q SentQuery) ([]Sent, int, error) {
	f := listFilter{channel: q.Channel, notificationID: q.NotificationID, page: q.Page, limit: min(max(q.Limit, 1), 1000)}
	if q.TransactionID != "" {
		f.transactionIDs = []string{q.TransactionID}
	}
	if q.SubscriberID != "" {
		id, _, err := s.resolveSubscriber(ctx, env, q.SubscriberID)
		if err != nil {
			return nil, 0, err
		}
		f.subscriberID = id
	}
	rows, total, err := s.list(ctx, env, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Sent, len(rows))
	for i, m := range rows {
		out[i] = m.sent()
	}
	return out, total, nil
}

// SentMessage returns one message of the environment, or a 404.
func (s *Store) SentMessage(ctx context.Context, env, id string) (Sent, error) {
	if !sqldb.IsID(id) {
		return Sent{}, platform.NotFound("Message %s not found", id)
	}
	m, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ? AND environment_id = ?`, id, env))
	if errors.Is(err, platform.ErrNotFound) {
		return Sent{}, platform.NotFound("Message %s not found", id)
	}
	if err != nil {
		return Sent{}, fmt.Errorf("read message %s: %w", id, err)
	}
	return m.sent(), nil
}

// sent is m as the console shows it.
func (m *message) sent() Sent {
	out := Sent{ID: m.ID, NotificationID: m.NotificationID, TransactionID: m.TransactionID, JobID: m.JobID,
		SubscriberID: m.ExternalSubscriber, WorkflowID: m.TemplateID, WorkflowKey: m.TemplateIdentifier,
		Channel: m.Channel, ProviderID: m.ProviderID, Status: m.Status, Error: deref(m.ErrorText),
		Subject: deref(m.Subject), Avatar: deref(m.Avatar), Read: m.Read, Seen: m.Seen, CreatedAt: m.CreatedAt}
	switch m.Channel {
	case "email":
		out.HTML, out.To = m.emailHTML(), deref(m.Email)
	case "sms":
		out.To = deref(m.Phone)
	case "push":
		out.Subject = deref(m.Title)
	}
	if m.Channel != "email" {
		json.Unmarshal(m.Content, &out.Body)
	}
	var cta struct {
		Data struct {
			URL string `json:"url"`
		} `json:"data"`
		Action struct {
			Buttons []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
				URL     string `json:"url"`
			} `json:"buttons"`
		} `json:"action"`
	}
	json.Unmarshal(m.CTA, &cta)
	out.RedirectURL = cta.Data.URL
	for _, b := range cta.Action.Buttons {
		out.Buttons = append(out.Buttons, Button{Type: b.Type, Content: b.Content, URL: b.URL})
	}
	return out
}

// emailHTML is the email as it was sent. Its content is the HTML sent, or,
// for a step written in blocks, the blocks, which render again to the same
// HTML, wrapped in the layout unless the trigger's overrides turned it off.
func (m *message) emailHTML() string {
	var html string
	if json.Unmarshal(m.Content, &html) == nil {
		return html
	}
	var blocks []templates.EmailBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		return ""
	}
	html = templates.BlocksHTML(blocks)
	var overrides map[string]any
	json.Unmarshal(m.Overrides, &overrides)
	if _, use := layoutChoice(nil, overrides, m.StepID); use {
		html = templates.WithLayout(deref(m.Subject), html)
	}
	return html
}

// DeliveryCount is how many messages of one channel and provider were
// sent, failed or sent with a warning.
type DeliveryCount struct {
	Channel, ProviderID    string
	Sent, Failed, Warnings int
}

// DeliveryCounts counts the environment's messages created since since, by
// channel and provider, reading at most limit of the newest: capped is
// true when there were more, so the counts cost the same on any database.
func (s *Store) DeliveryCounts(ctx context.Context, env string, since time.Time, limit int) (out []DeliveryCount, capped bool, err error) {
	defer platform.Wrap(&err, "count deliveries")
	rows, err := s.db.QueryContext(ctx, `SELECT channel, provider_id, status, count(*) FROM (
		SELECT channel, provider_id, status FROM `+s.queries.byList+` WHERE environment_id = ? AND created_at >= ?
		ORDER BY created_at DESC LIMIT ?) AS recent GROUP BY channel, provider_id, status ORDER BY channel, provider_id`,
		env, sqldb.FormatTime(since), limit)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	total := 0
	for rows.Next() {
		var c DeliveryCount
		var status string
		var n int
		if err := rows.Scan(&c.Channel, &c.ProviderID, &status, &n); err != nil {
			return nil, false, err
		}
		total += n
		if len(out) == 0 || out[len(out)-1].Channel != c.Channel || out[len(out)-1].ProviderID != c.ProviderID {
			out = append(out, c)
		}
		last := &out[len(out)-1]
		switch status {
		case "error":
			last.Failed += n
		case "warning":
			last.Warnings += n
		default:
			last.Sent += n
		}
	}
	return out, total >= limit, rows.Err()
}

// Failures returns the environment's newest messages that failed since
// since, at most limit, read through their own index (migration 000037).
func (s *Store) Failures(ctx context.Context, env string, since time.Time, limit int) (out []Sent, err error) {
	defer platform.Wrap(&err, "read failures")
	rows, err := queryMessages(ctx, s.db, `SELECT `+messageColumns+` FROM messages
		WHERE environment_id = ? AND status = 'error' AND created_at >= ? ORDER BY created_at DESC LIMIT ?`,
		env, sqldb.FormatTime(since), limit)
	if err != nil {
		return nil, err
	}
	for _, m := range rows {
		out = append(out, m.sent())
	}
	return out, nil
}

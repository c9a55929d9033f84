package messaging

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// SubscriberSource reads subscribers; subscribers.Store satisfies it.
type SubscriberSource interface {
	// SubscribersJSON returns spec §2.1 subscribers keyed by their _id.
	SubscribersJSON(ctx context.Context, environmentID string, ids []string) (map[string]json.RawMessage, error)
	// SubscriberIdentityJSON returns by subscriberId the spec §2.1 fields that
	// name one subscriber (_id, subscriberId, firstName, lastName, avatar),
	// or platform.ErrNotFound.
	SubscriberIdentityJSON(ctx context.Context, environmentID, subscriberID string) (json.RawMessage, error)
}

// WorkflowSource reads the workflow summaries embedded in messages;
// workflows.Store satisfies it.
type WorkflowSource interface {
	// WorkflowSummariesJSON returns spec §2.10.1 summaries keyed by workflow _id.
	WorkflowSummariesJSON(ctx context.Context, environmentID string, ids []string) (map[string]json.RawMessage, error)
}

// IntegrationSource lists the integrations a delivery may use;
// integrations.Store satisfies it.
type IntegrationSource interface {
	// ActiveIntegrationsJSON returns the environment's active integrations of
	// a channel, primary first, with decrypted credentials.
	ActiveIntegrationsJSON(ctx context.Context, environmentID, channel string) ([]json.RawMessage, error)
}

// Sources are the other domains the store reads through. Any of them may be
// nil: then embedded subscribers and templates are omitted, subscriberIds are
// resolved from the messages themselves, and only in_app can be delivered.
type Sources struct {
	Subscribers  SubscriberSource
	Workflows    WorkflowSource
	Integrations IntegrationSource
}

// channels are the delivery channels (spec §1).
var channels = []string{"in_app", "email", "sms", "chat", "push"}

// delivery is the document DeliverJSON receives from activity.
type delivery struct {
	JobID              string                     `json:"jobId"`
	NotificationID     string                     `json:"notificationId"`
	EnvironmentID      string                     `json:"environmentId"`
	OrganizationID     string                     `json:"organizationId"`
	TransactionID      string                     `json:"transactionId"`
	Channel            string                     `json:"channel"`
	StepID             string                     `json:"stepId"`
	StepDatabaseID     string                     `json:"stepDatabaseId"`
	WorkflowDatabaseID string                     `json:"workflowDatabaseId"`
	WorkflowID         string                     `json:"workflowId"`
	Subscriber         subscriber                 `json:"subscriber"`
	Controls           map[string]any             `json:"controls"`
	Variables          map[string]json.RawMessage `json:"variables"` // decoded by bindings
	Payload            json.RawMessage            `json:"payload"`
	Overrides          json.RawMessage            `json:"overrides"`
	Tags               []string                   `json:"tags"`
	Actor              json.RawMessage            `json:"actor"`
	// Attempt counts the job's runs, 1 for the first; 0 when the caller
	// does not say. A first run has no earlier message to look for.
	Attempt int `json:"attempt"`
}

// subscriber is the part of a spec §2.1 subscriber a delivery uses.
type subscriber struct {
	ID           string           `json:"_id"`
	SubscriberID string           `json:"subscriberId"`
	FirstName    *string          `json:"firstName"`
	LastName     *string          `json:"lastName"`
	Email        *string          `json:"email"`
	Phone        *string          `json:"phone"`
	Avatar       *string          `json:"avatar"`
	Channels     []channelSetting `json:"channels"`
}

// channelSetting is spec §2.2.
type channelSetting struct {
	ProviderID    string `json:"providerId"`
	IntegrationID string `json:"_integrationId"`
	Credentials   struct {
		WebhookURL   string   `json:"webhookUrl"`
		Channel      string   `json:"channel"`
		DeviceTokens []string `json:"deviceTokens"`
	} `json:"credentials"`
}

// summary is the feed item's subscriber (spec §2.9): absent names are omitted,
// since the spec types them as strings, not null.
type summary struct {
	ID           string  `json:"_id,omitempty"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Avatar       *string `json:"avatar,omitempty"`
	SubscriberID string  `json:"subscriberId"`
}

func (s subscriber) summary() summary {
	return summary{ID: s.ID, FirstName: s.FirstName, LastName: s.LastName, Avatar: s.Avatar, SubscriberID: s.SubscriberID}
}

// integration is the spec §2.5 JSON an IntegrationSource returns.
type integration struct {
	ID          string      `json:"_id"`
	Identifier  string      `json:"identifier"`
	ProviderID  string      `json:"providerId"`
	Channel     string      `json:"channel"`
	Primary     bool        `json:"primary"`
	Active      bool        `json:"active"`
	Credentials credentials `json:"credentials"`
}

// credentials are the spec §2.6 fields the providers read.
type credentials struct {
	APIKey              string         `json:"apiKey"`
	User                string         `json:"user"`
	SecretKey           string         `json:"secretKey"`
	Password            string         `json:"password"`
	Host                string         `json:"host"`
	Port                string         `json:"port"`
	From                string         `json:"from"`
	SenderName          string         `json:"senderName"`
	BaseURL             string         `json:"baseUrl"`
	WebhookURL          string         `json:"webhookUrl"`
	APIKeyRequestHeader string         `json:"apiKeyRequestHeader"`
	SecretKeyHeader     string         `json:"secretKeyRequestHeader"`
	IDPath              string         `json:"idPath"`
	DatePath            string         `json:"datePath"`
	Secure              flag           `json:"secure"`
	RequireTLS          flag           `json:"requireTls"`
	IgnoreTLS           flag           `json:"ignoreTls"`
	HMAC                flag           `json:"hmac"`
	TLSOptions          map[string]any `json:"tlsOptions"`
}

// UnmarshalJSON accepts port as a string or a number, as clients send both.
func (c *credentials) UnmarshalJSON(b []byte) error {
	type plain credentials
	var aux struct {
		plain
		Port any `json:"port"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*c = credentials(aux.plain)
	switch p := aux.Port.(type) {
	case string:
		c.Port = p
	case float64:
		c.Port = strconv.FormatFloat(p, 'f', -1, 64)
	}
	return nil
}

// flag is a credentials boolean, accepted as true/false or as "true"/"false",
// since forms often send checkboxes as strings.
type flag bool

// UnmarshalJSON reads a boolean or a string holding one; anything else is false.
func (f *flag) UnmarshalJSON(b []byte) error {
	v, _ := strconv.ParseBool(strings.Trim(string(b), `"`))
	*f = flag(v)
	return nil
}

// outcome is the document DeliverJSON returns to activity.
type outcome struct {
	MessageID  string   `json:"messageId"`
	Status     string   `json:"status"`
	ProviderID string   `json:"providerId"`
	Retryable  bool     `json:"retryable"`
	Details    []detail `json:"details"`
}

// detail is one execution detail for activity to record, in order.
type detail struct {
	Status     string  `json:"status"`
	Detail     string  `json:"detail"`
	Source     string  `json:"source"`
	ProviderID string  `json:"providerId"`
	Raw        *string `json:"raw"`
}

// messageResponse is spec §2.10, plus the fields the reference platform
// returns beside them. Optional strings are omitted rather than null, since
// strict clients type them as strings.
type messageResponse struct {
	ID                 string          `json:"_id"`
	TemplateID         *string         `json:"_templateId"`
	MessageTemplateID  *string         `json:"_messageTemplateId"`
	EnvironmentID      string          `json:"_environmentId"`
	OrganizationID     string          `json:"_organizationId"`
	NotificationID     string          `json:"_notificationId"`
	SubscriberID       string          `json:"_subscriberId"`
	JobID              string          `json:"_jobId"`
	FeedID             *string         `json:"_feedId"`
	Subscriber         json.RawMessage `json:"subscriber,omitempty"`
	Template           json.RawMessage `json:"template,omitempty"`
	TemplateIdentifier string          `json:"templateIdentifier,omitempty"`
	CreatedAt          string          `json:"createdAt"`
	UpdatedAt          string          `json:"updatedAt"`
	DeliveredAt        []string        `json:"deliveredAt"`
	LastSeenDate       string          `json:"lastSeenDate,omitempty"`
	LastReadDate       string          `json:"lastReadDate,omitempty"`
	Content            json.RawMessage `json:"content"`
	TransactionID      string          `json:"transactionId"`
	Subject            string          `json:"subject,omitempty"`
	Channel            string          `json:"channel"`
	Read               bool            `json:"read"`
	Seen               bool            `json:"seen"`
	SnoozedUntil       string          `json:"snoozedUntil,omitempty"`
	Email              string          `json:"email,omitempty"`
	Phone              string          `json:"phone,omitempty"`
	DirectWebhookURL   string          `json:"directWebhookUrl,omitempty"`
	ProviderID         string          `json:"providerId,omitempty"`
	Title              string          `json:"title,omitempty"`
	Avatar             string          `json:"avatar,omitempty"`
	DeviceTokens       []string        `json:"deviceTokens,omitempty"`
	CTA                json.RawMessage `json:"cta"`
	Status             string          `json:"status"`
	ErrorID            string          `json:"errorId,omitempty"`
	ErrorText          string          `json:"errorText,omitempty"`
	Payload            json.RawMessage `json:"payload"`
	Overrides          json.RawMessage `json:"overrides"`
	Data               json.RawMessage `json:"data"`
	Tags               json.RawMessage `json:"tags"`
	Actor              json.RawMessage `json:"actor"`
	ContextKeys        *[]string       `json:"contextKeys,omitempty"` // mark-as only
}

// page is the paginated envelope of the feed and the messages list.
type page[T any] struct {
	TotalCount int  `json:"totalCount"`
	HasMore    bool `json:"hasMore"`
	Data       []T  `json:"data"`
	PageSize   int  `json:"pageSize"`
	Page       int  `json:"page"`
}

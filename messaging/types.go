package messaging

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// SubscriberSource reads subscribers; subscribers.Store satisfies it.
type SubscriberSource interface {
	// SubscribersByID returns subscribers (docs/api.md, "Subscribers") keyed by
	// their _id.
	SubscribersByID(ctx context.Context, environmentID string, ids []string) (map[string]subscribers.Subscriber, error)
	// SubscriberIdentity returns by subscriberId the fields (docs/api.md,
	// "Subscribers") that name one subscriber (_id, subscriberId, firstName,
	// lastName, avatar), or platform.ErrNotFound.
	SubscriberIdentity(ctx context.Context, environmentID, subscriberID string) (subscribers.Identity, error)
}

// WorkflowSource reads the workflow summaries embedded in messages;
// workflows.Store satisfies it.
type WorkflowSource interface {
	// WorkflowSummaries returns summaries (docs/api.md, "Workflow summaries")
	// keyed by workflow _id.
	WorkflowSummaries(ctx context.Context, environmentID string, ids []string) (map[string]workflows.Summary, error)
}

// IntegrationSource lists the integrations a delivery may use;
// integrations.Store satisfies it.
type IntegrationSource interface {
	// ActiveIntegrations returns the environment's active integrations of
	// a channel, primary first, with decrypted credentials. The answer is
	// shared: it is not modified.
	ActiveIntegrations(ctx context.Context, environmentID, channel string) ([]integrations.Integration, error)
}

// Sources are the other domains the store reads through. Any of them may be
// nil: then embedded subscribers and templates are omitted, subscriberIds are
// resolved from the messages themselves, and only in_app can be delivered.
type Sources struct {
	Subscribers  SubscriberSource
	Workflows    WorkflowSource
	Integrations IntegrationSource
	Tokens       TokenRemover // forgets dead device tokens; nil keeps them
	Content      ContentSource
	Contexts     ContextSource
}

// ContextSource reads the contexts a trigger named; subscribers.Store
// satisfies it.
type ContextSource interface {
	// Contexts returns the environment's contexts with the given type:id
	// keys; those it does not have are absent.
	Contexts(ctx context.Context, environmentID string, keys []string) ([]subscribers.Context, error)
}

// ContentSource gives a delivery what its step renders with beyond its
// controls; workflows.Store satisfies it.
type ContentSource interface {
	// EmailLayout returns the environment's layout with layoutId, or its
	// default when layoutID is ""; ok is false when there is none.
	EmailLayout(ctx context.Context, environmentID, layoutID string) (l workflows.EmailLayout, ok bool, err error)
	// Translations returns a workflow's or a layout's translation keys in
	// the locale that best serves locale, and whether its translations
	// are on.
	Translations(ctx context.Context, environmentID, resourceType, resourceID, locale string) (keys map[string]string, enabled bool, err error)
}

// channels are the delivery channels (docs/api.md, "Channels").
var channels = []string{"in_app", "email", "sms", "chat", "push"}

// Delivery is one channel step for messaging to render and send: what
// activity's worker hands Deliver for each channel job.
type Delivery struct {
	JobID              string
	NotificationID     string
	EnvironmentID      string
	OrganizationID     string
	TransactionID      string
	Channel            string // in_app, email, sms, chat or push
	StepID             string
	StepDatabaseID     string
	WorkflowDatabaseID string
	WorkflowID         string
	Subscriber         subscribers.Subscriber // the addressee, as the subscribers domain answers it
	Controls           map[string]any         // the step's control values, its templates among them
	// Steps are the results of the digests before the step, as templates
	// see them: steps.<stepId>.{events, eventCount}.
	Steps map[string]any
	// Payload, Overrides and Actor are the trigger's, as the client sent
	// them: JSON objects, stored with the message.
	Payload   json.RawMessage
	Overrides json.RawMessage
	Actor     json.RawMessage
	// ActorSubscriber is the subscriber the trigger's actor names, which
	// templates read as actor.*; nil when it names none.
	ActorSubscriber *subscribers.Subscriber
	Tags            []string
	// ContextKeys are the trigger's contexts (type:id), whose data
	// templates read as context.<type>.data.
	ContextKeys []string
	// Attempt counts the job's runs, 1 for the first; 0 when the caller
	// does not say. A first run has no earlier message to look for.
	Attempt int
	// Attachments are the trigger's files for an email step.
	Attachments []Attachment
}

// summary is the feed item's subscriber (docs/api.md, "The feed"): absent
// names are omitted, since the spec types them as strings, not null.
type summary struct {
	ID           string  `json:"_id,omitempty"`
	FirstName    *string `json:"firstName,omitempty"`
	LastName     *string `json:"lastName,omitempty"`
	Avatar       *string `json:"avatar,omitempty"`
	SubscriberID string  `json:"subscriberId"`
}

func summaryOf(s subscribers.Subscriber) summary {
	return summary{ID: s.ID, FirstName: s.FirstName, LastName: s.LastName, Avatar: s.Avatar, SubscriberID: s.SubscriberID}
}

// integration is an active integration a delivery may go through.
type integration = integrations.Integration

// Outcome is what Deliver answers: the message, how its sending ended and
// the execution details for activity to record, in order. A message's
// outcome column keeps it as this JSON (storedOutcome).
type Outcome struct {
	MessageID  string `json:"messageId"`
	Status     string `json:"status"` // sent, warning (sent in part) or error
	ProviderID string `json:"providerId"`
	Retryable  bool   `json:"retryable"` // an error that another attempt may not meet
	// RetryAfterMs is how long the provider asked to wait before a retry
	// (Retry-After), in milliseconds; 0 when it did not say.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// ProviderMessageID is the provider's id of the sent message.
	ProviderMessageID string   `json:"providerMessageId,omitempty"`
	Details           []Detail `json:"details"`
}

// Detail is one execution detail of an Outcome (docs/api.md, "Notifications").
type Detail struct {
	Status     string  `json:"status"`
	Detail     string  `json:"detail"`
	Source     string  `json:"source"`
	ProviderID string  `json:"providerId"`
	Raw        *string `json:"raw"` // the provider's reply, when it gave one
}

// maxRecordedRaw bounds a provider's answer as an execution detail records
// it: enough to read what went wrong, not a way to copy a large reply from
// wherever a webhook URL points into the activity views (docs/security.md,
// "Bounded payloads").
const maxRecordedRaw = 4 << 10

// capped returns raw, cut to maxRecordedRaw bytes on a rune boundary.
func capped(raw string) *string {
	if len(raw) > maxRecordedRaw {
		cut := maxRecordedRaw
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut]
	}
	return &raw
}

// messageResponse follows docs/api.md, "Messages", plus the fields the
// reference platform returns beside them. Optional strings are omitted
// rather than null, since strict clients type them as strings.
type messageResponse struct {
	ID                 string                  `json:"_id"`
	TemplateID         *string                 `json:"_templateId"`
	MessageTemplateID  *string                 `json:"_messageTemplateId"`
	EnvironmentID      string                  `json:"_environmentId"`
	OrganizationID     string                  `json:"_organizationId"`
	NotificationID     string                  `json:"_notificationId"`
	SubscriberID       string                  `json:"_subscriberId"`
	JobID              string                  `json:"_jobId"`
	FeedID             *string                 `json:"_feedId"`
	Subscriber         *subscribers.Subscriber `json:"subscriber,omitempty"`
	Template           *workflows.Summary      `json:"template,omitempty"`
	TemplateIdentifier string                  `json:"templateIdentifier,omitempty"`
	CreatedAt          string                  `json:"createdAt"`
	UpdatedAt          string                  `json:"updatedAt"`
	DeliveredAt        []string                `json:"deliveredAt"`
	LastSeenDate       string                  `json:"lastSeenDate,omitempty"`
	LastReadDate       string                  `json:"lastReadDate,omitempty"`
	Content            json.RawMessage         `json:"content"`
	TransactionID      string                  `json:"transactionId"`
	Subject            string                  `json:"subject,omitempty"`
	Channel            string                  `json:"channel"`
	Read               bool                    `json:"read"`
	Seen               bool                    `json:"seen"`
	SnoozedUntil       string                  `json:"snoozedUntil,omitempty"`
	Email              string                  `json:"email,omitempty"`
	Phone              string                  `json:"phone,omitempty"`
	DirectWebhookURL   string                  `json:"directWebhookUrl,omitempty"`
	ProviderID         string                  `json:"providerId,omitempty"`
	Identifier         string                  `json:"identifier,omitempty"` // the provider's message id, as the reference platform names it
	Title              string                  `json:"title,omitempty"`
	Avatar             string                  `json:"avatar,omitempty"`
	DeviceTokens       []string                `json:"deviceTokens,omitempty"`
	CTA                json.RawMessage         `json:"cta"`
	Status             string                  `json:"status"`
	ErrorID            string                  `json:"errorId,omitempty"`
	ErrorText          string                  `json:"errorText,omitempty"`
	Payload            json.RawMessage         `json:"payload"`
	Overrides          json.RawMessage         `json:"overrides"`
	Data               json.RawMessage         `json:"data"`
	Tags               json.RawMessage         `json:"tags"`
	Actor              json.RawMessage         `json:"actor"`
	ContextKeys        *[]string               `json:"contextKeys,omitempty"` // mark-as only
}

// page is the paginated envelope of the feed and the messages list.
type page[T any] struct {
	TotalCount int  `json:"totalCount"`
	HasMore    bool `json:"hasMore"`
	Data       []T  `json:"data"`
	PageSize   int  `json:"pageSize"`
	Page       int  `json:"page"`
}

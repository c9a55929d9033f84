package subscribers

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// providerIDs is the enumeration of the "Channel credentials" section of
// docs/api.md, as a validator oneof list.
const providerIDs = "slack discord msteams mattermost ryver zulip grafana-on-call getstream rocket-chat " +
	"whatsapp-business chat-webhook service-slack fcm apns expo one-signal pushpad push-webhook pusher-beams appio web-push"

// hiddenInLists are the providerIds that the search response and the messages
// list leave out of channels[] (docs/api.md, "Channel credentials").
var hiddenInLists = map[string]bool{"service-slack": true, "appio": true}

// Lengths past which a field is surely not what it claims to be; the spec sets
// none, these only keep garbage out.
const (
	maxPhone        = 50
	maxEmail        = 320
	maxDeviceTokens = 100 // the reference platform's default per channel
	maxChannels     = 50  // channel entries of one subscriber, as a create body may hold
)

// credentials is ChannelCredentials (docs/api.md, "Channel credentials"),
// both as stored and on the wire. Every field is optional; deviceTokens is
// kept when it is an empty array, so a cleared list reads back as [].
type Credentials struct {
	WebhookURL   *string  `json:"webhookUrl,omitempty" validate:"omitempty,max=2048,url"`
	Channel      *string  `json:"channel,omitempty" validate:"omitempty,max=256"`
	DeviceTokens []string `json:"deviceTokens,omitzero" validate:"omitempty,max=100,dive,required,max=4096"`
	AlertUID     *string  `json:"alertUid,omitempty" validate:"omitempty,max=256"`
	Title        *string  `json:"title,omitempty" validate:"omitempty,max=1024"`
	ImageURL     *string  `json:"imageUrl,omitempty" validate:"omitempty,max=2048"`
	State        *string  `json:"state,omitempty" validate:"omitempty,max=256"`
	ExternalURL  *string  `json:"externalUrl,omitempty" validate:"omitempty,max=2048"`
}

// channel is one ChannelSettings entry (docs/api.md, "Channel credentials")
// as stored. IntegrationID is what was resolved when it was written ("" when
// no integration was known); reads resolve an empty one again, so the link
// appears once the integration exists.
type Channel struct {
	ProviderID            string      `json:"providerId"`
	IntegrationIdentifier string      `json:"integrationIdentifier,omitempty"`
	IntegrationID         string      `json:"_integrationId"`
	Credentials           Credentials `json:"credentials"`
}

// channelRequest is the body of PATCH and PUT
// /v1/subscribers/{subscriberId}/credentials (docs/api.md,
// "Channel credentials") and one entry of a subscriber body's channels.
type channelRequest struct {
	ProviderID            string       `json:"providerId" validate:"required,oneof=slack discord msteams mattermost ryver zulip grafana-on-call getstream rocket-chat whatsapp-business chat-webhook service-slack fcm apns expo one-signal pushpad push-webhook pusher-beams appio web-push"`
	IntegrationIdentifier string       `json:"integrationIdentifier" validate:"max=256"`
	Credentials           *Credentials `json:"credentials" validate:"required"`
}

// subscriberBody is the body of every subscriber write: POST /v1/subscribers,
// PUT /v1/subscribers/{id}, POST and PATCH /v2/subscribers. present records
// which keys the client sent, so an update changes only those (a key sent as
// null clears the field).
type subscriberBody struct {
	SubscriberID string           `json:"subscriberId" validate:"max=256"`
	FirstName    *string          `json:"firstName" validate:"omitempty,max=256"`
	LastName     *string          `json:"lastName" validate:"omitempty,max=256"`
	Email        *string          `json:"email"`
	Phone        *string          `json:"phone"`
	Avatar       *string          `json:"avatar" validate:"omitempty,max=2048"`
	Locale       *string          `json:"locale" validate:"omitempty,max=64"`
	Timezone     *string          `json:"timezone" validate:"omitempty,max=64"`
	Data         json.RawMessage  `json:"data"`
	Channels     []channelRequest `json:"channels" validate:"omitempty,max=50,dive"` // maxChannels

	present map[string]bool
}

// UnmarshalJSON decodes the body and notes which keys it holds.
func (b *subscriberBody) UnmarshalJSON(data []byte) error {
	type plain subscriberBody
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	b.present = make(map[string]bool, len(keys))
	for k := range keys {
		b.present[k] = true
	}
	if b.Data != nil && bytes.Equal(bytes.TrimSpace(b.Data), []byte("null")) {
		b.Data = nil
	}
	return nil
}

// Valid checks the rules tags cannot say: email and phone are loose, data is an object.
func (b subscriberBody) Valid(context.Context) map[string]string {
	problems := map[string]string{}
	if b.Email != nil && *b.Email != "" && !looksLikeEmail(*b.Email) {
		problems["email"] = "must be a valid email address"
	}
	if b.Phone != nil && utf8.RuneCountInString(*b.Phone) > maxPhone {
		problems["phone"] = "must be at most 50 characters long"
	}
	if b.Data != nil && bytes.TrimSpace(b.Data)[0] != '{' {
		problems["data"] = "must be an object"
	}
	return problems
}

// createBody is a subscriberBody whose subscriberId is required: POST
// /v1/subscribers, POST /v2/subscribers and UpsertSubscribers.
type createBody subscriberBody

// UnmarshalJSON decodes the body and notes which keys it holds.
func (b *createBody) UnmarshalJSON(data []byte) error {
	return (*subscriberBody)(b).UnmarshalJSON(data)
}

// Valid adds the required subscriberId to subscriberBody's rules.
func (b createBody) Valid(ctx context.Context) map[string]string {
	problems := subscriberBody(b).Valid(ctx)
	if strings.TrimSpace(b.SubscriberID) == "" {
		problems["subscriberId"] = "is required"
	}
	return problems
}

// looksLikeEmail is deliberately loose: something, an @, something with a
// dot-free or dotted domain, no whitespace. Real validation is delivery.
func looksLikeEmail(s string) bool {
	if len(s) > maxEmail || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.HasSuffix(s, ".")
}

// dedupe returns tokens without repeats, first occurrence kept, in order.
func dedupe(tokens []string) []string {
	if tokens == nil {
		return nil
	}
	seen := make(map[string]bool, len(tokens))
	out := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Identity is the part of a subscriber (docs/api.md, "Subscribers") that
// names it, as SubscriberIdentity answers it.
type Identity struct {
	ID           string  `json:"_id"`
	SubscriberID string  `json:"subscriberId"`
	FirstName    *string `json:"firstName"`
	LastName     *string `json:"lastName"`
	Avatar       *string `json:"avatar"`
}

// Subscriber is SubscriberResponseDto (docs/api.md, "Subscribers"), field
// for field: what the API answers and what the other domains read (a
// trigger's recipients, a delivery's addressee). A Subscriber another domain
// holds may share its slices with a cache: read it, never write to it.
type Subscriber struct {
	ID             string          `json:"_id"`
	FirstName      *string         `json:"firstName"`
	LastName       *string         `json:"lastName"`
	Email          *string         `json:"email"`
	Phone          *string         `json:"phone"`
	Avatar         *string         `json:"avatar"`
	Locale         *string         `json:"locale"`
	Channels       []Channel       `json:"channels"`
	Topics         []string        `json:"topics"`
	IsOnline       *bool           `json:"isOnline"`
	LastOnlineAt   *string         `json:"lastOnlineAt"`
	Version        int             `json:"__v"`
	Data           json.RawMessage `json:"data"`
	Timezone       *string         `json:"timezone"`
	SubscriberID   string          `json:"subscriberId"`
	OrganizationID string          `json:"_organizationId"`
	EnvironmentID  string          `json:"_environmentId"`
	Deleted        bool            `json:"deleted"`
	CreatedAt      string          `json:"createdAt"`
	UpdatedAt      string          `json:"updatedAt"`
}

// subscriber is a stored row.
type subscriber struct {
	ID, OrganizationID, EnvironmentID, SubscriberID   string
	FirstName, LastName, Email, Phone, Avatar, Locale *string
	Timezone                                          *string
	IsOnline                                          *bool           // nil until it first connects or is set
	LastOnlineAt                                      *string         // when it was last seen leaving
	Data                                              json.RawMessage // nil for null
	Channels                                          []Channel
	Version                                           int
	CreatedAt, UpdatedAt                              string
}

// Fields is the subscriber as its JSON (docs/api.md, "Subscribers") decodes
// into Go values: what step filters and templates address as
// subscriber.<field>. Each call builds a new map, so a caller may add to it.
func (s Subscriber) Fields() map[string]any {
	m := map[string]any{
		"_id": s.ID, "firstName": str(s.FirstName), "lastName": str(s.LastName), "email": str(s.Email),
		"phone": str(s.Phone), "avatar": str(s.Avatar), "locale": str(s.Locale), "timezone": str(s.Timezone),
		"lastOnlineAt": str(s.LastOnlineAt), "__v": float64(s.Version), "subscriberId": s.SubscriberID,
		"_organizationId": s.OrganizationID, "_environmentId": s.EnvironmentID, "deleted": s.Deleted,
		"createdAt": s.CreatedAt, "updatedAt": s.UpdatedAt, "isOnline": nil, "data": nil,
		"channels": []any{}, "topics": []any{},
	}
	if s.IsOnline != nil {
		m["isOnline"] = *s.IsOnline
	}
	for _, t := range s.Topics {
		m["topics"] = append(m["topics"].([]any), t)
	}
	// data is the client's own JSON, and channels are rare and nested:
	// both are decoded as encoding/json decodes them, so a filter or a
	// template sees them exactly as it sees the API's answer.
	if len(s.Data) > 0 {
		var data any
		if json.Unmarshal(s.Data, &data) == nil {
			m["data"] = data
		}
	}
	if len(s.Channels) > 0 {
		var chans []any
		if b, err := json.Marshal(s.Channels); err == nil && json.Unmarshal(b, &chans) == nil {
			m["channels"] = chans
		}
	}
	return m
}

// str is a nullable string as JSON decodes it: nil or the string.
func str(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// toResponse converts a row to the shape of docs/api.md, "Subscribers".
// withHidden false leaves out the channels that lists omit (docs/api.md,
// "Channel credentials").
func (s *subscriber) toResponse(withHidden bool) Subscriber {
	chans := make([]Channel, 0, len(s.Channels))
	for _, c := range s.Channels {
		if withHidden || !hiddenInLists[c.ProviderID] {
			chans = append(chans, c)
		}
	}
	data := s.Data
	if data == nil {
		data = json.RawMessage("null")
	}
	return Subscriber{
		ID: s.ID, FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, Phone: s.Phone,
		Avatar: s.Avatar, Locale: s.Locale, Channels: chans, Topics: []string{}, Version: s.Version,
		Data: data, Timezone: s.Timezone, SubscriberID: s.SubscriberID, OrganizationID: s.OrganizationID,
		EnvironmentID: s.EnvironmentID, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		IsOnline: s.IsOnline, LastOnlineAt: s.LastOnlineAt,
	}
}

// deleteResponse is the body of DELETE /v1|v2/subscribers/{subscriberId}, as
// the reference platform answers it.
type deleteResponse struct {
	Acknowledged bool   `json:"acknowledged"`
	Status       string `json:"status"`
}

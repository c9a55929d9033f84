package subscribers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// Profile is a change to a subscriber's profile, as a form sends it: each
// field named in Set takes its value, "" clearing it; the others stay.
type Profile struct {
	FirstName, LastName, Email, Phone string
	Avatar, Locale, Timezone          string
	Data                              string // a JSON object, or "" for none
	Set                               []string
}

// UpdateProfile changes the subscriber's profile under the rules of PATCH
// /v2/subscribers/{subscriberId}: the same validation (a 422 names each
// field), and a 404 for a missing subscriber.
func (s *Store) UpdateProfile(ctx context.Context, tenant platform.Tenant, subscriberID string, p Profile) (Subscriber, error) {
	body := subscriberBody{present: map[string]bool{}}
	fields := map[string]**string{"firstName": &body.FirstName, "lastName": &body.LastName, "email": &body.Email,
		"phone": &body.Phone, "avatar": &body.Avatar, "locale": &body.Locale, "timezone": &body.Timezone}
	values := map[string]string{"firstName": p.FirstName, "lastName": p.LastName, "email": p.Email, "phone": p.Phone,
		"avatar": p.Avatar, "locale": p.Locale, "timezone": p.Timezone, "data": p.Data}
	for _, name := range p.Set {
		v, known := values[name]
		if !known {
			continue
		}
		body.present[name] = true
		switch {
		case name == "data" && strings.TrimSpace(v) != "":
			if !json.Valid([]byte(v)) {
				return Subscriber{}, platform.InvalidField("data", v, "must be a JSON object")
			}
			body.Data = json.RawMessage(v)
		case name != "data" && v != "":
			*fields[name] = &v
		}
	}
	if err := platform.ValidateRequest(ctx, body); err != nil {
		return Subscriber{}, err
	}
	sub, _, err := s.upsert(ctx, tenant, subscriberID, &body, updateOnly)
	if err != nil {
		return Subscriber{}, err
	}
	return sub.toResponse(true), nil
}

// SetCredentials merges creds into the subscriber's channel of providerID,
// as PATCH /v1/subscribers/{subscriberId}/credentials does: a given
// deviceTokens replaces the stored list, the other credentials merge.
func (s *Store) SetCredentials(ctx context.Context, environmentID, subscriberID, providerID string, creds Credentials) (Subscriber, error) {
	req := channelRequest{ProviderID: providerID, Credentials: &creds}
	if err := platform.ValidateRequest(ctx, req); err != nil {
		return Subscriber{}, err
	}
	sub, err := s.setChannel(ctx, environmentID, subscriberID, req, false)
	if err != nil {
		return Subscriber{}, err
	}
	return sub.toResponse(true), nil
}

// RemoveChannel removes the subscriber's channel entries of providerID, as
// DELETE /v1/subscribers/{subscriberId}/credentials/{providerId} does.
func (s *Store) RemoveChannel(ctx context.Context, environmentID, subscriberID, providerID string) error {
	if allowed := strings.Fields(providerIDs); !slices.Contains(allowed, providerID) {
		return platform.InvalidField("providerId", providerID, "must be one of: %s", strings.Join(allowed, ", "))
	}
	return s.deleteChannel(ctx, environmentID, subscriberID, providerID)
}

// ProviderIDs lists the providers a subscriber may hold channel credentials
// for (docs/api.md, "Channel credentials").
func ProviderIDs() []string { return strings.Fields(providerIDs) }

// SetPreference turns one channel of the subscriber's preferences on or
// off, for the workflow whose workflowId, _id or slug is workflow, or
// globally when workflow is "", as PATCH
// /v2/subscribers/{subscriberId}/preferences does: a 404 for a missing
// subscriber or workflow, a 400 for a critical workflow.
func (s *Store) SetPreference(ctx context.Context, environmentID, subscriberID, workflow, channel string, enabled bool) error {
	if !slices.Contains(Channels, channel) {
		return platform.InvalidField("channel", channel, "must be one of: %s", strings.Join(Channels, ", "))
	}
	ref, err := s.subscriberRef(ctx, environmentID, subscriberID)
	if err != nil {
		return err
	}
	change := preferenceChange{set: Set{channel: enabled}}
	if workflow != "" {
		wf, err := s.preferenceWorkflow(ctx, environmentID, workflow)
		if err != nil {
			return err
		}
		change.workflowID = wf.ID
	}
	return s.updatePreferences(ctx, environmentID, ref, []preferenceChange{change})
}

// SetSchedule lays sc over the subscriber's schedule, as PATCH
// /v2/subscribers/{subscriberId}/preferences does with a schedule: the
// days sc names replace the stored ones. A schedule that is not well
// formed is a 400, a missing subscriber a 404.
func (s *Store) SetSchedule(ctx context.Context, environmentID, subscriberID string, sc Schedule) error {
	if err := sc.Check(); err != nil {
		return err
	}
	ref, err := s.subscriberRef(ctx, environmentID, subscriberID)
	if err != nil {
		return err
	}
	return s.updatePreferences(ctx, environmentID, ref, []preferenceChange{{schedule: &sc}})
}

// NewTopic is a topic to create, under the rules of POST /v1/topics.
type NewTopic struct {
	Key  string `json:"key" validate:"required,topickey"`
	Name string `json:"name" validate:"required,max=256"`
}

// CreateTopic creates a topic, or answers a 422 naming the field that
// breaks a rule, or a 409 when the key is taken.
func (s *Store) CreateTopic(ctx context.Context, tenant platform.Tenant, n NewTopic) (Topic, error) {
	if err := platform.ValidateRequest(ctx, n); err != nil {
		return Topic{}, err
	}
	t, err := s.createTopic(ctx, tenant, n.Key, n.Name)
	if err != nil {
		return Topic{}, err
	}
	return *t, nil
}

// TopicName is a topic's new name, under the rules of PATCH
// /v2/topics/{topicKey}.
type TopicName struct {
	Name string `json:"name" validate:"required,max=256"`
}

// RenameTopic renames the topic, or answers a 422 or a 404.
func (s *Store) RenameTopic(ctx context.Context, environmentID, key string, n TopicName) (Topic, error) {
	if err := platform.ValidateRequest(ctx, n); err != nil {
		return Topic{}, err
	}
	if !ValidTopicKey(key) {
		return Topic{}, platform.NotFound("Topic %q not found", key)
	}
	t, err := s.renameTopicByKey(ctx, environmentID, key, n.Name)
	if err != nil {
		return Topic{}, err
	}
	return *t, nil
}

// DeleteTopic deletes the topic and its subscriptions, as DELETE
// /v2/topics/{topicKey} does, or answers a 404.
func (s *Store) DeleteTopic(ctx context.Context, environmentID, key string) error {
	if !ValidTopicKey(key) {
		return platform.NotFound("Topic %q not found", key)
	}
	return s.deleteTopic(ctx, environmentID, key, true)
}

// Subscribe adds the subscribers to the existing topic, as POST
// /v1/topics/{topicKey}/subscribers does (at most 100 at once), and returns
// the subscriberIds that name no subscriber.
func (s *Store) Subscribe(ctx context.Context, tenant platform.Tenant, key string, subscriberIDs []string) (missing []string, err error) {
	t, err := s.Topic(ctx, tenant.EnvironmentID, key)
	if err != nil {
		return nil, err
	}
	if err := platform.ValidateRequest(ctx, subscribersBody{Subscribers: subscriberIDs}); err != nil {
		return nil, err
	}
	_, missing, err = s.subscribe(ctx, tenant, key, t.Name, subscriberIDs)
	return missing, err
}

// Unsubscribe removes the subscribers from the topic, as POST
// /v1/topics/{topicKey}/subscribers/removal does, and returns the
// subscriberIds that were not members.
func (s *Store) Unsubscribe(ctx context.Context, environmentID, key string, subscriberIDs []string) (notMembers []string, err error) {
	if !ValidTopicKey(key) {
		return nil, platform.NotFound("Topic %q not found", key)
	}
	if err := platform.ValidateRequest(ctx, subscribersBody{Subscribers: subscriberIDs}); err != nil {
		return nil, err
	}
	_, missing, notSubscribed, err := s.unsubscribe(ctx, environmentID, key, subscriberIDs)
	return append(missing, notSubscribed...), err
}

// SetContextData replaces the data of the context typ:id, under the rules
// of PATCH /v2/contexts/{type}/{id}: a JSON object of at most
// MaxContextData bytes, else a 422 on data; a 404 for a context the
// environment lacks.
func (s *Store) SetContextData(ctx context.Context, tenant platform.Tenant, typ, id string, data json.RawMessage) (Context, error) {
	if !contextPartPattern.MatchString(typ) || !contextPartPattern.MatchString(id) {
		return Context{}, platform.NotFound("Context %q was not found", typ+":"+id)
	}
	if len(data) == 0 || string(data) == "null" {
		return Context{}, platform.InvalidField("data", nil, "is required")
	}
	data, err := contextData(data)
	if err != nil {
		return Context{}, err
	}
	return s.updateContext(ctx, tenant, typ+":"+id, data)
}

// DeleteContext deletes the context typ:id, as DELETE
// /v2/contexts/{type}/{id} does, or answers a 404.
func (s *Store) DeleteContext(ctx context.Context, tenant platform.Tenant, typ, id string) error {
	if !contextPartPattern.MatchString(typ) || !contextPartPattern.MatchString(id) {
		return platform.NotFound("Context %q was not found", typ+":"+id)
	}
	return s.deleteContext(ctx, tenant, typ+":"+id)
}

package messaging

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// resolveSubscriber turns a subscriberId into the subscriber's _id and its
// feed summary, or a 404. Without a SubscriberSource the subscriber is known
// only by the messages delivered to it.
func (s *Store) resolveSubscriber(ctx context.Context, env, subscriberID string) (string, json.RawMessage, error) {
	if s.src.Subscribers == nil {
		id, sum, err := s.subscriberByExternalID(ctx, env, subscriberID)
		if errors.Is(err, platform.ErrNotFound) {
			return "", nil, platform.NotFound("Subscriber %s not found", subscriberID)
		}
		return id, sum, err
	}
	id, err := s.src.Subscribers.SubscriberIdentity(ctx, env, subscriberID)
	if errors.Is(err, platform.ErrNotFound) {
		return "", nil, platform.NotFound("Subscriber %s not found", subscriberID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("read subscriber %s: %w", subscriberID, err)
	}
	sum, err := json.Marshal(summary{ID: id.ID, FirstName: id.FirstName, LastName: id.LastName, Avatar: id.Avatar, SubscriberID: id.SubscriberID})
	return id.ID, sum, err
}

// messageResponses turns rows into messages (docs/api.md, "Messages"),
// embedding each subscriber and workflow, read in one batch per source.
func (s *Store) messageResponses(ctx context.Context, env string, rows []*message) ([]messageResponse, error) {
	var subs map[string]subscribers.Subscriber
	var templates map[string]workflows.Summary
	var err error
	if s.src.Subscribers != nil && len(rows) > 0 {
		if subs, err = s.src.Subscribers.SubscribersByID(ctx, env, distinct(rows, func(m *message) string { return m.SubscriberID })); err != nil {
			return nil, fmt.Errorf("read subscribers: %w", err)
		}
	}
	if s.src.Workflows != nil && len(rows) > 0 {
		if templates, err = s.src.Workflows.WorkflowSummaries(ctx, env, distinct(rows, func(m *message) string { return m.TemplateID })); err != nil {
			return nil, fmt.Errorf("read workflows: %w", err)
		}
	}
	snoozed, err := s.snoozedUntil(ctx, rows)
	if err != nil {
		return nil, err
	}
	out := make([]messageResponse, len(rows))
	for i, m := range rows {
		out[i] = toMessageResponse(m)
		if out[i].OrganizationID, err = s.orgs.Of(ctx, env, m.OrganizationID); err != nil {
			return nil, err
		}
		if err := s.openTargets(m, &out[i]); err != nil {
			return nil, err
		}
		if sub, ok := subs[m.SubscriberID]; ok {
			out[i].Subscriber = &sub
		}
		if sum, ok := templates[m.TemplateID]; ok {
			out[i].Template = &sum
		}
		out[i].SnoozedUntil = snoozed[m.ID]
	}
	return out, nil
}

// providerMessageID is the provider's id of m, kept in its outcome; the
// in-app provider gives none.
func providerMessageID(m *message) string {
	if m.Channel == "in_app" || len(m.Outcome) < 3 {
		return ""
	}
	var o struct {
		ID string `json:"providerMessageId"`
	}
	json.Unmarshal(m.Outcome, &o)
	return o.ID
}

// snoozedUntil returns when each snoozed in-app message among rows comes
// back, by id: an inbox's state, read apart from the row the rest reads.
func (s *Store) snoozedUntil(ctx context.Context, rows []*message) (map[string]string, error) {
	var ids []string
	for _, m := range rows {
		if m.Channel == "in_app" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	res, err := s.db.Query(ctx, `SELECT id, snoozed_until FROM messages
		WHERE `+s.queries.idsIn+` AND snoozed_until IS NOT NULL`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("read snoozes: %w", err)
	}
	defer res.Close()
	out := map[string]string{}
	for res.Next() {
		var id, until string
		if err := res.Scan(&id, &until); err != nil {
			return nil, err
		}
		out[id] = until
	}
	return out, res.Err()
}

func toMessageResponse(m *message) messageResponse {
	data := m.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return messageResponse{
		ID: m.ID, TemplateID: nullable(m.TemplateID), MessageTemplateID: nullable(m.MessageTemplateID),
		EnvironmentID: m.EnvironmentID, OrganizationID: m.OrganizationID, NotificationID: m.NotificationID,
		SubscriberID: m.SubscriberID, JobID: m.JobID, TemplateIdentifier: m.TemplateIdentifier,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, DeliveredAt: deliveredAt(m),
		LastSeenDate: deref(m.LastSeenDate), LastReadDate: deref(m.LastReadDate),
		Content: m.Content, TransactionID: m.TransactionID, Subject: deref(m.Subject), Channel: m.Channel,
		Read: m.Read, Seen: m.Seen, Email: deref(m.Email), Phone: deref(m.Phone),
		ProviderID: m.ProviderID, Title: deref(m.Title),
		Avatar: deref(m.Avatar), CTA: m.CTA, Status: m.Status,
		ErrorID: deref(m.ErrorID), ErrorText: deref(m.ErrorText), Payload: m.Payload, Overrides: m.Overrides,
		Data: data, Tags: m.Tags, Actor: m.Actor, Identifier: providerMessageID(m),
	}
}

func deliveredAt(m *message) []string {
	out := []string{}
	json.Unmarshal(m.DeliveredAt, &out)
	return out
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func distinct(rows []*message, key func(*message) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range rows {
		if k := key(m); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// payloadMatch is one leaf of the feed's payload filter: the stored payload
// must hold value at path, the same JSON type and value (the dialect's
// JSONEquals, which quotes the keys, so dots and spaces in them are taken
// literally). An empty object is compared whole.
type payloadMatch struct {
	path  []string
	value any
}

// maxPayloadDepth bounds how deep a payload filter may nest objects and
// arrays. An array is matched as a whole JSON value by SQLite, which refuses
// one nested past 1,000 levels: that was a 500.
const maxPayloadDepth = 8

// maxPayloadMatches bounds the values a payload filter tests: each is a
// term of the feed's query, and past SQLite's expression depth (about a
// thousand) the query failed with a 500.
const maxPayloadMatches = 100

// errPayloadEncoding is a feed payload filter that cannot be read at all,
// which the reference platform answers with a 400 (docs/api.md, "Errors").
var errPayloadEncoding = errors.New("must be the Base64 encoding of a JSON object")

// parsePayloadFilter decodes the feed's payload parameter: Base64 of a JSON
// object, flattened to one match per leaf, so {"a":{"b":1}} matches every
// payload whose a.b is 1 whatever else it holds.
//
// A value that is not Base64 of JSON fails with errPayloadEncoding.
func parsePayloadFilter(p string) ([]payloadMatch, error) {
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(p); err == nil {
			break
		}
	}
	if err != nil || !json.Valid(raw) {
		return nil, errPayloadEncoding
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("must encode a JSON object")
	}
	if platform.JSONDepth(raw) > maxPayloadDepth {
		return nil, fmt.Errorf("must not nest deeper than %d levels", maxPayloadDepth)
	}
	var out []payloadMatch
	var bad error
	var walk func(prefix []string, o map[string]any)
	walk = func(prefix []string, o map[string]any) {
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.ContainsRune(k, 0) {
				// SQLite ends a JSON path at a NUL: the match would
				// be on another path, or fail.
				bad = errors.New("must not hold a key with a NUL character")
				return
			}
			path := append(append([]string{}, prefix...), k)
			if sub, ok := o[k].(map[string]any); ok && len(sub) > 0 {
				walk(path, sub)
				continue
			}
			out = append(out, payloadMatch{path: path, value: o[k]})
		}
	}
	walk(nil, obj)
	if bad != nil {
		return nil, bad
	}
	if len(out) > maxPayloadMatches {
		return nil, fmt.Errorf("must not hold more than %d values", maxPayloadMatches)
	}
	return out, nil
}

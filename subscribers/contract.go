package subscribers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// This file holds the methods other domains call, through the interfaces they
// declare (wire.go checks them at compile time). They speak spec §2.1 JSON so
// callers need none of this package's types.

// SubscribersJSON returns spec §2.1 subscribers keyed by their database _id (ids not found are
// absent). channels[] omits providerId service-slack and appio (the search/messages-list variant).
func (s *Store) SubscribersJSON(ctx context.Context, environmentID string, ids []string) (out map[string]json.RawMessage, err error) {
	defer platform.Wrap(&err, "subscribers by id")
	out = make(map[string]json.RawMessage, len(ids))
	const chunk = 500 // well under SQLite's bound-parameter limit
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, 0, len(part)+1)
		args = append(args, environmentID)
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := s.db.R.QueryContext(ctx, `SELECT `+subscriberColumns+` FROM subscribers
			WHERE environment_id = ? AND id IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		subs, err := scanAll(rows)
		if err != nil {
			return nil, err
		}
		if err := s.resolveChannels(ctx, environmentID, subs); err != nil {
			return nil, err
		}
		for _, sub := range subs {
			b, err := json.Marshal(sub.toResponse(false))
			if err != nil {
				return nil, err
			}
			out[sub.ID] = b
		}
	}
	return out, nil
}

// SubscriberJSON returns one spec §2.1 subscriber by subscriberId, or platform.ErrNotFound.
func (s *Store) SubscriberJSON(ctx context.Context, environmentID, subscriberID string) (json.RawMessage, error) {
	return cacheFor(s.db).docs.GetIf(subscriberKey(environmentID, subscriberID), func() (json.RawMessage, bool, error) {
		sub, err := s.getStored(ctx, environmentID, subscriberID)
		if err != nil {
			return nil, false, err
		}
		// A channel stored without its _integrationId is resolved on every
		// read, from integrations, which can change without a subscriber
		// write: such a document is not kept.
		keep := allStored(sub.Channels)
		if err := s.resolveChannels(ctx, environmentID, []*subscriber{sub}); err != nil {
			return nil, false, err
		}
		doc, err := json.Marshal(sub.toResponse(true))
		return doc, keep, err
	})
}

// SubscriberIdentityJSON returns, by subscriberId, the spec §2.1 fields that
// name one subscriber: _id, subscriberId, firstName, lastName and avatar; or
// platform.ErrNotFound. A feed embeds them in every item on every request,
// so they are read on their own: five columns of one row, without the
// channels, their integrations and the rest of a whole document.
func (s *Store) SubscriberIdentityJSON(ctx context.Context, environmentID, subscriberID string) (json.RawMessage, error) {
	return cacheFor(s.db).identities.Get(subscriberKey(environmentID, subscriberID), func() ([]byte, error) {
		var id identity
		err := s.db.QueryRow(ctx, `SELECT id, subscriber_id, first_name, last_name, avatar
			FROM subscribers WHERE environment_id = ? AND subscriber_id = ?`, environmentID, subscriberID).
			Scan(&id.ID, &id.SubscriberID, &id.FirstName, &id.LastName, &id.Avatar)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, platform.ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(id)
	})
}

// UpsertSubscriberJSON creates or updates a subscriber from a body shaped like POST /v1/subscribers
// (validated the same way: bad input is a *platform.Error 422) and returns the spec §2.1 JSON.
func (s *Store) UpsertSubscriberJSON(ctx context.Context, tenant platform.Tenant, body json.RawMessage) (json.RawMessage, error) {
	b, err := decodeCreateBody(ctx, body, "")
	if err != nil {
		return nil, err
	}
	sub, _, err := s.upsert(ctx, tenant, b.SubscriberID, (*subscriberBody)(&b), createOrUpdate)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sub.toResponse(true))
}

// ValidateSubscriberJSON answers the 422 UpsertSubscriberJSON would answer
// for body, writing nothing: a trigger checks every subscriber it names
// before it upserts any, so a refused trigger changes nothing.
func (s *Store) ValidateSubscriberJSON(ctx context.Context, tenant platform.Tenant, body json.RawMessage) error {
	b, err := decodeCreateBody(ctx, body, "")
	if err != nil {
		return err
	}
	_, err = s.resolveRequests(ctx, tenant.EnvironmentID, b.Channels)
	return err
}

// UpsertSubscribersJSON is UpsertSubscriberJSON for many bodies in one
// transaction, for bulk imports: every body is validated first (a bad one is a
// 422 naming its index, and nothing is written), then all are written or none.
func (s *Store) UpsertSubscribersJSON(ctx context.Context, tenant platform.Tenant, bodies []json.RawMessage) (out []json.RawMessage, err error) {
	defer platform.Wrap(&err, "bulk upsert subscribers")
	decoded := make([]createBody, len(bodies))
	ids := make([][]string, len(bodies))
	subscriberIDs := make([]string, len(bodies))
	for i, raw := range bodies {
		if decoded[i], err = decodeCreateBody(ctx, raw, "subscribers."+strconv.Itoa(i)+"."); err != nil {
			return nil, err
		}
		if ids[i], err = s.resolveRequests(ctx, tenant.EnvironmentID, decoded[i].Channels); err != nil {
			return nil, err
		}
		subscriberIDs[i] = decoded[i].SubscriberID
	}
	defer s.changed(tenant.EnvironmentID, subscriberIDs...)
	subs := make([]*subscriber, len(bodies))
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		for i := range decoded {
			b := (*subscriberBody)(&decoded[i])
			var err error
			if subs[i], _, err = s.upsertTx(ctx, tx, tenant, b.SubscriberID, b, ids[i], createOrUpdate); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.documents(ctx, tenant.EnvironmentID, subs)
}

// SubscribersAfterJSON returns up to limit spec §2.1 subscribers whose
// subscriberId is greater than after, in subscriberId order, as
// SubscriberJSON returns each: a broadcast reads its recipients a batch at a
// time, in one query, rather than one by one.
func (s *Store) SubscribersAfterJSON(ctx context.Context, environmentID, after string, limit int) (out []json.RawMessage, err error) {
	defer platform.Wrap(&err, "subscribers after %q", after)
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+subscriberColumns+` FROM subscribers
		WHERE environment_id = ? AND subscriber_id > ?
		ORDER BY subscriber_id LIMIT ?`, environmentID, after, limit)
	if err != nil {
		return nil, err
	}
	subs, err := scanAll(rows)
	if err != nil {
		return nil, err
	}
	return s.documents(ctx, environmentID, subs)
}

// documents answers subs as SubscriberJSON answers each, in order, with
// their channels' _integrationId resolved.
func (s *Store) documents(ctx context.Context, environmentID string, subs []*subscriber) ([]json.RawMessage, error) {
	if err := s.resolveChannels(ctx, environmentID, subs); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(subs))
	for i, sub := range subs {
		var err error
		if out[i], err = json.Marshal(sub.toResponse(true)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeCreateBody reads a subscriber body that did not come through an HTTP
// request, reporting problems the way platform.Decode does; prefix is put in
// front of every field path.
func decodeCreateBody(ctx context.Context, raw json.RawMessage, prefix string) (createBody, error) {
	var b createBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&b); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			err := platform.WithRejectedValues(platform.InvalidField(typeErr.Field, nil, "has the wrong type"), raw)
			return b, prefixFields(err, prefix)
		}
		if prefix == "" {
			return b, platform.InvalidField("subscriber", nil, "must be a subscriber object: %v", err)
		}
		return b, platform.InvalidField(strings.TrimSuffix(prefix, "."), nil, "must be a subscriber object: %v", err)
	}
	return b, prefixFields(platform.WithRejectedValues(platform.ValidateRequest(ctx, b), raw), prefix)
}

// prefixFields puts prefix in front of every field path of a 422.
func prefixFields(err error, prefix string) error {
	var pe *platform.Error
	if prefix != "" && errors.As(err, &pe) && pe.Fields != nil {
		fields := make(map[string]platform.FieldError, len(pe.Fields))
		for k, v := range pe.Fields {
			fields[prefix+k] = v
		}
		return platform.Invalid(fields)
	}
	return err
}

func scanAll(rows *sql.Rows) ([]*subscriber, error) {
	defer rows.Close()
	var out []*subscriber
	for rows.Next() {
		sub, err := scanSubscriber(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

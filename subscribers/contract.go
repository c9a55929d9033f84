package subscribers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// This file holds the methods other domains call, through the interfaces they
// declare (app/wire.go checks them at compile time). They answer in this
// package's exported types: Subscriber, Identity.

// SubscribersByID returns subscribers (docs/api.md, "Subscribers") keyed by
// their database _id (ids not found are absent). channels[] omits providerId
// service-slack and appio (the search/messages-list variant).
func (s *Store) SubscribersByID(ctx context.Context, environmentID string, ids []string) (out map[string]Subscriber, err error) {
	defer platform.Wrap(&err, "subscribers by id")
	subs, err := s.storedWhereIn(ctx, environmentID, "id", ids)
	if err != nil {
		return nil, err
	}
	if err := s.resolveChannels(ctx, environmentID, subs); err != nil {
		return nil, err
	}
	out = make(map[string]Subscriber, len(subs))
	for _, sub := range subs {
		out[sub.ID] = sub.toResponse(false)
	}
	return out, nil
}

// Subscriber returns one subscriber (docs/api.md, "Subscribers") by
// subscriberId, or platform.ErrNotFound.
func (s *Store) Subscriber(ctx context.Context, environmentID, subscriberID string) (Subscriber, error) {
	subs, err := s.SubscribersBySubscriberID(ctx, environmentID, []string{subscriberID})
	if err != nil {
		return Subscriber{}, err
	}
	sub, ok := subs[subscriberID]
	if !ok {
		return Subscriber{}, platform.ErrNotFound
	}
	return sub, nil
}

// SubscribersBySubscriberID returns subscribers (docs/api.md, "Subscribers")
// keyed by subscriberId, as Subscriber answers each (subscriberIds not found
// are absent). A trigger reads its recipients this way on every request:
// from the cache, and those it misses in one query, not one each.
func (s *Store) SubscribersBySubscriberID(ctx context.Context, environmentID string, subscriberIDs []string) (out map[string]Subscriber, err error) {
	defer platform.Wrap(&err, "subscribers by subscriberId")
	keys := make([]string, len(subscriberIDs))
	for i, id := range subscriberIDs {
		keys[i] = subscriberKey(environmentID, id)
	}
	subs, err := cacheFor(s.db).docs.GetMany(keys, func(missing []string) (map[string]sqldb.Loaded[Subscriber], error) {
		ids := make([]string, len(missing))
		for i, key := range missing {
			ids[i] = subscriberIDOf(environmentID, key)
		}
		subs, err := s.storedWhereIn(ctx, environmentID, "subscriber_id", ids)
		if err != nil {
			return nil, err
		}
		// A channel stored without its _integrationId is resolved on
		// every read, from integrations, which can change without a
		// subscriber write: such a subscriber is not kept.
		keep := make([]bool, len(subs))
		for i, sub := range subs {
			keep[i] = allStored(sub.Channels)
		}
		found, err := s.documents(ctx, environmentID, subs)
		if err != nil {
			return nil, err
		}
		loaded := make(map[string]sqldb.Loaded[Subscriber], len(subs))
		for i, sub := range subs {
			loaded[subscriberKey(environmentID, sub.SubscriberID)] = sqldb.Loaded[Subscriber]{Value: found[i], Keep: keep[i]}
		}
		return loaded, nil
	})
	if err != nil {
		return nil, err
	}
	out = make(map[string]Subscriber, len(subs))
	for key, sub := range subs {
		out[subscriberIDOf(environmentID, key)] = sub
	}
	return out, nil
}

// SubscriberIdentity returns, by subscriberId, the fields (docs/api.md,
// "Subscribers") that name one subscriber: _id, subscriberId, firstName,
// lastName and avatar; or platform.ErrNotFound. A feed embeds them in every
// item on every request, so they are read on their own: five columns of one
// row, without the channels, their integrations and the rest of a whole
// subscriber. They are cached as JSON (a ByteCache: two heap objects however
// many it holds, for the collector to mark) and decoded per call.
func (s *Store) SubscriberIdentity(ctx context.Context, environmentID, subscriberID string) (Identity, error) {
	raw, err := cacheFor(s.db).identities.Get(subscriberKey(environmentID, subscriberID), func() ([]byte, error) {
		var id Identity
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
	if err != nil {
		return Identity{}, err
	}
	var id Identity
	err = json.Unmarshal(raw, &id)
	return id, err
}

// UpsertSubscribers creates or updates subscribers from bodies shaped
// like POST /v1/subscribers, and returns each, in order, as it stands after
// its own write. Every body is checked first, so that a bad one leaves
// nothing written: a 422 with its fields under paths[i] ("to.0.email"), or
// under "subscribers.<i>" when paths is nil. The writes share one
// transaction, and a body that would change nothing is not written; when
// none would, no transaction is begun. A trigger names its subscribers this
// way, up to 100 of them, and a transaction for each would be most of such
// a trigger's time (BenchmarkTriggerMulticast).
func (s *Store) UpsertSubscribers(ctx context.Context, tenant platform.Tenant, bodies []json.RawMessage, paths []string) (out []Subscriber, err error) {
	defer platform.Wrap(&err, "upsert %d subscribers", len(bodies))
	env := tenant.EnvironmentID
	decoded := make([]createBody, len(bodies))
	ids := make([][]string, len(bodies))
	subscriberIDs := make([]string, len(bodies))
	for i, raw := range bodies {
		path := "subscribers." + strconv.Itoa(i)
		if paths != nil {
			path = paths[i]
		}
		if decoded[i], err = decodeCreateBody(ctx, raw, path+"."); err != nil {
			return nil, err
		}
		if ids[i], err = s.resolveRequests(ctx, env, decoded[i].Channels); err != nil {
			return nil, err
		}
		subscriberIDs[i] = decoded[i].SubscriberID
	}
	stored, err := s.storedWhereIn(ctx, env, "subscriber_id", subscriberIDs)
	if err != nil {
		return nil, err
	}
	if subs := unchangedAll(stored, decoded, ids); subs != nil {
		return s.documents(ctx, env, subs)
	}
	defer s.changed(env, subscriberIDs...)
	subs := make([]*subscriber, len(bodies))
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, env, subscriberIDs...); err != nil {
			return err
		}
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
	return s.documents(ctx, env, subs)
}

// unchangedAll answers the stored subscriber for each body when no body
// would change its subscriber (unchangedBy), and nil when one would or names
// a subscriber not stored. A subscriber named twice is checked against its
// stored self both times: when neither body changes it, applying them in
// turn changes nothing either.
func unchangedAll(stored []*subscriber, bodies []createBody, integrationIDs [][]string) []*subscriber {
	bySubscriberID := make(map[string]*subscriber, len(stored))
	for _, sub := range stored {
		bySubscriberID[sub.SubscriberID] = sub
	}
	subs := make([]*subscriber, len(bodies))
	for i := range bodies {
		b := (*subscriberBody)(&bodies[i])
		sub, ok := bySubscriberID[b.SubscriberID]
		if !ok {
			return nil
		}
		if _, changed := applied(sub, b, integrationIDs[i]); changed {
			return nil
		}
		subs[i] = sub
	}
	return subs
}

// storedWhereIn reads the environment's subscribers whose column ("id",
// "subscriber_id") holds one of values; values not stored have no row.
func (s *Store) storedWhereIn(ctx context.Context, environmentID, column string, values []string) ([]*subscriber, error) {
	var out []*subscriber
	for chunk := range slices.Chunk(values, inListSizes[len(inListSizes)-1]) {
		// The list is padded with its last value to one of a few lengths,
		// so that each length is one statement the read pool keeps
		// prepared (a trigger's one subscriber most of all).
		n, _ := slices.BinarySearch(inListSizes, len(chunk))
		args := make([]any, 0, 1+inListSizes[n])
		args = append(args, environmentID)
		for i := range inListSizes[n] {
			args = append(args, chunk[min(i, len(chunk)-1)])
		}
		rows, err := s.db.Query(ctx, `SELECT `+subscriberColumns+` FROM subscribers
			WHERE environment_id = ? AND `+column+` IN (`+sqldb.Placeholders(inListSizes[n])+`)`, args...)
		if err != nil {
			return nil, err
		}
		subs, err := s.scanAll(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, subs...)
	}
	return out, nil
}

// inListSizes are the lengths storedWhereIn pads its lists to, the last
// well under SQLite's bound-parameter limit.
var inListSizes = []int{1, 4, 16, 64, 500}

// SubscribersMatching returns, sorted, the database _ids of the
// environment's subscribers that match any of: one of subscriberIDs, one of
// emails (exactly), or search, an email containing it in any case or a
// subscriberId equal to it. GET /v1/notifications filters by these, as the
// platform resolves those filters to subscribers first (searchSubscribers)
// and matches their _ids, so that a subscriber deleted and created again
// under the same subscriberId does not list the earlier one's notifications.
// Each is a query of its own, so that the first two are index look-ups
// (emails through the suffix index, whose first suffix of an address is the
// address); search tests every subscriber of the environment.
func (s *Store) SubscribersMatching(ctx context.Context, environmentID string, subscriberIDs, emails []string, search string) (out []string, err error) {
	defer platform.Wrap(&err, "subscribers matching")
	type query struct {
		sql  string
		args []any
	}
	var queries []query
	d := s.db.Dialect()
	values := `SELECT value FROM ` + d.JSONTexts("?", "j") // the strings of the JSON array bound to it
	if len(subscriberIDs) > 0 {
		ids, _ := json.Marshal(subscriberIDs)
		queries = append(queries, query{`SELECT id FROM subscribers
			WHERE environment_id = ? AND subscriber_id IN (` + values + `)`,
			[]any{environmentID, string(ids)}})
	}
	if len(emails) > 0 {
		addresses, _ := json.Marshal(emails)
		if d.SuffixTable() {
			// The suffix range outermost (OrderedJoin).
			queries = append(queries, query{`SELECT s.id FROM (SELECT DISTINCT seq FROM subscriber_suffixes
					WHERE field = ? AND suffix IN (SELECT substr(value, 1, ?) FROM ` + d.JSONTexts("?", "a") + `)) f
				` + d.OrderedJoin() + ` subscribers s ON s.seq = f.seq
				WHERE s.environment_id = ? AND s.email IN (` + values + `)`,
				[]any{fieldEmail, suffixKeep, string(addresses), environmentID, string(addresses)}})
		} else {
			// No suffix table: the (environment_id, …) indexes narrow it.
			queries = append(queries, query{`SELECT id FROM subscribers
				WHERE environment_id = ? AND email IN (` + values + `)`,
				[]any{environmentID, string(addresses)}})
		}
	}
	if search != "" {
		// "In any case", as the filter means.
		pattern := "%" + sqldb.LikeEscaper.Replace(search) + "%"
		queries = append(queries, query{`SELECT id FROM subscribers
			WHERE environment_id = ? AND (email ` + d.LikeAnyCase() + ` ? ESCAPE '\' OR subscriber_id = ?)`,
			[]any{environmentID, pattern, search}})
	}
	out = []string{}
	for _, q := range queries {
		rows, err := s.db.Query(ctx, q.sql, q.args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// SubscribersAfter returns up to limit subscribers (docs/api.md,
// "Subscribers") whose subscriberId is greater than after, in subscriberId
// order, as Subscriber returns each: a broadcast reads its recipients a
// batch at a time, in one query, rather than one by one.
func (s *Store) SubscribersAfter(ctx context.Context, environmentID, after string, limit int) (out []Subscriber, err error) {
	defer platform.Wrap(&err, "subscribers after %q", after)
	rows, err := s.db.QueryContext(ctx, `SELECT `+subscriberColumns+` FROM subscribers
		WHERE environment_id = ? AND subscriber_id > ?
		ORDER BY subscriber_id LIMIT ?`, environmentID, after, limit)
	if err != nil {
		return nil, err
	}
	subs, err := s.scanAll(rows)
	if err != nil {
		return nil, err
	}
	return s.documents(ctx, environmentID, subs)
}

// CountSubscribers answers how many subscribers the environment has: how
// many a broadcast reaches.
func (s *Store) CountSubscribers(ctx context.Context, environmentID string) (n int64, err error) {
	defer platform.Wrap(&err, "count subscribers")
	err = s.db.QueryRow(ctx, `SELECT count(*) FROM subscribers WHERE environment_id = ?`, environmentID).Scan(&n)
	return n, err
}

// documents answers subs as Subscriber answers each, in order, with
// their channels' _integrationId resolved.
func (s *Store) documents(ctx context.Context, environmentID string, subs []*subscriber) ([]Subscriber, error) {
	if err := s.resolveChannels(ctx, environmentID, subs); err != nil {
		return nil, err
	}
	out := make([]Subscriber, len(subs))
	for i, sub := range subs {
		out[i] = sub.toResponse(true)
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

func (s *Store) scanAll(rows *sql.Rows) ([]*subscriber, error) {
	defer rows.Close()
	var out []*subscriber
	for rows.Next() {
		sub, err := s.scanSubscriber(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

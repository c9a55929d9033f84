// Package subscribers owns subscribers and what belongs to each of them:
// channel credentials, the search index, preferences and topics. It serves
// /v1/subscribers and /v2/subscribers with its cursor search, the preference
// routes and the topics of /v1 and /v2 (docs/api.md, "Subscribers";
// docs/preferences-and-topics.md), and answers the other domains' lookups in
// typed values (contract.go).
package subscribers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// IntegrationResolver finds the integration a channel entry belongs to. It is
// satisfied by integrations.Store (checked in app/wire.go); a nil one means no
// integrations are known, and every _integrationId stays "".
type IntegrationResolver interface {
	// ResolveIntegrationID returns the _id of the environment's integration
	// for providerId: the one whose identifier is given when identifier != "",
	// else the primary active one, else the oldest active one; "" with nil
	// error when there is none.
	ResolveIntegrationID(ctx context.Context, environmentID, providerID, identifier string) (string, error)
}

// Store keeps subscribers in the database.
type Store struct {
	db           *sqldb.DB
	integrations IntegrationResolver
	workflows    WorkflowSource   // for preferences; nil knows no workflow (WithWorkflows)
	sealer       *platform.Sealer // seals channels at rest; nil keeps them plain (WithSecret)
	now          func() time.Time
	fetchByKeys  string    // fetchKeys's SELECT up to its list of keys, in db's dialect
	events       EventSink // where preference events are raised; nil raises none (UseEvents)
	deletions    Deletions // told of each deleted subscriber; nil tells none (UseDeletions)
}

// Deletions is told of each subscriber deleted, inside the transaction
// that deletes it, so that what it keeps of the subscriber commits with
// the deletion or not at all.
type Deletions interface {
	SubscriberDeleted(ctx context.Context, tx *sql.Tx, sub Subscriber) error
}

// UseDeletions has d told of each subscriber deleted.
func (s *Store) UseDeletions(d Deletions) *Store {
	s.deletions = d
	return s
}

// NewStore returns a store on db. integrations may be nil (no integrations
// known yet); now may be nil for time.Now.
func NewStore(db *sqldb.DB, integrations IntegrationResolver, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	// NotIndexed keeps the planner on rowid lookups: with an index on
	// environment_id at hand it would walk the environment instead.
	fetchByKeys := `SELECT ` + searchColumns + ` FROM ` + db.Dialect().NotIndexed("subscribers s") + ` WHERE s.seq IN (`
	return &Store{db: db, integrations: integrations, now: now, fetchByKeys: fetchByKeys}
}

// writeMode says what a subscriber write may do.
type writeMode int

const (
	createOrUpdate writeMode = iota // POST: upsert
	createOnly                      // POST /v2?failIfExists=true: 409 when it exists
	updateOnly                      // PUT/PATCH: 404 when it is missing
)

// subscriberColumns is the select list every read scans with scanSubscriber.
const subscriberColumns = `id, organization_id, environment_id, subscriber_id, first_name, last_name,
	email, phone, avatar, locale, timezone, data, channels, version, created_at, updated_at, is_online, last_online_at`

type scanner interface{ Scan(dest ...any) error }

func (s *Store) scanSubscriber(row scanner) (*subscriber, error) {
	var sub subscriber
	var data *string
	var chans string
	var online *int64
	err := row.Scan(&sub.ID, &sub.OrganizationID, &sub.EnvironmentID, &sub.SubscriberID, &sub.FirstName, &sub.LastName,
		&sub.Email, &sub.Phone, &sub.Avatar, &sub.Locale, &sub.Timezone, &data, &chans, &sub.Version, &sub.CreatedAt, &sub.UpdatedAt,
		&online, &sub.LastOnlineAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if data != nil {
		sub.Data = json.RawMessage(*data)
	}
	if online != nil {
		on := *online != 0
		sub.IsOnline = &on
	}
	if sub.Channels, err = s.decodeChannels(sub.ID, chans); err != nil {
		return nil, err
	}
	return &sub, nil
}

// get reads one subscriber by subscriberId, with _integrationId resolved.
// A missing subscriber is platform.ErrNotFound itself, unwrapped, as the
// contract's Subscriber promises.
func (s *Store) get(ctx context.Context, environmentID, subscriberID string) (*subscriber, error) {
	sub, err := s.getStored(ctx, environmentID, subscriberID)
	if err != nil {
		return nil, err
	}
	return sub, s.resolveChannels(ctx, environmentID, []*subscriber{sub})
}

// getStored is get without resolving the channels' _integrationId.
func (s *Store) getStored(ctx context.Context, environmentID, subscriberID string) (*subscriber, error) {
	row := s.db.QueryRow(ctx, `SELECT `+subscriberColumns+`
		FROM subscribers WHERE environment_id = ? AND subscriber_id = ?`, environmentID, subscriberID)
	return s.scanSubscriber(row)
}

// allStored reports whether every channel has its _integrationId stored,
// so that none depends on the integrations at the time of reading.
func allStored(chans []Channel) bool {
	for _, c := range chans {
		if c.IntegrationID == "" {
			return false
		}
	}
	return true
}

// upsert writes body as mode allows and returns the row and whether it was created.
func (s *Store) upsert(ctx context.Context, tenant platform.Tenant, subscriberID string, body *subscriberBody, mode writeMode) (*subscriber, bool, error) {
	ids, err := s.resolveRequests(ctx, tenant.EnvironmentID, body.Channels)
	if err != nil {
		return nil, false, err
	}
	if mode != createOnly {
		if sub, err := s.unchangedBy(ctx, tenant.EnvironmentID, subscriberID, body, ids); err != nil || sub != nil {
			return sub, false, err
		}
	}
	defer s.changed(tenant.EnvironmentID, subscriberID)
	var sub *subscriber
	var created bool
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID, subscriberID); err != nil {
			return err
		}
		var err error
		sub, created, err = s.upsertTx(ctx, tx, tenant, subscriberID, body, ids, mode)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return sub, created, s.resolveChannels(ctx, tenant.EnvironmentID, []*subscriber{sub})
}

// unchangedBy returns the stored subscriber when body would change none of
// its fields, and nil when it would, or when there is none. Such a body is
// not written, as the platform skips it (subscriberNeedUpdate): __v and
// updatedAt stay, the writer is not held, and the subscriber's cached
// answers are kept. Clients that name each recipient by an object send the
// same fields with every trigger, and each was a write transaction of its
// own beside the trigger's (bench/README.md).
func (s *Store) unchangedBy(ctx context.Context, environmentID, subscriberID string, body *subscriberBody, integrationIDs []string) (*subscriber, error) {
	stored, err := s.getStored(ctx, environmentID, subscriberID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, changed := applied(stored, body, integrationIDs); changed {
		return nil, nil
	}
	return stored, s.resolveChannels(ctx, environmentID, []*subscriber{stored})
}

// applied returns a copy of sub with body and its channels applied, and
// whether that changes anything a write stores.
func applied(sub *subscriber, body *subscriberBody, integrationIDs []string) (*subscriber, bool) {
	next := *sub
	next.Channels = slices.Clone(sub.Channels)
	body.apply(&next)
	for i, req := range body.Channels {
		next.Channels = upsertChannel(next.Channels, req, integrationIDs[i], false)
	}
	return &next, next.changedSince(sub.mutable())
}

// mutable encodes what a write may change (saveTx's columns but __v and
// updatedAt), for telling whether a write would change anything; nil when
// it cannot be encoded (stored data that is not JSON), which is taken for a
// change, so that the write goes ahead.
func (s *subscriber) mutable() []byte {
	b, _ := json.Marshal([]any{s.FirstName, s.LastName, s.Email, s.Phone, s.Avatar, s.Locale, s.Timezone,
		s.Data, s.Channels})
	return b
}

// changedSince reports whether a write of s would store anything other
// than before, what mutable answered earlier; a nil before counts as a
// change.
func (s *subscriber) changedSince(before []byte) bool {
	return before == nil || !bytes.Equal(before, s.mutable())
}

// upsertTx is one subscriber write inside tx; a body that changes nothing
// writes nothing, as unchangedBy. integrationIDs holds the resolved
// _integrationId of each of body.Channels, looked up before the transaction
// began (the resolver may use the writer connection too).
func (s *Store) upsertTx(ctx context.Context, tx *sql.Tx, tenant platform.Tenant, subscriberID string, body *subscriberBody, integrationIDs []string, mode writeMode) (sub *subscriber, created bool, err error) {
	defer platform.Wrap(&err, "write subscriber")
	row := tx.QueryRowContext(ctx, `SELECT `+subscriberColumns+`
		FROM subscribers WHERE environment_id = ? AND subscriber_id = ?`, tenant.EnvironmentID, subscriberID)
	sub, err = s.scanSubscriber(row)
	switch {
	case errors.Is(err, platform.ErrNotFound) && mode == updateOnly:
		return nil, false, platform.NotFound("Subscriber %q not found", subscriberID)
	case errors.Is(err, platform.ErrNotFound):
		now := s.now()
		sub = &subscriber{
			ID: sqldb.NewIDAt(now), OrganizationID: tenant.OrganizationID, EnvironmentID: tenant.EnvironmentID,
			SubscriberID: subscriberID, Channels: []Channel{}, CreatedAt: sqldb.FormatTime(now),
		}
		created = true
	case err != nil:
		return nil, false, err
	case mode == createOnly:
		return nil, false, platform.Conflict("Subscriber with id %q already exists", subscriberID)
	}
	next, changed := applied(sub, body, integrationIDs)
	if created {
		return next, true, s.insertTx(ctx, tx, next)
	}
	if !changed {
		return sub, false, nil
	}
	return next, false, s.saveTx(ctx, tx, next)
}

// apply copies every field the client sent onto sub.
func (b *subscriberBody) apply(sub *subscriber) {
	set := func(key string, dst **string, v *string) {
		if b.present[key] {
			*dst = v
		}
	}
	set("firstName", &sub.FirstName, b.FirstName)
	set("lastName", &sub.LastName, b.LastName)
	set("email", &sub.Email, b.Email)
	set("phone", &sub.Phone, b.Phone)
	set("avatar", &sub.Avatar, b.Avatar)
	set("locale", &sub.Locale, b.Locale)
	set("timezone", &sub.Timezone, b.Timezone)
	if b.present["data"] {
		sub.Data = b.Data
	}
}

func (s *Store) insertTx(ctx context.Context, tx *sql.Tx, sub *subscriber) error {
	chans, err := s.encodeChannels(sub.ID, sub.Channels)
	if err != nil {
		return err
	}
	sub.UpdatedAt = sub.CreatedAt
	_, err = tx.ExecContext(ctx, `
		INSERT INTO subscribers (id, organization_id, environment_id, subscriber_id, first_name, last_name,
			email, phone, avatar, locale, timezone, data, channels, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
		sub.ID, sub.OrganizationID, sub.EnvironmentID, sub.SubscriberID, sub.FirstName, sub.LastName,
		sub.Email, sub.Phone, sub.Avatar, sub.Locale, sub.Timezone, nullJSON(sub.Data), chans,
		sub.CreatedAt, sub.UpdatedAt)
	if sqldb.IsUniqueViolation(err) {
		return platform.Conflict("Subscriber with id %q already exists", sub.SubscriberID)
	}
	return err
}

// saveTx writes every mutable column of sub back, bumping __v and updatedAt.
func (s *Store) saveTx(ctx context.Context, tx *sql.Tx, sub *subscriber) error {
	chans, err := s.encodeChannels(sub.ID, sub.Channels)
	if err != nil {
		return err
	}
	sub.Version++
	sub.UpdatedAt = sqldb.FormatTime(s.now())
	_, err = tx.ExecContext(ctx, `
		UPDATE subscribers SET first_name = ?, last_name = ?, email = ?, phone = ?, avatar = ?, locale = ?,
			timezone = ?, data = ?, channels = ?, version = ?, updated_at = ?
		WHERE id = ?`,
		sub.FirstName, sub.LastName, sub.Email, sub.Phone, sub.Avatar, sub.Locale,
		sub.Timezone, nullJSON(sub.Data), chans, sub.Version, sub.UpdatedAt, sub.ID)
	return err
}

func nullJSON(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// delete removes a subscriber, and with it its channel credentials.
func (s *Store) delete(ctx context.Context, environmentID, subscriberID string) (err error) {
	defer s.changed(environmentID, subscriberID)
	defer platform.Wrap(&err, "delete subscriber")
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		// What names the subscriber, and nothing sealed: a deletion never
		// fails on what it deletes.
		sub := Subscriber{EnvironmentID: environmentID}
		err := tx.QueryRowContext(ctx, `DELETE FROM subscribers WHERE environment_id = ? AND subscriber_id = ?
			RETURNING id, organization_id, subscriber_id, first_name, last_name, email, phone`, environmentID, subscriberID).
			Scan(&sub.ID, &sub.OrganizationID, &sub.SubscriberID, &sub.FirstName, &sub.LastName, &sub.Email, &sub.Phone)
		if errors.Is(err, sql.ErrNoRows) {
			return platform.NotFound("Subscriber %q not found", subscriberID)
		}
		if err != nil {
			return err
		}
		if s.deletions != nil {
			if err := s.deletions.SubscriberDeleted(ctx, tx, sub); err != nil {
				return err
			}
		}
		// In the transaction: the others hear of it if, and once, it commits.
		return cacheFor(s.db).written.Changed(ctx, tx, subscriberKey(environmentID, subscriberID))
	})
}

// setChannel upserts one channel entry (docs/api.md, "Channel credentials"):
// replace swaps the whole entry (PUT), otherwise the credentials merge and a
// supplied deviceTokens replaces the stored one (PATCH). Credentials that
// leave the entry as it was are not written, as the platform skips them: __v
// and updatedAt stay.
func (s *Store) setChannel(ctx context.Context, environmentID, subscriberID string, req channelRequest, replace bool) (*subscriber, error) {
	ids, err := s.resolveRequests(ctx, environmentID, []channelRequest{req})
	if err != nil {
		return nil, err
	}
	full := false
	sub, err := s.modify(ctx, environmentID, subscriberID, func(sub *subscriber) bool {
		before, had := sub.mutable(), len(sub.Channels)
		sub.Channels = upsertChannel(sub.Channels, req, ids[0], replace)
		// Only an added entry counts against the bound: a subscriber
		// stored with more before the bound existed still updates the
		// entries it has.
		if full = len(sub.Channels) > max(had, maxChannels); full {
			return false
		}
		return sub.changedSince(before)
	})
	if err != nil {
		return nil, err
	}
	if full {
		// Each integrationIdentifier adds an entry: without a bound, one
		// subscriber's document grew with every call.
		return nil, platform.InvalidField("providerId", req.ProviderID,
			"adds a channel entry past the %d a subscriber may hold", maxChannels)
	}
	return sub, s.resolveChannels(ctx, environmentID, []*subscriber{sub})
}

// deleteChannel removes every channel entry of providerID.
func (s *Store) deleteChannel(ctx context.Context, environmentID, subscriberID, providerID string) error {
	_, err := s.modify(ctx, environmentID, subscriberID, func(sub *subscriber) bool {
		kept := sub.Channels[:0]
		for _, c := range sub.Channels {
			if c.ProviderID != providerID {
				kept = append(kept, c)
			}
		}
		changed := len(kept) != len(sub.Channels)
		sub.Channels = kept
		return changed
	})
	return err
}

// modify reads a subscriber in a write transaction, lets change edit it and
// saves it when change reports a change.
func (s *Store) modify(ctx context.Context, environmentID, subscriberID string, change func(*subscriber) bool) (sub *subscriber, err error) {
	defer s.changed(environmentID, subscriberID)
	defer platform.Wrap(&err, "modify subscriber")
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, environmentID, subscriberID); err != nil {
			return err
		}
		row := tx.QueryRowContext(ctx, `SELECT `+subscriberColumns+`
			FROM subscribers WHERE environment_id = ? AND subscriber_id = ?`, environmentID, subscriberID)
		var err error
		sub, err = s.scanSubscriber(row)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Subscriber %q not found", subscriberID)
		}
		if err != nil {
			return err
		}
		if !change(sub) {
			return nil
		}
		return s.saveTx(ctx, tx, sub)
	})
	return sub, err
}

// resolveRequests looks up the _integrationId of each requested channel.
func (s *Store) resolveRequests(ctx context.Context, environmentID string, reqs []channelRequest) ([]string, error) {
	ids := make([]string, len(reqs))
	if s.integrations == nil {
		return ids, nil
	}
	for i, r := range reqs {
		id, err := s.integrations.ResolveIntegrationID(ctx, environmentID, r.ProviderID, r.IntegrationIdentifier)
		if err != nil {
			return nil, fmt.Errorf("resolve integration of %s: %w", r.ProviderID, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// resolveChannels fills every empty _integrationId that an integration now
// answers for, so an entry written before its integration existed links to
// it once it does. Lookups are shared across subs.
func (s *Store) resolveChannels(ctx context.Context, environmentID string, subs []*subscriber) error {
	if s.integrations == nil {
		return nil
	}
	cache := map[[2]string]string{}
	for _, sub := range subs {
		for i := range sub.Channels {
			c := &sub.Channels[i]
			if c.IntegrationID != "" {
				continue
			}
			key := [2]string{c.ProviderID, c.IntegrationIdentifier}
			id, ok := cache[key]
			if !ok {
				var err error
				id, err = s.integrations.ResolveIntegrationID(ctx, environmentID, c.ProviderID, c.IntegrationIdentifier)
				if err != nil {
					return fmt.Errorf("resolve integration of %s: %w", c.ProviderID, err)
				}
				cache[key] = id
			}
			c.IntegrationID = id
		}
	}
	return nil
}

// upsertChannel applies req to chans and returns the result. The entry it
// updates is the one with the same providerId and the same integration: the
// same resolved _integrationId when both sides have one, else the same
// integrationIdentifier. Without a match the entry is appended.
func upsertChannel(chans []Channel, req channelRequest, integrationID string, replace bool) []Channel {
	incoming := *req.Credentials
	incoming.DeviceTokens = dedupe(incoming.DeviceTokens)
	for i := range chans {
		c := &chans[i]
		if c.ProviderID != req.ProviderID {
			continue
		}
		if integrationID != "" && c.IntegrationID != "" {
			if c.IntegrationID != integrationID {
				continue
			}
		} else if c.IntegrationIdentifier != req.IntegrationIdentifier {
			continue
		}
		if replace {
			*c = Channel{ProviderID: req.ProviderID, IntegrationIdentifier: req.IntegrationIdentifier,
				IntegrationID: integrationID, Credentials: incoming}
			return chans
		}
		c.Credentials = mergeCredentials(c.Credentials, incoming)
		if integrationID != "" {
			c.IntegrationID = integrationID
		}
		if req.IntegrationIdentifier != "" {
			c.IntegrationIdentifier = req.IntegrationIdentifier
		}
		return chans
	}
	return append(chans, Channel{ProviderID: req.ProviderID, IntegrationIdentifier: req.IntegrationIdentifier,
		IntegrationID: integrationID, Credentials: incoming})
}

// mergeCredentials is {...old, ...incoming}: every field incoming carries
// wins, deviceTokens included (a supplied list replaces the stored one).
func mergeCredentials(old, incoming Credentials) Credentials {
	pick := func(o, n *string) *string {
		if n != nil {
			return n
		}
		return o
	}
	out := Credentials{
		WebhookURL:   pick(old.WebhookURL, incoming.WebhookURL),
		Channel:      pick(old.Channel, incoming.Channel),
		DeviceTokens: old.DeviceTokens,
		AlertUID:     pick(old.AlertUID, incoming.AlertUID),
		Title:        pick(old.Title, incoming.Title),
		ImageURL:     pick(old.ImageURL, incoming.ImageURL),
		State:        pick(old.State, incoming.State),
		ExternalURL:  pick(old.ExternalURL, incoming.ExternalURL),
	}
	if incoming.DeviceTokens != nil {
		out.DeviceTokens = incoming.DeviceTokens
	}
	return out
}

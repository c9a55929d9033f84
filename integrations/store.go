// Package integrations owns the configured connections to providers, one
// channel each, with their credentials encrypted at rest, and serves
// /v1/integrations (docs/api.md, "Integrations"); the other domains learn
// which integration serves a channel through the Store's exported methods
// (provided.go).
package integrations

import (
	"context"
	"crypto/cipher"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Store keeps integrations in SQLite.
type Store struct {
	db   *sqldb.DB
	aead cipher.AEAD
	now  func() time.Time

	tokensPruned atomic.Int64 // when replayed last pruned old receipt tokens, in Unix seconds

	checkTimeout time.Duration // checkTimeout, shorter in tests

	// Every channel delivery reads the environment's active integrations;
	// the answer is cached until the next integration write through this
	// store, or through another process on the same database (peers).
	// Keyed by environment + "\x00" + channel.
	active sqldb.WriteCache[[]Integration]
	peers  sqldb.Invalidations

	// outbound is how check: true reaches providers: through the outbound
	// guard, following redirects only within one host.
	outbound provider.Deps

	receipts  ReceiptSink // where providers' receipts are applied; nil serves none (UseReceipts)
	publicURL string      // where providers reach Herald; "" for the request's own host (UsePublicURL)
	sns       snsVerifier // checks Amazon SNS messages' signatures
}

// changed invalidates the cache. Writers call it after their transaction
// ends, so an answer read before a write's commit is not used again.
func (s *Store) changed() { s.active.Invalidate() }

// NewStore returns a Store on db whose credentials are encrypted with a key
// derived from secret (platform.LoadSecret).
func NewStore(db *sqldb.DB, secret []byte) (*Store, error) {
	aead, err := newAEAD(secret)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, aead: aead, now: time.Now, checkTimeout: checkTimeout}
	s.peers = db.Invalidations("herald_integrations", nil, s.changed)
	return s.WithOutbound(nil), nil
}

// writing begins an integration write in tx to the organization's
// integrations. It tells the other processes sharing the database to drop
// their cached integrations when tx commits, and takes turns with their
// writes to the organization: each reads before it writes (one service
// integration per environment, one primary per channel, an identifier free
// in the organization), which SQLite's one writer serialises, and two
// processes would otherwise both find the way clear.
func (s *Store) writing(ctx context.Context, tx *sql.Tx, organizationID string) error {
	if err := s.db.LockKey(ctx, tx, "integrations/"+organizationID); err != nil {
		return err
	}
	return s.peers.Changed(ctx, tx)
}

// WithOutbound makes checks connect only where guard allows (nil: the
// default guard, which refuses private addresses); it returns s.
func (s *Store) WithOutbound(guard *outbound.Guard) *Store {
	s.outbound = provider.Deps{Client: newCheckClient(guard), Dial: guard.DialContext}
	return s
}

// querier is what both the read pool and a write transaction offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// selectColumns is shared by every read, so scan has one column order.
const selectColumns = `SELECT id, organization_id, environment_id, name, identifier, provider_id, channel,
	credentials, configurations, conditions, active, is_primary, deleted,
	coalesce(deleted_at, ''), coalesce(deleted_by, ''), created_at FROM integrations `

// query runs selectColumns + rest and decodes every row.
func (s *Store) query(ctx context.Context, q querier, rest string, args ...any) ([]integration, error) {
	rows, err := q.QueryContext(ctx, selectColumns+rest, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []integration
	for rows.Next() {
		var in integration
		var sealed []byte
		var cfg, conds string
		err := rows.Scan(&in.ID, &in.OrganizationID, &in.EnvironmentID, &in.Name, &in.Identifier, &in.ProviderID,
			&in.Channel, &sealed, &cfg, &conds, &in.Active, &in.Primary, &in.Deleted, &in.DeletedAt, &in.DeletedBy, &in.CreatedAt)
		if err != nil {
			return nil, err
		}
		plain, err := s.open(in.ID, sealed)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(plain, &in.Credentials); err != nil {
			return nil, fmt.Errorf("credentials of integration %s: %w", in.ID, err)
		}
		if err := json.Unmarshal([]byte(cfg), &in.Configurations); err != nil {
			return nil, fmt.Errorf("configurations of integration %s: %w", in.ID, err)
		}
		if err := json.Unmarshal([]byte(conds), &in.Conditions); err != nil {
			return nil, fmt.Errorf("conditions of integration %s: %w", in.ID, err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// one returns the single row of a query, or platform.ErrNotFound.
func (s *Store) one(ctx context.Context, q querier, rest string, args ...any) (integration, error) {
	list, err := s.query(ctx, q, rest, args...)
	if err != nil {
		return integration{}, err
	}
	if len(list) == 0 {
		return integration{}, platform.ErrNotFound
	}
	return list[0], nil
}

// find returns a live integration of the organization by id (update and
// delete work across the organization's environments, docs/api.md,
// "Keys and environments").
func (s *Store) find(ctx context.Context, organizationID, id string) (integration, error) {
	return s.one(ctx, s.db, `WHERE id = ? AND organization_id = ? AND deleted = 0`, id, organizationID)
}

// listOrganization returns every live integration of the organization, oldest
// first: the reference platform's natural order (docs/api.md, "Integrations").
func (s *Store) listOrganization(ctx context.Context, organizationID string) ([]integration, error) {
	return s.query(ctx, s.db, `WHERE organization_id = ? AND deleted = 0 ORDER BY created_at, id`, organizationID)
}

// listEnvironment returns the environment's live integrations, oldest first,
// only the active ones when activeOnly.
func (s *Store) listEnvironment(ctx context.Context, environmentID string, activeOnly bool) ([]integration, error) {
	return s.query(ctx, s.db, `WHERE environment_id = ? AND deleted = 0 AND (active = 1 OR ? = 0)
		ORDER BY created_at, id`, environmentID, sqldb.Flag(activeOnly))
}

// hasService reports whether the environment has a live in_app integration of
// the service provider, of which there can be one (docs/api.md,
// "Integrations").
func hasService(ctx context.Context, q querier, environmentID string) (bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT 1 FROM integrations
		WHERE environment_id = ? AND channel = 'in_app' AND provider_id = 'service' AND deleted = 0 LIMIT 1`, environmentID)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	return rows.Next(), rows.Err()
}

// errIdentifierTaken is what insert and update return for a duplicate identifier.
var errIdentifierTaken = errors.New("identifier taken")

// insert stores a new integration and settles its channel's primary. It
// returns errIdentifierTaken when the environment already uses the identifier.
func (s *Store) insert(ctx context.Context, in integration) (out integration, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "insert integration")
	creds, cfg, conds, err := encodeColumns(in)
	if err != nil {
		return integration{}, err
	}
	ts := sqldb.FormatTime(s.now())
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, in.OrganizationID); err != nil {
			return err
		}
		hmacBefore, err := s.inboxHMACs(ctx, tx, in.Channel, in.EnvironmentID)
		if err != nil {
			return err
		}
		if in.Channel == "in_app" && in.ProviderID == "service" {
			exists, err := hasService(ctx, tx, in.EnvironmentID)
			if err != nil {
				return err
			}
			if exists {
				return platform.BadRequest("One environment can only have one In app provider")
			}
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO integrations (id, organization_id, environment_id, name, identifier, provider_id, channel,
				credentials, configurations, conditions, active, is_primary, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
			in.ID, in.OrganizationID, in.EnvironmentID, in.Name, in.Identifier, in.ProviderID, in.Channel,
			s.seal(in.ID, creds), cfg, conds, sqldb.Flag(in.Active), ts, ts)
		if sqldb.IsUniqueViolation(err) {
			return errIdentifierTaken
		}
		if err != nil {
			return err
		}
		if err := settlePrimary(ctx, tx, in.EnvironmentID, in.Channel); err != nil {
			return err
		}
		if err := s.revokeTokensIfHMACTurnedOn(ctx, tx, hmacBefore); err != nil {
			return err
		}
		out, err = s.one(ctx, tx, `WHERE id = ?`, in.ID)
		return err
	})
	return out, err
}

// update writes every mutable field of in over cur, the stored row, and
// settles the primary of its channel in its environment and, when it moved,
// in the one it left. A changed identifier must be free in the whole
// organization (docs/api.md, "Integrations"), where a new one need only be
// free in its environment.
func (s *Store) update(ctx context.Context, in, cur integration) (out integration, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "update integration %s", in.ID)
	creds, cfg, conds, err := encodeColumns(in)
	if err != nil {
		return integration{}, err
	}
	fromEnvironmentID := cur.EnvironmentID
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, in.OrganizationID); err != nil {
			return err
		}
		hmacBefore, err := s.inboxHMACs(ctx, tx, in.Channel, fromEnvironmentID, in.EnvironmentID)
		if err != nil {
			return err
		}
		if in.Identifier != cur.Identifier {
			var taken bool
			err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM integrations
				WHERE organization_id = ? AND identifier = ? AND id <> ? AND deleted = 0)`,
				in.OrganizationID, in.Identifier, in.ID).Scan(&taken)
			if err != nil {
				return err
			}
			if taken {
				return errIdentifierTaken
			}
		}
		if fromEnvironmentID != in.EnvironmentID && in.Channel == "in_app" && in.ProviderID == "service" {
			exists, err := hasService(ctx, tx, in.EnvironmentID)
			if err != nil {
				return err
			}
			if exists {
				return platform.BadRequest("One environment can only have one In app provider")
			}
		}
		// The primary flag does not travel: the target environment decides,
		// and its own primary must not make the move a conflict.
		moved := fromEnvironmentID != in.EnvironmentID
		res, err := tx.ExecContext(ctx, `
			UPDATE integrations SET environment_id = ?, name = ?, identifier = ?, credentials = ?,
				configurations = ?, conditions = ?, active = ?, updated_at = ?,
				is_primary = CASE WHEN ? = 1 THEN 0 ELSE is_primary END
			WHERE id = ? AND deleted = 0`,
			in.EnvironmentID, in.Name, in.Identifier, s.seal(in.ID, creds), cfg, conds, sqldb.Flag(in.Active),
			sqldb.FormatTime(s.now()), sqldb.Flag(moved), in.ID)
		if sqldb.IsUniqueViolation(err) {
			return errIdentifierTaken
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.ErrNotFound // deleted meanwhile
		}
		if moved {
			if err := settlePrimary(ctx, tx, fromEnvironmentID, in.Channel); err != nil {
				return err
			}
		}
		if err := settlePrimary(ctx, tx, in.EnvironmentID, in.Channel); err != nil {
			return err
		}
		if err := s.revokeTokensIfHMACTurnedOn(ctx, tx, hmacBefore); err != nil {
			return err
		}
		out, err = s.one(ctx, tx, `WHERE id = ?`, in.ID)
		return err
	})
	return out, err
}

// setPrimary makes the environment's integration id its channel's primary,
// activating it and clearing its conditions, as the reference platform does
// (docs/api.md, "Integrations").
func (s *Store) setPrimary(ctx context.Context, in integration) (out integration, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "set primary integration %s", in.ID)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, in.OrganizationID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE integrations SET is_primary = 0
			WHERE environment_id = ? AND channel = ? AND is_primary = 1 AND id <> ?`, in.EnvironmentID, in.Channel, in.ID)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE integrations SET is_primary = 1, active = 1, conditions = '[]', updated_at = ?
			WHERE id = ? AND deleted = 0`, sqldb.FormatTime(s.now()), in.ID)
		if err != nil {
			return err
		}
		out, err = s.one(ctx, tx, `WHERE id = ? AND deleted = 0`, in.ID)
		return err
	})
	return out, err
}

// softDelete marks the integration deleted by userID (irreversible) and hands
// a primary flag to another active integration of the channel, if any.
func (s *Store) softDelete(ctx context.Context, in integration, userID string) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "delete integration %s", in.ID)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, in.OrganizationID); err != nil {
			return err
		}
		hmacBefore, err := s.inboxHMACs(ctx, tx, in.Channel, in.EnvironmentID)
		if err != nil {
			return err
		}
		ts := sqldb.FormatTime(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE integrations
			SET deleted = 1, deleted_at = ?, deleted_by = ?, is_primary = 0, updated_at = ?
			WHERE id = ? AND deleted = 0`, ts, userID, ts, in.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.ErrNotFound // a concurrent delete won
		}
		if err := settlePrimary(ctx, tx, in.EnvironmentID, in.Channel); err != nil {
			return err
		}
		return s.revokeTokensIfHMACTurnedOn(ctx, tx, hmacBefore)
	})
}

// hasPrimary lists the channels that have a primary integration
// (docs/api.md, "The write side").
func hasPrimary(channel string) bool { return channel == "email" || channel == "sms" }

// settlePrimary keeps the invariant of an email or sms channel in one
// environment: while it has an active integration without conditions, exactly
// one of them is primary. A primary that was deleted, deactivated or given
// conditions loses the flag (the reference platform drops it in those cases
// too), and when none is left the oldest candidate takes it: so the first
// active integration becomes primary, and a deleted primary hands over.
func settlePrimary(ctx context.Context, tx *sql.Tx, environmentID, channel string) error {
	if !hasPrimary(channel) {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE integrations SET is_primary = 0
		WHERE environment_id = ? AND channel = ? AND is_primary = 1 AND (deleted = 1 OR active = 0 OR conditions <> '[]')`,
		environmentID, channel)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE integrations SET is_primary = 1
		WHERE id = (SELECT id FROM integrations
		            WHERE environment_id = ?1 AND channel = ?2 AND deleted = 0 AND active = 1 AND conditions = '[]'
		            ORDER BY created_at, id LIMIT 1)
		  AND NOT EXISTS (SELECT 1 FROM integrations
		                  WHERE environment_id = ?1 AND channel = ?2 AND deleted = 0 AND is_primary = 1)`,
		environmentID, channel)
	return err
}

// encodeColumns marshals the JSON columns; conditions are "[]" when empty,
// which settlePrimary relies on.
func encodeColumns(in integration) (creds []byte, cfg, conds string, err error) {
	if creds, err = json.Marshal(in.Credentials); err != nil {
		return nil, "", "", err
	}
	c, err := json.Marshal(in.Configurations)
	if err != nil {
		return nil, "", "", err
	}
	if len(in.Conditions) == 0 {
		return creds, string(c), "[]", nil
	}
	f, err := json.Marshal(in.Conditions)
	if err != nil {
		return nil, "", "", err
	}
	return creds, string(c), string(f), nil
}

package integrations

import (
	"context"
	"database/sql"
	"errors"

	"github.com/herald-notify/herald/platform"
)

// An inbox session goes by the environment's in-app integration: the first
// active in_app one, primary first then oldest, as ActiveIntegrations
// orders them. When a write makes that integration ask for an HMAC where
// it did not, the tokens sessions bought without one are revoked in the
// same transaction (platform.RevokeSubscriberTokens).

// sessionIntegration is the order of the in-app integrations a session
// chooses from.
const sessionIntegration = `WHERE environment_id = ? AND channel = 'in_app' AND deleted = 0 AND active = 1
	ORDER BY is_primary DESC, created_at, id LIMIT 1`

// InboxIntegration returns the in-app integration the environment's inbox
// sessions go by, or platform.ErrNotFound. It reads the database, not
// ActiveIntegrations' cache: a session that starts after HMAC was turned on
// must see it, or it would buy a token of the new generation without one.
func (s *Store) InboxIntegration(ctx context.Context, environmentID string) (out Integration, err error) {
	defer platform.Wrap(&err, "inbox integration")
	in, err := s.one(ctx, s.db, sessionIntegration, environmentID)
	if err != nil {
		return Integration{}, err
	}
	return Integration{ID: in.ID, Identifier: in.Identifier, ProviderID: in.ProviderID, Channel: in.Channel,
		Primary: in.Primary, Credentials: in.Credentials}, nil
}

// InboxOpenWithoutHMAC reports whether the environment's inbox takes
// sessions without an HMAC: it has an in-app integration sessions go by,
// and hmac is off on it.
func (s *Store) InboxOpenWithoutHMAC(ctx context.Context, environmentID string) (bool, error) {
	in, err := s.InboxIntegration(ctx, environmentID)
	if errors.Is(err, platform.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return in.Credentials.HMAC == nil || !*in.Credentials.HMAC, nil
}

// inboxHMAC reports whether the environment's inbox sessions need an HMAC.
func (s *Store) inboxHMAC(ctx context.Context, q querier, environmentID string) (bool, error) {
	list, err := s.query(ctx, q, sessionIntegration, environmentID)
	if err != nil || len(list) == 0 {
		return false, err
	}
	hmac := list[0].Credentials.HMAC
	return hmac != nil && *hmac, nil
}

// inboxHMACs reads, before a write to an integration of channel, whether
// the sessions of each environment it touches need an HMAC; nil when the
// write cannot change that.
func (s *Store) inboxHMACs(ctx context.Context, tx *sql.Tx, channel string, environmentIDs ...string) (map[string]bool, error) {
	if channel != "in_app" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, env := range environmentIDs {
		on, err := s.inboxHMAC(ctx, tx, env)
		if err != nil {
			return nil, err
		}
		out[env] = on
	}
	return out, nil
}

// revokeTokensIfHMACTurnedOn revokes, after the write, the subscriber
// tokens of each environment whose sessions need an HMAC now and did not
// before (inboxHMACs).
func (s *Store) revokeTokensIfHMACTurnedOn(ctx context.Context, tx *sql.Tx, before map[string]bool) error {
	for env, was := range before {
		if was {
			continue
		}
		on, err := s.inboxHMAC(ctx, tx, env)
		if err != nil {
			return err
		}
		if on {
			if err := platform.RevokeSubscriberTokens(ctx, s.db, tx, env); err != nil {
				return err
			}
		}
	}
	return nil
}

// WebPushKey returns the VAPID public key of the environment's active
// web-push integration, primary first then oldest, for a page to
// subscribe with; platform.ErrNotFound when there is none.
func (s *Store) WebPushKey(ctx context.Context, environmentID string) (key string, err error) {
	defer platform.Wrap(&err, "web-push integration")
	in, err := s.one(ctx, s.db, `WHERE environment_id = ? AND provider_id = 'web-push' AND deleted = 0 AND active = 1
		ORDER BY is_primary DESC, created_at, id LIMIT 1`, environmentID)
	if err != nil {
		return "", err
	}
	return in.Credentials.Value("publicKey"), nil
}

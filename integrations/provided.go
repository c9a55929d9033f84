package integrations

import (
	"context"
	"database/sql"
	"errors"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// This file holds what other domains call, through the interfaces they
// declare; package main checks those interfaces against *Store.

// SeedEnvironment creates the active in_app integration with providerId
// "service" when the environment has none, so the in-app inbox works with no
// setup (docs/api.md, "The write side"). Running it again changes nothing.
func (s *Store) SeedEnvironment(ctx context.Context, env platform.Environment) (err error) {
	defer platform.Wrap(&err, "seed integrations of %s", env.Name)
	exists, err := hasService(ctx, s.db, env.ID)
	if err != nil || exists {
		return err
	}
	name := DisplayName("service")
	_, err = s.insert(ctx, integration{
		ID:             sqldb.NewIDAt(s.now()),
		OrganizationID: env.OrganizationID,
		EnvironmentID:  env.ID,
		Name:           name,
		Identifier:     generateIdentifier(name),
		ProviderID:     "service",
		Channel:        "in_app",
		Active:         true,
	})
	var perr *platform.Error
	if errors.As(err, &perr) {
		return nil // seeded concurrently: the one-per-environment rule refused a second
	}
	return err
}

// ResolveIntegrationID returns the _id of the environment's active
// integration for providerID: the one whose identifier is given when
// identifier != "", else the primary one, else the oldest; "" with nil
// error when there is none. As on the reference platform, an inactive
// integration is not linked (docs/api.md, "Channel credentials").
func (s *Store) ResolveIntegrationID(ctx context.Context, environmentID, providerID, identifier string) (id string, err error) {
	defer platform.Wrap(&err, "resolve integration %s", providerID)
	query := `SELECT id FROM integrations
		WHERE environment_id = ? AND provider_id = ? AND deleted = 0 AND active = 1
		ORDER BY is_primary DESC, created_at, id LIMIT 1`
	args := []any{environmentID, providerID}
	if identifier != "" {
		query = `SELECT id FROM integrations
			WHERE environment_id = ? AND provider_id = ? AND identifier = ? AND deleted = 0 AND active = 1`
		args = append(args, identifier)
	}
	err = s.db.QueryRowContext(ctx, query, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// Integration is an integration as a delivery uses it, and as the console
// shows it.
type Integration struct {
	ID            string
	EnvironmentID string
	Name          string
	Identifier    string
	ProviderID    string
	Channel       string
	Active        bool
	Primary       bool
	Conditions    int                  // how many step filters choose it
	Credentials   provider.Credentials // decrypted, the update-only ones included
	CreatedAt     string
}

// ActiveIntegrations returns the environment's active, non-deleted
// integrations of a channel, primary first then oldest first. Answers are
// cached until the next integration write through s, and shared: callers
// must not modify them.
func (s *Store) ActiveIntegrations(ctx context.Context, environmentID, channel string) (out []Integration, err error) {
	defer platform.Wrap(&err, "active %s integrations", channel)
	return s.active.Get(environmentID+"\x00"+channel, func() ([]Integration, error) {
		list, err := s.query(ctx, s.db, `WHERE environment_id = ? AND channel = ? AND deleted = 0 AND active = 1
			ORDER BY is_primary DESC, created_at, id`, environmentID, channel)
		if err != nil {
			return nil, err
		}
		out := make([]Integration, 0, len(list))
		for _, in := range list {
			pub := in.public()
			pub.Credentials.StatusCallback = s.statusCallback(in)
			out = append(out, pub)
		}
		return out, nil
	})
}

// statusCallback is the receipt route a send through in names for the
// provider's status callbacks, where its send call can carry one: only
// with a public URL set (a request's own host is not known to a send)
// and inbound webhooks enabled, so that the route takes what comes.
func (s *Store) statusCallback(in integration) string {
	if s.publicURL == "" {
		return ""
	}
	if on := in.Configurations.InboundWebhookEnabled; on == nil || !*on {
		return ""
	}
	if _, ok := receiptReaders[in.ProviderID]; !ok {
		return ""
	}
	return s.publicURL + ReceiptPath(in.OrganizationID, in.EnvironmentID, in.Channel, in.ID)
}

// HasActiveIntegration reports whether the environment has an active
// integration for channel.
func (s *Store) HasActiveIntegration(ctx context.Context, environmentID, channel string) (ok bool, err error) {
	defer platform.Wrap(&err, "has active %s integration", channel)
	err = s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM integrations
		WHERE environment_id = ? AND channel = ? AND deleted = 0 AND active = 1)`, environmentID, channel).Scan(&ok)
	return ok, err
}

package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/platform"
)

// WithSecret seals each message's target at rest: a chat message's webhook
// URL and a push message's device tokens, which let whoever holds them post
// to the channel, each under a key derived from the installation secret for
// that purpose alone. A column without platform.SealedPrefix was written
// plain, by a version that did not seal it: it is read as it is, and
// sealed by SealStoredTargets. Without a secret, targets are kept as
// written. It returns s.
func (s *Store) WithSecret(secret []byte) *Store {
	s.hooks = platform.NewSealer(secret, "message webhook URLs")
	s.tokens = platform.NewSealer(secret, "message device tokens")
	return s
}

// sealTargets turns m's webhook URL and device tokens, as newMessage set
// them, into what their columns store, bound to m's id: it runs once that
// id is final, just before m is written.
func (s *Store) sealTargets(m *message) {
	if m.DirectWebhookURL != nil && *m.DirectWebhookURL != "" {
		sealed := s.hooks.SealText([]byte(*m.DirectWebhookURL), []byte(m.ID))
		m.DirectWebhookURL = &sealed
	}
	if nullJSON(m.DeviceTokens) != nil {
		m.DeviceTokens = []byte(s.tokens.SealText(m.DeviceTokens, []byte(m.ID)))
	}
}

// openTargets sets out's directWebhookUrl and deviceTokens from m's
// columns, sealed or written plain. Only the answers that return them open
// them: the feed and the delivery never read these columns' values.
func (s *Store) openTargets(m *message, out *messageResponse) error {
	if m.DirectWebhookURL != nil && *m.DirectWebhookURL != "" {
		hook, err := s.hooks.OpenText(*m.DirectWebhookURL, []byte(m.ID))
		if err != nil {
			return targetError(m.ID, "webhook URL", err)
		}
		out.DirectWebhookURL = string(hook)
	}
	if len(m.DeviceTokens) > 0 {
		tokens, err := s.tokens.OpenText(string(m.DeviceTokens), []byte(m.ID))
		if err != nil {
			return targetError(m.ID, "device tokens", err)
		}
		if err := json.Unmarshal(tokens, &out.DeviceTokens); err != nil {
			return fmt.Errorf("message %s: device tokens are not a JSON array", m.ID)
		}
	}
	return nil
}

// targetError says why a message's target did not open, without its
// content.
func targetError(id, what string, err error) error {
	if errors.Is(err, platform.ErrNoSecret) {
		return fmt.Errorf("message %s: %s: %w", id, what, err)
	}
	return fmt.Errorf("message %s: %s does not open (was HERALD_SECRET changed?): %w", id, what, err)
}

// SealStoredTargets seals every webhook URL and device tokens column of
// the messages still written plain (platform.SealPlainRows), and returns
// how many messages it sealed. It seals nothing without a secret.
func (s *Store) SealStoredTargets(ctx context.Context) (int, error) {
	return platform.SealPlainRows(ctx, s.db, "messages",
		platform.PlainColumn{Name: "direct_webhook_url", Sealer: s.hooks},
		platform.PlainColumn{Name: "device_tokens", Sealer: s.tokens})
}

package subscribers

import (
	"context"
	"errors"
	"slices"

	"github.com/herald-notify/herald/platform"
)

// RemoveDeviceTokens removes tokens from the subscriber's channel entries
// of providerID: a push provider called them dead (FCM UNREGISTERED, APNs
// 410, Expo DeviceNotRegistered), and sending to them again would fail
// again (docs/providers.md, "Rules that hold for every provider"). A
// subscriber deleted meanwhile is no error.
func (s *Store) RemoveDeviceTokens(ctx context.Context, environmentID, subscriberID, providerID string, tokens []string) error {
	_, err := s.modify(ctx, environmentID, subscriberID, func(sub *subscriber) bool {
		changed := false
		for i := range sub.Channels {
			c := &sub.Channels[i]
			if c.ProviderID != providerID {
				continue
			}
			kept := slices.DeleteFunc(slices.Clone(c.Credentials.DeviceTokens), func(t string) bool { return slices.Contains(tokens, t) })
			if len(kept) != len(c.Credentials.DeviceTokens) {
				c.Credentials.DeviceTokens, changed = kept, true
			}
		}
		return changed
	})
	var perr *platform.Error
	if errors.As(err, &perr) && perr.Status == 404 {
		return nil
	}
	return err
}

// AddDeviceToken adds token to the subscriber's channel entry of
// providerID, creating the entry when there is none, after removing the
// tokens replaces says it stands for (a browser's earlier subscription to
// the same endpoint). The oldest tokens go past the most an entry holds.
// A missing subscriber is a 404.
func (s *Store) AddDeviceToken(ctx context.Context, environmentID, subscriberID, providerID, token string, replaces func(old string) bool) error {
	_, err := s.modify(ctx, environmentID, subscriberID, func(sub *subscriber) bool {
		i := slices.IndexFunc(sub.Channels, func(c Channel) bool { return c.ProviderID == providerID })
		if i < 0 {
			sub.Channels = append(sub.Channels, Channel{ProviderID: providerID})
			i = len(sub.Channels) - 1
		}
		c := &sub.Channels[i]
		tokens := slices.DeleteFunc(slices.Clone(c.Credentials.DeviceTokens), func(t string) bool { return t == token || replaces(t) })
		tokens = append(tokens, token)
		if len(tokens) > maxDeviceTokens {
			tokens = tokens[len(tokens)-maxDeviceTokens:]
		}
		c.Credentials.DeviceTokens = tokens
		return true
	})
	return err
}

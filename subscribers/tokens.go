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

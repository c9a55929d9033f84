package subscribers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/platform"
)

// WithSecret seals each subscriber's channels (their webhook URLs and
// device tokens, which let whoever holds them post to the channel) at rest,
// with a key derived from the installation secret for this purpose alone.
// Without it, channels are kept as written and a sealed one is an error.
// A channels column without platform.SealedPrefix is the JSON array as a
// version that did not seal wrote it: it is read as it is, and sealed by
// the next write of the subscriber or by SealStoredChannels.
func (s *Store) WithSecret(secret []byte) *Store {
	s.sealer = platform.NewSealer(secret, "subscriber channels")
	return s
}

// encodeChannels is the channels column of the subscriber whose _id is id.
// The _id is bound into the seal, so a column copied onto another row does
// not open. An empty list holds nothing secret and stays "[]".
func (s *Store) encodeChannels(id string, chans []Channel) (string, error) {
	b, err := json.Marshal(chans)
	if err != nil || len(chans) == 0 {
		return string(b), err
	}
	return s.sealer.SealText(b, []byte(id)), nil
}

// decodeChannels reads a channels column, sealed or written plain. Its
// errors name the subscriber and never the column's content.
func (s *Store) decodeChannels(id, column string) ([]Channel, error) {
	raw, err := s.sealer.OpenText(column, []byte(id))
	if errors.Is(err, platform.ErrNoSecret) {
		return nil, fmt.Errorf("subscriber %s: channels are sealed and no secret was given to open them", id)
	}
	if err != nil {
		return nil, fmt.Errorf("subscriber %s: channels do not open (was HERALD_SECRET changed?): %w", id, err)
	}
	var chans []Channel
	if err := json.Unmarshal(raw, &chans); err != nil {
		return nil, fmt.Errorf("subscriber %s: channels are not a JSON array", id)
	}
	return chans, nil
}

// SealStoredChannels seals every channels column still written plain
// (platform.SealPlainRows) and returns how many it sealed. It seals
// nothing without a secret.
func (s *Store) SealStoredChannels(ctx context.Context) (int, error) {
	return platform.SealPlainRows(ctx, s.db, "subscribers", platform.PlainColumn{Name: "channels", Sealer: s.sealer, Keep: "[]"})
}

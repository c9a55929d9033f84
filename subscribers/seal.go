package subscribers

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// sealedPrefix begins a channels column that Store sealed; base64 of the
// sealed JSON array follows. A column without it is the JSON array as a
// version that did not seal wrote it: it is read as it is, and sealed by
// the next write of the subscriber or by SealStoredChannels.
const sealedPrefix = "sealed:v1:"

// WithSecret seals each subscriber's channels (their webhook URLs and
// device tokens, which let whoever holds them post to the channel) at rest,
// with a key derived from the installation secret for this purpose alone.
// Without it, channels are kept as written and a sealed one is an error.
func (s *Store) WithSecret(secret []byte) *Store {
	s.sealer = platform.NewSealer(secret, "subscriber channels")
	return s
}

// encodeChannels is the channels column of the subscriber whose _id is id.
// The _id is bound into the seal, so a column copied onto another row does
// not open. An empty list holds nothing secret and stays "[]".
func (s *Store) encodeChannels(id string, chans []Channel) (string, error) {
	b, err := json.Marshal(chans)
	if err != nil || s.sealer == nil || len(chans) == 0 {
		return string(b), err
	}
	return s.seal(id, b), nil
}

func (s *Store) seal(id string, plain []byte) string {
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(s.sealer.Seal(plain, []byte(id)))
}

// decodeChannels reads a channels column, sealed or written plain. Its
// errors name the subscriber and never the column's content.
func (s *Store) decodeChannels(id, column string) ([]Channel, error) {
	raw := []byte(column)
	if rest, sealed := strings.CutPrefix(column, sealedPrefix); sealed {
		if s.sealer == nil {
			return nil, fmt.Errorf("subscriber %s: channels are sealed and no secret was given to open them", id)
		}
		b, err := base64.RawStdEncoding.DecodeString(rest)
		if err == nil {
			raw, err = s.sealer.Open(b, []byte(id))
		}
		if err != nil {
			return nil, fmt.Errorf("subscriber %s: channels do not open (was HERALD_SECRET changed?): %w", id, err)
		}
	}
	var chans []Channel
	if err := json.Unmarshal(raw, &chans); err != nil {
		return nil, fmt.Errorf("subscriber %s: channels are not a JSON array", id)
	}
	return chans, nil
}

// sealBatch is how many rows SealStoredChannels reads, and seals in one
// transaction, at a time.
const sealBatch = 500

// SealStoredChannels seals every channels column still written plain, a
// batch at a time, and returns how many it sealed. A row is replaced only
// while it still holds what was read: a subscriber write meanwhile, or
// another instance sealing the same row, wins, and the row is sealed either
// way. It seals nothing without a secret; run again, it finds nothing to do.
func (s *Store) SealStoredChannels(ctx context.Context) (sealed int, err error) {
	defer platform.Wrap(&err, "seal stored subscriber channels")
	if s.sealer == nil {
		return 0, nil
	}
	after := ""
	for {
		ids, columns, err := s.plainChannels(ctx, after)
		if err != nil || len(ids) == 0 {
			return sealed, err
		}
		err = s.db.Tx(ctx, func(tx *sql.Tx) error {
			for i, id := range ids {
				res, err := tx.ExecContext(ctx, `UPDATE subscribers SET channels = ? WHERE id = ? AND channels = ?`,
					s.seal(id, []byte(columns[i])), id, columns[i])
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				sealed += int(n)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return sealed, err
		}
		after = ids[len(ids)-1]
	}
}

// plainChannels reads the next batch of non-empty channels columns written
// plain, by _id after after.
func (s *Store) plainChannels(ctx context.Context, after string) (ids, columns []string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, channels FROM subscribers
		WHERE id > ? AND channels <> '[]' AND channels NOT LIKE '`+sealedPrefix+`%'
		ORDER BY id LIMIT ?`, after, sealBatch)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, column string
		if err := rows.Scan(&id, &column); err != nil {
			return nil, nil, err
		}
		ids, columns = append(ids, id), append(columns, column)
	}
	return ids, columns, rows.Err()
}

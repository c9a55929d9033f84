package webhooks

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// targets reads every active endpoint of every environment: where its lane
// posts, and the keys it signs with (the current secret, and the one a
// rotation replaced while it is still valid).
func (s *Store) targets(ctx context.Context) (map[string]target, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, url, secret, previous_secret, previous_until FROM webhook_endpoints WHERE active = 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	now := sqldb.FormatTime(s.now())
	out := map[string]target{}
	for rows.Next() {
		var id, url, secret, previous, until string
		if err := rows.Scan(&id, &url, &secret, &previous, &until); err != nil {
			return nil, err
		}
		t := target{url: url}
		columns := []string{secret}
		if previous != "" && until > now {
			columns = append(columns, previous)
		}
		for _, c := range columns {
			key, err := s.openKey(id, c)
			if err != nil {
				return nil, err
			}
			t.secrets = append(t.secrets, key)
		}
		out[id] = t
	}
	return out, rows.Err()
}

// openKey is the signing key a stored secret holds: the bytes the base64
// after whsec_ encodes.
func (s *Store) openKey(id, column string) ([]byte, error) {
	plain, err := s.sealer.OpenText(column, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("secret of webhook endpoint %s: %w", id, err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(plain), secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("secret of webhook endpoint %s: %w", id, err)
	}
	return key, nil
}

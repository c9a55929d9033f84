package integrations

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// A signed receipt whose signature covers a timestamp and a one-time token
// (Mailgun's) could be captured and posted again within the signature's
// tolerance. Each such pair taken is kept in receipt_tokens, shared by
// every instance on one database, and a pair seen before is refused.
// Only fresh, correctly signed receipts add a row, and a row older than
// twice the tolerance can no longer meet a fresh receipt: it goes, so the
// table holds minutes of receipts.

// tokenPrune is how often an instance deletes the pairs too old to matter.
const tokenPrune = time.Minute

// replayed records token for the integration and reports whether it was
// recorded before: a replay.
func (s *Store) replayed(ctx context.Context, integrationID, token string, now time.Time) (bool, error) {
	if last := s.tokensPruned.Load(); now.Unix()-last >= int64(tokenPrune/time.Second) && s.tokensPruned.CompareAndSwap(last, now.Unix()) {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM receipt_tokens WHERE seen_at < ?`,
			sqldb.FormatTime(now.Add(-2*signatureTolerance))); err != nil {
			return false, fmt.Errorf("prune receipt tokens: %w", err)
		}
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO receipt_tokens (integration_id, token, seen_at) VALUES (?, ?, ?)
		ON CONFLICT (integration_id, token) DO NOTHING`, integrationID, token, sqldb.FormatTime(now))
	if err != nil {
		return false, fmt.Errorf("record receipt token: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 0, err
}

// forget removes a token replayed recorded, for a receipt that could not
// be applied: the provider's retry of it is then taken.
func (s *Store) forget(ctx context.Context, integrationID, token string) {
	s.db.ExecContext(ctx, `DELETE FROM receipt_tokens WHERE integration_id = ? AND token = ?`, integrationID, token)
}

package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// delivery is a claimed delivery: what one attempt sends.
type delivery struct {
	ID, EnvironmentID, EndpointID, EventID, EventType string
	Attempts                                          []Attempt
	Count                                             int // attempts made before this one
	Replays                                           int // replays asked before it was claimed
	Lease                                             string
	Payload                                           []byte
}

// Attempt is one try at delivering an event (docs/webhooks.md, "The
// delivery log").
type Attempt struct {
	At              string `json:"at"`
	StatusCode      int    `json:"statusCode"`
	DurationMs      int64  `json:"durationMs"`
	ResponseExcerpt string `json:"responseExcerpt"`
}

// retrySchedule is how long after each failed attempt the next one comes:
// the Standard Webhooks schedule, about a day in all (docs/webhooks.md,
// "Delivery"). After the last, the delivery has failed.
var retrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// jittered spreads d by up to a tenth either way, so that the retries of
// many deliveries that failed together do not come back together.
func jittered(d time.Duration) time.Duration {
	spread := int64(d) / 10
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}

// maxKeptAttempts bounds the attempts a delivery's log keeps, newest
// kept, since replays may add attempts without end.
const maxKeptAttempts = 20

// anyDue reports from the read pool whether a delivery of the endpoint is
// due, so idle lanes poll without taking the writer.
func (s *Store) anyDue(ctx context.Context, endpoint string) (bool, error) {
	ts := sqldb.FormatTime(s.now())
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM webhook_deliveries
		WHERE endpoint_id = ? AND run_at IS NOT NULL AND run_at <= ? AND lease_until <= ? LIMIT 1`, endpoint, ts, ts).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// claimSQL leases up to n due deliveries of one endpoint, longest due
// first, skipping rows another instance's claim holds.
func claimSQL(d sqldb.Dialect) string {
	return `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?, updated_at = ?
		WHERE id IN (SELECT id FROM webhook_deliveries
			WHERE endpoint_id = ? AND run_at IS NOT NULL AND run_at <= ? AND lease_until <= ?
			ORDER BY run_at, id LIMIT ?` + d.SkipLocked() + `)
		RETURNING id, environment_id, endpoint_id, event_id, event_type, attempts, attempt_count, replays`
}

// claim leases up to n due deliveries of the endpoint for lease, with
// their events' bodies.
func (s *Store) claim(ctx context.Context, endpoint string, n int, lease time.Duration) (_ []*delivery, err error) {
	defer platform.Wrap(&err, "claim webhook deliveries")
	now := s.now()
	ts := sqldb.FormatTime(now)
	token := s.db.Instance() + ":" + sqldb.NewIDAt(now)
	rows, err := s.db.WriteQuery(ctx, claimSQL(s.db.Dialect()), token, sqldb.FormatTime(now.Add(lease)), ts, endpoint, ts, ts, n)
	if err != nil {
		return nil, err
	}
	var out []*delivery
	events := map[string][]*delivery{}
	for rows.Next() {
		d := &delivery{Lease: token}
		var attempts string
		if err := rows.Scan(&d.ID, &d.EnvironmentID, &d.EndpointID, &d.EventID, &d.EventType, &attempts, &d.Count, &d.Replays); err != nil {
			rows.Close()
			return nil, err
		}
		if err := json.Unmarshal([]byte(attempts), &d.Attempts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("attempts of delivery %s: %w", d.ID, err)
		}
		out = append(out, d)
		events[d.EventID] = append(events[d.EventID], d)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	return out, s.readPayloads(ctx, events)
}

// readPayloads fills in each claimed delivery's event body.
func (s *Store) readPayloads(ctx context.Context, events map[string][]*delivery) error {
	ids := make([]string, 0, len(events))
	for id := range events {
		ids = append(ids, id)
	}
	list, _ := json.Marshal(ids)
	rows, err := s.db.QueryContext(ctx, `SELECT id, payload FROM webhook_events WHERE id IN (SELECT value FROM `+
		s.db.Dialect().JSONTexts("?", "ids")+`)`, string(list))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, payload string
		if err := rows.Scan(&id, &payload); err != nil {
			return err
		}
		for _, d := range events[id] {
			d.Payload = []byte(payload)
		}
	}
	return rows.Err()
}

// outcome is the result of one attempt.
type outcome struct {
	attempt Attempt
	ok      bool   // a 2xx
	gone    bool   // a 410: the endpoint is disabled
	refused string // the guard refused the address; the reason
}

// settle records attempts' results in one transaction: each delivery's
// log, its status and next attempt, and what they say of the endpoint.
func (s *Store) settle(ctx context.Context, results map[*delivery]outcome) error {
	now := s.now()
	ts := sqldb.FormatTime(now)
	var disabled []disabledEndpoint
	err := s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		disabled = disabled[:0]
		for d, o := range results {
			gone, err := s.settleOne(ctx, tx, d, o, now, ts)
			if err != nil {
				return err
			}
			if gone.id != "" {
				disabled = append(disabled, gone)
			}
		}
		if len(disabled) > 0 {
			return s.changed(ctx, tx)
		}
		return nil
	})
	if err == nil {
		for _, g := range disabled {
			s.metrics.disabled(g)
		}
	}
	return err
}

// disabledEndpoint is an endpoint a settle disabled, and why.
type disabledEndpoint struct{ id, env, reason string }

// failingLimit is how long an endpoint may fail every delivery before it is
// disabled.
const failingLimit = 5 * 24 * time.Hour

func (s *Store) settleOne(ctx context.Context, tx *sql.Tx, d *delivery, o outcome, now time.Time, ts string) (disabledEndpoint, error) {
	attempts := append(d.Attempts, o.attempt)
	if len(attempts) > maxKeptAttempts {
		attempts = attempts[len(attempts)-maxKeptAttempts:]
	}
	log, _ := json.Marshal(attempts)
	status, runAt := "failed", any(nil)
	switch {
	case o.ok:
		status = "succeeded"
	case !o.gone && d.Count < len(retrySchedule):
		status, runAt = "pending", sqldb.FormatTime(now.Add(jittered(retrySchedule[d.Count])))
	}
	res, err := s.db.WriteExec(ctx, tx, settleSQL, d.Replays, status, string(log), d.Replays, runAt, d.Replays, ts, d.ID, d.Lease)
	if err != nil {
		return disabledEndpoint{}, fmt.Errorf("settle delivery %s: %w", d.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return disabledEndpoint{}, nil // the lease was lost: another attempt's result stands
	}
	s.metrics.delivered(d, status)
	if o.ok {
		_, err := s.db.WriteExec(ctx, tx, healthySQL, ts, d.EndpointID)
		return disabledEndpoint{}, err
	}
	var since string
	if err := s.db.WriteQueryRow(ctx, tx, failingSQL, ts, ts, d.EndpointID).Scan(&since); err != nil {
		if err == sql.ErrNoRows {
			return disabledEndpoint{}, nil // deleted meanwhile
		}
		return disabledEndpoint{}, err
	}
	reason := ""
	switch first, _ := sqldb.ParseTime(since); {
	case o.gone:
		reason = "The endpoint answered 410 Gone"
	case now.Sub(first) >= failingLimit:
		reason = "Every delivery failed for 5 days"
	}
	if reason == "" {
		return disabledEndpoint{}, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET active = 0, disabled_reason = ?, updated_at = ? WHERE id = ?`,
		reason, ts, d.EndpointID); err != nil {
		return disabledEndpoint{}, err
	}
	return disabledEndpoint{id: d.EndpointID, env: d.EnvironmentID, reason: reason}, nil
}

const (
	// A replay asked while the attempt was in flight (replays moved on)
	// keeps the delivery due: only the attempt is logged.
	settleSQL = `UPDATE webhook_deliveries SET status = CASE WHEN replays = ? THEN ? ELSE 'pending' END, attempts = ?,
		run_at = CASE WHEN replays = ? THEN ? ELSE run_at END,
		attempt_count = CASE WHEN replays = ? THEN attempt_count + 1 ELSE attempt_count END,
		lease_owner = '', lease_until = '', updated_at = ? WHERE id = ? AND lease_owner = ?`
	healthySQL = `UPDATE webhook_endpoints SET failing_since = '', updated_at = ? WHERE id = ? AND failing_since <> ''`
	failingSQL = `UPDATE webhook_endpoints SET failing_since = CASE WHEN failing_since = '' THEN ? ELSE failing_since END, updated_at = ?
		WHERE id = ? RETURNING failing_since`
)

// recoverLeases makes due again, now, the deliveries claimed by a process
// that is gone: on SQLite every claim found at start (one process owns the
// database), on a shared one those of instances whose heartbeat is stale,
// and at start this process's own.
func (s *Store) recoverLeases(ctx context.Context, starting bool) (int64, error) {
	now := s.now()
	ts := sqldb.FormatTime(now)
	where, args := "", []any{ts, ts}
	if s.db.Shared() {
		owner := `split_part(lease_owner, ':', 1)`
		where = ` AND NOT ` + sqldb.OwnerAliveSQL(owner)
		args = append(args, sqldb.LiveSince(now))
		if starting {
			where = ` AND (` + owner + ` = ? OR NOT ` + sqldb.OwnerAliveSQL(owner) + `)`
			args = append(args[:2], s.db.Instance(), sqldb.LiveSince(now))
		}
	} else if !starting {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = '', lease_until = '', run_at = ?, updated_at = ?
		WHERE run_at IS NOT NULL AND lease_owner <> ''`+where, args...)
	if err != nil {
		return 0, fmt.Errorf("recover webhook delivery leases: %w", err)
	}
	return res.RowsAffected()
}

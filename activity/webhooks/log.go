package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Delivery is one event's delivery to one endpoint, as the delivery log
// shows it (docs/webhooks.md, "The delivery log").
type Delivery struct {
	ID            string    `json:"_id"`
	EventID       string    `json:"eventId"`
	EventType     string    `json:"eventType"`
	Status        string    `json:"status"`
	Attempts      []Attempt `json:"attempts"`
	NextAttemptAt *string   `json:"nextAttemptAt"`
	CreatedAt     string    `json:"createdAt"`
}

const deliveryColumns = `id, event_id, event_type, status, attempts, run_at, created_at`

func scanDelivery(row interface{ Scan(...any) error }) (Delivery, error) {
	var d Delivery
	var attempts string
	err := row.Scan(&d.ID, &d.EventID, &d.EventType, &d.Status, &attempts, &d.NextAttemptAt, &d.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, platform.ErrNotFound
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal([]byte(attempts), &d.Attempts); err != nil {
		return d, fmt.Errorf("attempts of delivery %s: %w", d.ID, err)
	}
	if d.Attempts == nil {
		d.Attempts = []Attempt{}
	}
	return d, nil
}

// Deliveries returns a page of an endpoint's delivery log, newest first,
// or platform.ErrNotFound when the environment has no such endpoint.
func (s *Store) Deliveries(ctx context.Context, env, endpoint string, c Cursor) (Page[Delivery], error) {
	if _, err := s.Endpoint(ctx, env, endpoint); err != nil {
		return Page[Delivery]{}, err
	}
	cond, args, order, backwards := c.keyset("id")
	rows, err := s.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE endpoint_id = ?`+cond+`
		ORDER BY `+order+` LIMIT ?`, append(append([]any{endpoint}, args...), c.Limit+1)...)
	if err != nil {
		return Page[Delivery]{}, fmt.Errorf("list webhook deliveries: %w", err)
	}
	defer rows.Close()
	var list []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return Page[Delivery]{}, err
		}
		list = append(list, d)
	}
	if err := rows.Err(); err != nil {
		return Page[Delivery]{}, err
	}
	return page(list, c, backwards, func(d Delivery) string { return d.ID }), nil
}

// Replay makes one delivery of the endpoint due again now, whatever its
// status: it is sent with the same webhook-id, and its log keeps the
// attempts before. It returns the delivery as it now stands.
func (s *Store) Replay(ctx context.Context, env, endpoint, id string) (Delivery, error) {
	n, err := s.replay(ctx, env, endpoint, `id = ?`, id)
	if err != nil {
		return Delivery{}, err
	}
	if n == 0 {
		return Delivery{}, platform.ErrNotFound
	}
	return scanDelivery(s.db.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = ?`, id))
}

// ReplaySince makes every delivery of the endpoint created at or after
// since due again now, and returns how many.
func (s *Store) ReplaySince(ctx context.Context, env, endpoint string, since time.Time) (int64, error) {
	return s.replay(ctx, env, endpoint, `created_at >= ?`, sqldb.FormatTime(since))
}

func (s *Store) replay(ctx context.Context, env, endpoint, cond string, arg any) (n int64, err error) {
	defer platform.Wrap(&err, "replay webhook deliveries")
	if _, err := s.Endpoint(ctx, env, endpoint); err != nil {
		return 0, err
	}
	ts := sqldb.FormatTime(s.now())
	// A delivery in flight keeps its lease: replayed, it is sent again
	// once that attempt is recorded. attempt_count restarts, so the
	// replay gets the whole retry schedule.
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', run_at = ?, attempt_count = 0, replays = replays + 1, updated_at = ?
			WHERE endpoint_id = ? AND `+cond, ts, ts, endpoint, arg)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if n > 0 {
			s.db.AfterCommit(tx, s.wake)
		}
		return nil
	})
	return n, err
}

// SendTest queues a sample event of type t for the endpoint alone, and
// returns its delivery. It fails with a 422 for a type not in the
// catalogue.
func (s *Store) SendTest(ctx context.Context, env, endpoint, t string) (Delivery, error) {
	if _, ok := knownType(t); !ok {
		return Delivery{}, platform.InvalidField("eventType", t, "must be one of the event types")
	}
	if _, err := s.Endpoint(ctx, env, endpoint); err != nil {
		return Delivery{}, err
	}
	var id string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insertEvent(ctx, tx, env, t, sampleData(t, env, s.now()), []string{endpoint})
		return err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("send test %s: %w", t, err)
	}
	return scanDelivery(s.db.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE event_id = ? AND endpoint_id = ?`, id, endpoint))
}

// sampleData is the data of a test event of type t: its shape, with
// identifiers that name nothing.
func sampleData(t, env string, now time.Time) any {
	ts := sqldb.FormatTime(now)
	switch t {
	case EventWorkflowCreated, EventWorkflowUpdated, EventWorkflowDeleted:
		return map[string]any{"object": map[string]any{"_id": "000000000000000000000000", "workflowId": "test-workflow",
			"name": "Test workflow", "active": true, "createdAt": ts, "updatedAt": ts}}
	case EventPreferenceUpdated:
		return map[string]any{"subscriberId": "test-subscriber", "object": map[string]any{"level": "global", "enabled": true,
			"channels": map[string]bool{"email": true, "in_app": true, "sms": true, "chat": true, "push": true}}}
	}
	return messageData{Object: messaging.WebhookMessage{ID: "000000000000000000000000", EnvironmentID: env,
		SubscriberID: "test-subscriber", TemplateIdentifier: "test-workflow", WorkflowID: "test-workflow", StepID: "test-step",
		TransactionID: "test-transaction", Channel: "email", ProviderID: "sendgrid", Status: "sent",
		DeliveredAt: []string{}, CreatedAt: ts, UpdatedAt: ts}}
}

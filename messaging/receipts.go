package messaging

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/sqldb"
)

// ReceiptDetails records the execution detail a provider's receipt adds to
// its message's notification; activity's store satisfies it.
type ReceiptDetails interface {
	// RecordReceiptDetail records d inside tx, the transaction that applies
	// the receipt.
	RecordReceiptDetail(ctx context.Context, tx *sql.Tx, d ReceiptDetail) error
}

// ReceiptDetail is the execution detail of one receipt.
type ReceiptDetail struct {
	EnvironmentID, NotificationID, JobID, ProviderID string
	Status                                           string // Success, Failed or Pending
	Detail                                           string
	Raw                                              string
	At                                               time.Time
}

// UseReceipts makes the store record receipts' execution details through
// d; it returns s.
func (s *Store) UseReceipts(d ReceiptDetails) *Store {
	s.receipts = d
	return s
}

// receiptEffect is what one kind of receipt does to its message: the
// columns it sets (:at is the receipt's time, :why its error text, :errid
// a new error id, :delivered delivered_at with the time appended), the
// outbound event it raises ("" for none) and the status of its execution
// detail (docs/webhooks.md, "Receipts from providers").
type receiptEffect struct {
	set, event, detail string
}

var receiptEffects = map[string]receiptEffect{
	integrations.ReceiptSent:    {detail: "Success"},
	integrations.ReceiptDelayed: {detail: "Pending"},
	integrations.ReceiptDelivered: {set: `delivered_at = CASE WHEN coalesce(receipt_status, '') = 'delivered' THEN delivered_at
		ELSE :delivered END`, event: EventDelivered, detail: "Success"},
	integrations.ReceiptBounced:    {set: `status = 'error', error_id = :errid, error_text = :why`, event: EventBounced, detail: "Failed"},
	integrations.ReceiptFailed:     {set: `status = 'error', error_id = :errid, error_text = :why`, event: EventFailed, detail: "Failed"},
	integrations.ReceiptOpened:     {set: seenSet, event: EventOpened, detail: "Success"},
	integrations.ReceiptClicked:    {set: seenSet, event: EventClicked, detail: "Success"},
	integrations.ReceiptComplained: {event: EventComplained, detail: "Failed"},
}

// seenSet is what an open or a click sets: the recipient has seen it.
const seenSet = `seen = 1, first_seen_date = coalesce(first_seen_date, :at), last_seen_date = :at`

// ApplyReceipts applies each receipt to the environment's message it names
// (integrations' ReceiptSink): in one transaction per receipt, the message
// changes, its notification gains an execution detail, and the outbound
// event is raised. A receipt naming no message of the environment sent
// through providerID is skipped; it returns how many found theirs.
func (s *Store) ApplyReceipts(ctx context.Context, env, providerID string, receipts []integrations.Receipt) (int, error) {
	found := 0
	for _, r := range receipts {
		ok, err := s.applyReceipt(ctx, env, providerID, r)
		if err != nil {
			return found, err
		}
		if ok {
			found++
		}
	}
	return found, nil
}

func (s *Store) applyReceipt(ctx context.Context, env, providerID string, r integrations.Receipt) (found bool, err error) {
	effect, known := receiptEffects[r.Event]
	if !known {
		return false, fmt.Errorf("receipt event %q", r.Event)
	}
	at := r.At
	if at.IsZero() {
		at = s.now()
	}
	raise := effect.event != "" && s.wantsAny(ctx, env, effect.event)
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		found = false
		var id, notificationID, jobID string
		var subscriberID, channel string
		err := tx.QueryRowContext(ctx, `SELECT id, notification_id, job_id, subscriber_id, channel FROM messages
			WHERE environment_id = ? AND provider_id = ? AND (id = ? OR provider_message_id = ?)
			ORDER BY id LIMIT 1`, env, providerID, r.MessageID, r.ProviderMessageID).Scan(&id, &notificationID, &jobID, &subscriberID, &channel)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		ts := sqldb.FormatTime(at)
		why := strings.ToValidUTF8(r.Error, "")
		set := effect.set
		if set != "" {
			set += ", "
		}
		set = strings.ReplaceAll(set, ":delivered", s.queries.d.JSONAppend(deliveredColumn, ":at"))
		query, args := bindNamed(`UPDATE messages SET `+set+`receipt_status = :event, updated_at = :at WHERE id = :id`,
			map[string]any{":at": ts, ":why": why, ":errid": sqldb.NewIDAt(at), ":event": r.Event, ":id": id})
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return err
		}
		if channel == "in_app" {
			if err := s.pagesChanged(ctx, tx, env, subscriberID); err != nil {
				return err
			}
		}
		if s.receipts != nil {
			if err := s.receipts.RecordReceiptDetail(ctx, tx, ReceiptDetail{EnvironmentID: env, NotificationID: notificationID,
				JobID: jobID, ProviderID: providerID, Status: effect.detail, Detail: receiptText(r), Raw: r.Raw, At: at}); err != nil {
				return err
			}
		}
		if !raise {
			return nil
		}
		var reason *MessageError
		if why != "" {
			reason = &MessageError{Message: why}
		}
		return s.raiseFor(ctx, tx, env, effect.event, []string{id}, reason)
	})
	if err != nil {
		return false, fmt.Errorf("apply %s receipt: %w", r.Event, err)
	}
	return found, nil
}

// receiptText is the detail a receipt records: what the provider said, in
// its words, and why.
func receiptText(r integrations.Receipt) string {
	text := "Provider reported " + r.Event
	if r.ProviderStatus != "" && r.ProviderStatus != r.Event {
		text += " (" + r.ProviderStatus + ")"
	}
	if r.Error != "" {
		text += ": " + r.Error
	}
	return strings.ToValidUTF8(text, "")
}

// bindNamed replaces each :name of query that values holds with a plain
// placeholder and returns the arguments in their order: every parameter
// is then one the statement uses, which a shared database needs to type
// it.
func bindNamed(query string, values map[string]any) (string, []any) {
	var b strings.Builder
	var args []any
	for i := 0; i < len(query); {
		if query[i] == ':' {
			j := i + 1
			for j < len(query) && (query[j] >= 'a' && query[j] <= 'z') {
				j++
			}
			if v, ok := values[query[i:j]]; ok {
				b.WriteByte('?')
				args = append(args, v)
				i = j
				continue
			}
		}
		b.WriteByte(query[i])
		i++
	}
	return b.String(), args
}

package activity

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/herald-notify/herald/messaging"
)

// sourceWebhook is the source of the details a provider's receipt records,
// as the reference platform names it.
const sourceWebhook = "Webhook"

// RecordReceiptDetail records the execution detail of a provider's receipt
// on the job that sent the message, inside tx, the transaction that
// applies the receipt (messaging's ReceiptDetails).
func (s *Store) RecordReceiptDetail(ctx context.Context, tx *sql.Tx, d messaging.ReceiptDetail) error {
	var raw json.RawMessage
	if d.Raw != "" {
		// The provider's item travels as text and is kept as a JSON
		// string, so no document of another domain is parsed here.
		raw, _ = json.Marshal(d.Raw)
	}
	return s.insertDetails(ctx, tx, d.NotificationID, d.JobID, d.ProviderID, d.At,
		[]detail{{Status: d.Status, Detail: d.Detail, Source: sourceWebhook, ProviderID: d.ProviderID, Raw: raw}})
}

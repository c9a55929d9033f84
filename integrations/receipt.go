package integrations

import (
	"context"
	"time"
)

// The normalised receipt events a provider's callback is read into
// (docs/webhooks.md, "Receipts from providers").
const (
	ReceiptSent       = "sent"
	ReceiptDelivered  = "delivered"
	ReceiptDelayed    = "delayed"
	ReceiptBounced    = "bounced"
	ReceiptFailed     = "failed"
	ReceiptOpened     = "opened"
	ReceiptClicked    = "clicked"
	ReceiptComplained = "complained"
)

// Receipt is one thing a provider reports about a message it accepted.
type Receipt struct {
	// MessageID is Herald's message _id when the provider echoes it back
	// (the custom argument the send set); ProviderMessageID is the
	// provider's own id of the message. Either finds the message.
	MessageID         string
	ProviderMessageID string
	Event             string    // one of the Receipt… constants
	ProviderStatus    string    // the provider's own word for it
	Error             string    // why, for a bounce or failure
	At                time.Time // when the provider says it happened; zero for now
	Raw               string    // the provider's item, kept on the execution detail
}

// ReceiptSink applies receipts to the messages they name; messaging's store
// satisfies it. It is declared here, by the domain that receives the
// receipts, and wired in by app.
type ReceiptSink interface {
	// ApplyReceipts applies each receipt to the environment's message it
	// names, sent through providerID, and returns how many found one.
	ApplyReceipts(ctx context.Context, environmentID, providerID string, receipts []Receipt) (int, error)
}

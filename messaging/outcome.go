package messaging

import (
	"encoding/json"
	"slices"
)

// sentOutcome is the outcome of a delivery that one provider took and
// answered with nothing worth keeping, as every in-app delivery is.
func sentOutcome(messageID, providerID string) outcome {
	return outcome{MessageID: messageID, ProviderID: providerID, Status: "sent", Details: []detail{
		{Status: "Pending", Detail: "Message created", Source: "Internal", ProviderID: providerID},
		{Status: "Success", Detail: "Message sent", Source: "Internal", ProviderID: providerID},
	}}
}

// storedOutcome is what a message's outcome column keeps for out: out as
// JSON, or "" when out is sentOutcome for the message's own id and
// provider, which the row already says. Most messages are in-app, and the
// outcome was a fifth of their row: dropping it puts three rows on a page
// where two fitted, and every feed read and trigger touches fewer pages.
func storedOutcome(out outcome) (string, error) {
	if isSentOutcome(out) {
		return "", nil
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func isSentOutcome(out outcome) bool {
	want := sentOutcome(out.MessageID, out.ProviderID)
	// Details compare as values, so one that carries a raw reply (a non-nil
	// Raw) never matches.
	return out.Status == want.Status && !out.Retryable && slices.Equal(out.Details, want.Details)
}

// replay is the outcome recorded with m, for a repeat call of its job.
func (m *message) replay() (json.RawMessage, error) {
	if len(m.Outcome) > 0 {
		return m.Outcome, nil
	}
	return json.Marshal(sentOutcome(m.ID, m.ProviderID))
}

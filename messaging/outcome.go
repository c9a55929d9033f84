package messaging

import (
	"encoding/json"
	"fmt"
	"slices"
)

// sentOutcome is the outcome of a delivery that one provider took and
// answered with nothing worth keeping, as every in-app delivery is.
func sentOutcome(messageID, providerID string) Outcome {
	return Outcome{MessageID: messageID, ProviderID: providerID, Status: "sent", Details: []Detail{
		{Status: "Pending", Detail: "Message created", Source: "Internal", ProviderID: providerID},
		{Status: "Success", Detail: "Message sent", Source: "Internal", ProviderID: providerID},
	}}
}

// storedOutcome is what a message's outcome column keeps for out: out as
// JSON, or "" when out is sentOutcome for the message's own id and
// provider, which the row already says. Most messages are in-app, and the
// outcome would be a large part of their row: leaving it out puts more rows
// on a page, so every feed read and trigger touches fewer pages
// (TestFootprint_InAppNotification).
func storedOutcome(out Outcome) (string, error) {
	if isSentOutcome(out) {
		return "", nil
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func isSentOutcome(out Outcome) bool {
	want := sentOutcome(out.MessageID, out.ProviderID)
	// Details compare as values, so one that carries a raw reply (a non-nil
	// Raw) never matches.
	return out.Status == want.Status && !out.Retryable && slices.Equal(out.Details, want.Details)
}

// replay is the outcome recorded with m, for a repeat call of its job.
func (m *message) replay() (Outcome, error) {
	if len(m.Outcome) == 0 {
		return sentOutcome(m.ID, m.ProviderID), nil
	}
	var out Outcome
	if err := json.Unmarshal(m.Outcome, &out); err != nil {
		return Outcome{}, fmt.Errorf("message %s: stored outcome: %w", m.ID, err)
	}
	return out, nil
}

package messaging

import "encoding/json"

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
	if out.Status != want.Status || out.Retryable || len(out.Details) != len(want.Details) {
		return false
	}
	for i, d := range out.Details {
		if d.Raw != nil || d.Status != want.Details[i].Status || d.Detail != want.Details[i].Detail ||
			d.Source != want.Details[i].Source || d.ProviderID != want.Details[i].ProviderID {
			return false
		}
	}
	return true
}

// replay is the outcome recorded with m, for a repeat call of its job.
func (m *message) replay() (json.RawMessage, error) {
	if len(m.Outcome) > 0 {
		return m.Outcome, nil
	}
	return json.Marshal(sentOutcome(m.ID, m.ProviderID))
}

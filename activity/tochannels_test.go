package activity

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const secretHook = "https://hooks.slack.com/services/T0SECRET/B0SECRET/xoxSecretPath"

// rawRecipient is the recipient column of the transaction's notification.
func rawRecipient(t *testing.T, h *harness, txID string) string {
	t.Helper()
	var raw string
	err := h.App.DB.QueryRowContext(context.Background(), `SELECT recipient FROM notifications WHERE transaction_id = ?`,
		txID).Scan(&raw)
	if err != nil {
		t.Fatalf("read recipient of %s: %v", txID, err)
	}
	return raw
}

// notificationTo is the `to` GET /v1/notifications/{id} answers for the
// transaction's notification.
func notificationTo(t *testing.T, h *harness, txID string) map[string]any {
	t.Helper()
	n := h.notifications(t, "transactionId="+txID)
	if len(n) != 1 {
		t.Fatalf("transaction %s has %d notifications", txID, len(n))
	}
	var one struct {
		To map[string]any `json:"to"`
	}
	res := h.Dev.Do(t, "GET", "/v1/notifications/"+n[0].ID, "")
	if res.Status != http.StatusOK {
		t.Fatalf("GET notification: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &one)
	return one.To
}

// A trigger to a subscriber object keeps that object with its notification
// without its channels; the subscriber is upserted with them.
func TestTrigger_ToObjectKeptWithoutChannels(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "on", nil, step("inbox", "in_app", nil))
	tx := h.trigger(t, `{"name":"on","to":{"subscriberId":"ada","firstName":"Ada",
		"channels":[{"providerId":"slack","credentials":{"webhookUrl":"`+secretHook+`"}}]}}`)

	is.True(!strings.Contains(rawRecipient(t, h, tx), "xoxSecretPath"))                           // no webhook URL stored with the notification
	is.Equal(notificationTo(t, h, tx), map[string]any{"subscriberId": "ada", "firstName": "Ada"}) // the rest of the object is kept
	var channels string
	is.NoErr(h.App.DB.QueryRowContext(context.Background(), `SELECT channels FROM subscribers WHERE subscriber_id = 'ada'`).Scan(&channels)) // read
	is.True(strings.Contains(channels, "xoxSecretPath"))                                                                                     // the subscriber has its channels (plain: this store has no secret)
}

// Channels a version that did not drop them stored with a notification
// are dropped by DropStoredChannels, once.
func TestTrigger_StoredChannelsDropped(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "on", nil, step("inbox", "in_app", nil))
	tx := h.trigger(t, `{"name":"on","to":{"subscriberId":"ada","firstName":"Ada"}}`)
	_, err := h.App.DB.ExecContext(ctx, `UPDATE notifications SET recipient = ? WHERE transaction_id = ?`,
		`{"subscriberId":"ada","firstName":"Ada","channels":[{"providerId":"slack","credentials":{"webhookUrl":"`+secretHook+`"}}]}`, tx)
	is.NoErr(err) // stored with its channels

	n, err := h.store.DropStoredChannels(ctx)
	is.NoErr(err)                                                                                 // dropped
	is.Equal(n, 1)                                                                                // from the one notification
	is.True(!strings.Contains(rawRecipient(t, h, tx), "xoxSecretPath"))                           // no webhook URL left
	is.Equal(notificationTo(t, h, tx), map[string]any{"subscriberId": "ada", "firstName": "Ada"}) // the rest kept
	n, err = h.store.DropStoredChannels(ctx)
	is.NoErr(err)  // run again
	is.Equal(n, 0) // it finds nothing to drop
}

// A broadcast kept to resume keeps its actor without its channels.
func TestBroadcast_KeptWithoutActorChannels(t *testing.T) {
	is := is.New(t)
	h := newBroadcastHarness(t)
	h.subs.onList(func(_ context.Context, after string) error {
		if after != "" {
			return errors.New("subscribers unavailable") // after the first batch
		}
		return nil
	})
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"cut",
		"actor":{"subscriberId":"boss","channels":[{"providerId":"slack","credentials":{"webhookUrl":"`+secretHook+`"}}]}}`)
	is.Equal(res.Status, http.StatusInternalServerError) // cut short, kept to resume
	var request string
	is.NoErr(h.App.DB.QueryRowContext(context.Background(), `SELECT request FROM activity_broadcasts`).Scan(&request)) // read
	is.True(strings.Contains(request, `"subscriberId":"boss"`))                                                        // the actor is kept
	is.True(!strings.Contains(request, "xoxSecretPath"))                                                               // without its webhook URL
}

func TestToWithoutChannels(t *testing.T) {
	is := is.New(t)
	hook := `"channels":[{"providerId":"slack","credentials":{"webhookUrl":"` + secretHook + `"}}]`
	for in, want := range map[string]string{
		`"ada"`:                               `"ada"`,
		`{"subscriberId":"ada",` + hook + `}`: `{"subscriberId":"ada"}`,
		`["ada",{"subscriberId":"bob",` + hook + `},{"type":"Topic","topicKey":"t"}]`: `["ada",{"subscriberId":"bob"},{"type":"Topic","topicKey":"t"}]`,
		`[{"type":"Topic","topicKey":"t"}]`:                                           `[{"type":"Topic","topicKey":"t"}]`,
	} {
		is.Equal(string(toWithoutChannels([]byte(in))), want) // each subscriber object loses its channels, the rest is kept
	}
}

package messaging_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const (
	secretHookPath = "/services/T0SECRET/xoxSecretPath"
	secretToken    = "fcm-device-token-0123456789-secret"
)

// sendTargets delivers one chat message to a webhook URL and one push
// message to secretToken, and answers their ids.
func sendTargets(t *testing.T, h *harness) (chat, push string) {
	t.Helper()
	hook := newHook(t)
	dev := h.srv.App.Development
	h.src.addIntegration(dev, "chat", "slack", map[string]any{})
	h.src.addIntegration(dev, "push", "push-webhook", map[string]any{"webhookUrl": hook.URL + "/push"})
	ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{
		map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": hook.URL + secretHookPath}},
		map[string]any{"providerId": "push-webhook", "credentials": map[string]any{"deviceTokens": []string{secretToken}}}}})
	chat = h.mustDeliver(t, job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "Hi"}})
	push = h.mustDeliver(t, job{subscriber: ada, channel: "push", controls: map[string]any{"body": "Hi"}})
	return chat, push
}

// rawTargets are the direct_webhook_url and device_tokens columns of the
// message id as the database holds them.
func rawTargets(t *testing.T, h *harness, id string) string {
	t.Helper()
	var hook, tokens *string
	err := h.srv.App.DB.QueryRowContext(context.Background(), `SELECT direct_webhook_url, device_tokens FROM messages WHERE id = ?`,
		id).Scan(&hook, &tokens)
	if err != nil {
		t.Fatalf("read message %s: %v", id, err)
	}
	var out string
	for _, v := range []*string{hook, tokens} {
		if v != nil {
			out += *v
		}
	}
	return out
}

// listedTargets are the directWebhookUrl and deviceTokens GET /v1/messages
// answers, by message id.
func listedTargets(t *testing.T, h *harness) map[string]string {
	t.Helper()
	res := h.srv.Dev.Do(t, "GET", "/v1/messages?limit=100", "")
	if res.Status != 200 {
		t.Fatalf("GET /v1/messages: %d %s", res.Status, res.Body)
	}
	var page struct {
		Data []struct {
			ID           string   `json:"_id"`
			Hook         string   `json:"directWebhookUrl"`
			DeviceTokens []string `json:"deviceTokens"`
		} `json:"data"`
	}
	json.Unmarshal(res.Body, &page)
	out := map[string]string{}
	for _, m := range page.Data {
		out[m.ID] = m.Hook + strings.Join(m.DeviceTokens, ",")
	}
	return out
}

func TestSeal_MessageRowHoldsNoPlainTarget(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	chat, push := sendTargets(t, h)
	for _, id := range []string{chat, push} {
		raw := rawTargets(t, h, id)
		is.True(strings.HasPrefix(raw, "sealed:v1:"))    // the target is sealed
		is.True(!strings.Contains(raw, "xoxSecretPath")) // no plain webhook URL
		is.True(!strings.Contains(raw, secretToken))     // no plain device token
	}
	listed := listedTargets(t, h)
	is.True(strings.HasSuffix(listed[chat], secretHookPath)) // the API answers the webhook URL as sent
	is.Equal(listed[push], secretToken)                      // and the device tokens
}

// A message as a version that did not seal wrote it is read as it is,
// and sealed by SealStoredTargets, once.
func TestSeal_PlainMessageRowsWrittenBefore(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	h := newHarness(t)
	chat, push := sendTargets(t, h)
	plainHook := "https://hooks.slack.com" + secretHookPath
	_, err := h.srv.App.DB.ExecContext(ctx, `UPDATE messages SET direct_webhook_url = ? WHERE id = ?`, plainHook, chat)
	is.NoErr(err) // written plain
	_, err = h.srv.App.DB.ExecContext(ctx, `UPDATE messages SET device_tokens = ? WHERE id = ?`, `["`+secretToken+`"]`, push)
	is.NoErr(err) // written plain

	listed := listedTargets(t, h)
	is.Equal(listed[chat], plainHook)   // the webhook URL written plain is read
	is.Equal(listed[push], secretToken) // and the device tokens

	n, err := h.store.SealStoredTargets(ctx)
	is.NoErr(err)  // sealed
	is.Equal(n, 2) // both messages written plain
	for _, id := range []string{chat, push} {
		raw := rawTargets(t, h, id)
		is.True(!strings.Contains(raw, "xoxSecretPath")) // no plain webhook URL left
		is.True(!strings.Contains(raw, secretToken))     // nor device token
	}
	is.Equal(listedTargets(t, h), listed) // still read as written
	n, err = h.store.SealStoredTargets(ctx)
	is.NoErr(err)  // run again
	is.Equal(n, 0) // it finds nothing to seal
}

// A sealed target is bound to its message: copied onto another, it does
// not open there, and the answer does not carry it.
func TestSeal_MessageTargetBoundToItsRow(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	chat, push := sendTargets(t, h)
	_, err := h.srv.App.DB.ExecContext(context.Background(), `UPDATE messages SET direct_webhook_url =
		(SELECT direct_webhook_url FROM messages WHERE id = ?) WHERE id = ?`, chat, push)
	is.NoErr(err) // copied
	res := h.srv.Dev.Do(t, "GET", "/v1/messages", "")
	is.Equal(res.Status, 500)                                     // the copy does not open
	is.True(!strings.Contains(string(res.Body), "xoxSecretPath")) // and nothing of it is answered
}

// A message sent again after a failed attempt keeps its target sealed.
func TestSeal_RedeliveredMessageStaysSealed(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	hook := newHook(t)
	hook.status = 503
	dev := h.srv.App.Development
	h.src.addIntegration(dev, "chat", "slack", map[string]any{})
	ada := h.src.addSubscriber(dev, "ada", map[string]any{"channels": []any{
		map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": hook.URL + secretHookPath}}}})
	j := job{subscriber: ada, channel: "chat", controls: map[string]any{"body": "Hi"}, jobID: "5f00000000000000000000bb"}
	first := h.deliver(t, j)
	is.Equal(first.Status, "error") // the first attempt fails
	hook.mu.Lock()
	hook.status = 200
	hook.mu.Unlock()
	j.attempt = 2
	id := h.mustDeliver(t, j)
	is.Equal(id, first.MessageID)                                       // the same message, sent again
	is.True(strings.HasPrefix(rawTargets(t, h, id), "sealed:v1:"))      // its target written sealed again
	is.True(strings.HasSuffix(listedTargets(t, h)[id], secretHookPath)) // and read as sent
}

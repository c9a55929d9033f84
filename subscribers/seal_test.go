package subscribers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
)

const (
	secretHook   = "https://hooks.slack.com/services/T0SECRET/B0SECRET/xoxSecretPath"
	secretToken  = "fcm-device-token-0123456789-secret"
	secretToken2 = "apns-device-token-abcdef-secret"
)

// rawChannels is the channels column of subscriberID as the database holds it.
func rawChannels(t *testing.T, srv *platformtest.Server, subscriberID string) string {
	t.Helper()
	var raw string
	err := srv.App.DB.QueryRowContext(context.Background(), `SELECT channels FROM subscribers WHERE subscriber_id = ?`,
		subscriberID).Scan(&raw)
	if err != nil {
		t.Fatalf("read channels of %s: %v", subscriberID, err)
	}
	return raw
}

// plainSecrets names each secret the raw column holds in plain text.
func plainSecrets(raw string) []string {
	var found []string
	for _, s := range []string{secretHook, "xoxSecretPath", secretToken, secretToken2} {
		if strings.Contains(raw, s) {
			found = append(found, s)
		}
	}
	return found
}

// credentialsOf reads subscriberID through the API: its slack webhook URL
// and its fcm device tokens.
func credentialsOf(t *testing.T, srv *platformtest.Server, subscriberID string) (string, []any) {
	t.Helper()
	var s subscriberJSON
	mustDo(t, srv.Dev, "GET", "/v1/subscribers/"+subscriberID, "", 200, &s)
	var hook string
	var tokens []any
	if c := channelOf(s, "slack"); c != nil {
		hook, _ = c.Credentials["webhookUrl"].(string)
	}
	if c := channelOf(s, "fcm"); c != nil {
		tokens, _ = c.Credentials["deviceTokens"].([]any)
	}
	return hook, tokens
}

func TestSeal_RowHoldsNoPlainCredentials(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","channels":[
		{"providerId":"slack","credentials":{"webhookUrl":"`+secretHook+`"}}]}`)
	mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"fcm","credentials":{"deviceTokens":["`+secretToken+`","`+secretToken2+`"]}}`, 200, nil)

	raw := rawChannels(t, srv, "ada")
	is.Equal(plainSecrets(raw), nil)              // neither the webhook URL nor a device token is stored plain
	is.True(strings.HasPrefix(raw, "sealed:v1:")) // the column is sealed
	is.True(!strings.Contains(raw, "slack"))      // nor anything else of the channels
	hook, tokens := credentialsOf(t, srv, "ada")
	is.Equal(hook, secretHook)                         // the API answers the webhook URL as written
	is.Equal(tokens, []any{secretToken, secretToken2}) // and the device tokens
}

func TestSeal_EmptyChannelsStayEmpty(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
	is.Equal(rawChannels(t, srv, "ada"), "[]") // nothing secret to seal
}

// A row as a version that did not seal wrote it is read as it is, sealed
// by the next write, and sealed by SealStoredChannels, once.
func TestSeal_PlainRowWrittenBefore(t *testing.T) {
	ctx := context.Background()
	plain := `[{"providerId":"slack","integrationIdentifier":"","_integrationId":"","credentials":{"webhookUrl":"` + secretHook + `"}},` +
		`{"providerId":"fcm","integrationIdentifier":"","_integrationId":"","credentials":{"deviceTokens":["` + secretToken + `"]}}]`
	setup := func(t *testing.T, ids ...string) (*platformtest.Server, *subscribers.Store) {
		srv, store := newServer(t, nil)
		for _, id := range ids {
			mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"`+id+`"}`)
			_, err := srv.App.DB.ExecContext(ctx, `UPDATE subscribers SET channels = ? WHERE subscriber_id = ?`, plain, id)
			if err != nil {
				t.Fatal(err)
			}
		}
		return srv, store
	}
	t.Run("OK read as written", func(t *testing.T) {
		is := is.New(t)
		srv, _ := setup(t, "ada")
		hook, tokens := credentialsOf(t, srv, "ada")
		is.Equal(hook, secretHook)                  // the webhook URL written plain is read
		is.Equal(tokens, []any{secretToken})        // and the device tokens
		is.Equal(rawChannels(t, srv, "ada"), plain) // a read writes nothing
	})
	t.Run("OK sealed by the next write", func(t *testing.T) {
		is := is.New(t)
		srv, _ := setup(t, "ada")
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"fcm","credentials":{"deviceTokens":["`+secretToken2+`"]}}`, 200, nil)
		is.Equal(plainSecrets(rawChannels(t, srv, "ada")), nil) // the write sealed the whole column
		hook, tokens := credentialsOf(t, srv, "ada")
		is.Equal(hook, secretHook)            // the entry not written is kept
		is.Equal(tokens, []any{secretToken2}) // the one written is updated
	})
	t.Run("OK sealed by SealStoredChannels once", func(t *testing.T) {
		is := is.New(t)
		srv, store := setup(t, "ada", "bob")
		n, err := store.SealStoredChannels(ctx)
		is.NoErr(err)  // sealed
		is.Equal(n, 2) // both rows written plain
		for _, id := range []string{"ada", "bob"} {
			is.Equal(plainSecrets(rawChannels(t, srv, id)), nil) // no secret left plain
			hook, tokens := credentialsOf(t, srv, id)
			is.Equal(hook, secretHook)           // still read
			is.Equal(tokens, []any{secretToken}) // as written
		}
		n, err = store.SealStoredChannels(ctx)
		is.NoErr(err)  // run again
		is.Equal(n, 0) // it finds nothing to seal
	})
	t.Run("OK two instances at once seal each row once", func(t *testing.T) {
		is := is.New(t)
		ids := make([]string, 30)
		for i := range ids {
			ids[i] = fmt.Sprintf("s%02d", i)
		}
		srv, store := setup(t, ids...)
		other := subscribers.NewStore(srv.App.DB, nil, srv.App.Clock.Now).WithSecret(srv.App.Secret)
		var wg sync.WaitGroup
		counts := make([]int, 2)
		errs := make([]error, 2)
		for i, s := range []*subscribers.Store{store, other} {
			wg.Go(func() { counts[i], errs[i] = s.SealStoredChannels(ctx) })
		}
		wg.Wait()
		is.NoErr(errors.Join(errs...))          // neither failed
		is.Equal(counts[0]+counts[1], len(ids)) // each row sealed once
		for _, id := range ids {
			is.Equal(plainSecrets(rawChannels(t, srv, id)), nil) // sealed
			hook, _ := credentialsOf(t, srv, id)
			is.Equal(hook, secretHook) // and read back
		}
	})
}

// A sealed column is bound to its row: copied onto another subscriber's, it
// does not open there.
func TestSeal_BoundToItsRow(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","channels":[
		{"providerId":"slack","credentials":{"webhookUrl":"`+secretHook+`"}}]}`)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"eve"}`)
	_, err := srv.App.DB.ExecContext(context.Background(), `UPDATE subscribers SET channels = ? WHERE subscriber_id = 'eve'`,
		rawChannels(t, srv, "ada"))
	is.NoErr(err) // copied
	res := srv.Dev.Do(t, "GET", "/v1/subscribers/eve", "")
	is.Equal(res.Status, 500)                                // the copy does not open
	is.True(!strings.Contains(string(res.Body), secretHook)) // and nothing of it is answered
}

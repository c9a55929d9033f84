package integrations_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// TestReceipts_MailgunReplayRefused: a Mailgun receipt's timestamp and
// token are single-use, as Mailgun documents: the same signed receipt
// posted again is refused with 401 and changes nothing, while one with a
// new token is taken.
func TestReceipts_MailgunReplayRefused(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	pid := "<mailgun-msg-1>"
	tc := receiptCase{provider: "mailgun", channel: "email", key: "mailgun-signing-key",
		credentials: map[string]any{"apiKey": "key", "from": "herald@example.com", "domain": "mg.example.com"}}
	integrationID, before := setUpSend(t, srv, tc, pid)
	signed := func(token string) string {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte("mailgun-signing-key"))
		mac.Write([]byte(ts + token))
		return `{"signature":{"timestamp":"` + ts + `","token":"` + token + `","signature":"` + hex.EncodeToString(mac.Sum(nil)) +
			`"},"event-data":{"event":"delivered","timestamp":` + ts + `,"message":{"headers":{"message-id":"mailgun-msg-1"}}}}`
	}
	path := "/webhooks/organizations/" + srv.App.Development.OrganizationID + "/environments/" +
		srv.App.Development.ID + "/email/" + integrationID
	post := func(body string) int {
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	deliveries := func() int {
		var list struct {
			Data []sentMessage `json:"data"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?channel=email", "", 200).Decode(t, &list)
		return len(list.Data[0].DeliveredAt)
	}
	first := signed("token-1")
	is.Equal(post(first), 200) // taken
	taken := deliveries()
	is.Equal(taken, len(before.DeliveredAt)+1) // a delivery time added
	is.Equal(post(first), 401)                 // the same receipt again is a replay
	is.Equal(deliveries(), taken)              // and changes nothing
	is.Equal(post(signed("token-2")), 200)     // a new token is taken
}

// TestReceipts_MessageBirdReplayRefused: a MessageBird status report's
// JWT id is single-use: the same signed report fetched again is refused
// with 401 and changes nothing, while a newly signed one is taken; a token
// signed too long ago is refused however far off its exp.
func TestReceipts_MessageBirdReplayRefused(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	pid := "messagebird-msg-1"
	tc := receiptCase{provider: "messagebird", channel: "sms", key: "messagebird-signing-key",
		credentials: map[string]any{"accessKey": "key", "from": "+15550000000"}}
	integrationID, before := setUpSend(t, srv, tc, pid)
	u := srv.URL + "/webhooks/organizations/" + srv.App.Development.OrganizationID + "/environments/" +
		srv.App.Development.ID + "/sms/" + integrationID
	get := func(r receipt) int {
		req, _ := http.NewRequest("GET", u+"?"+r.query, nil)
		req.Header = r.header
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	deliveries := func() int {
		var list struct {
			Data []sentMessage `json:"data"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?channel=sms", "", 200).Decode(t, &list)
		return len(list.Data[0].DeliveredAt)
	}
	old := messagebirdReport("messagebird-signing-key", u, pid, time.Now().Add(-time.Hour), "")
	old.header.Set("Messagebird-Signature-Jwt", messagebirdToken("messagebird-signing-key", u+"?"+old.query,
		time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
	is.Equal(get(old), 401) // signed an hour ago, though unexpired: refused

	first := messagebirdReport("messagebird-signing-key", u, pid, time.Now(), "")
	is.Equal(get(first), 200) // taken
	taken := deliveries()
	is.Equal(taken, len(before.DeliveredAt)+1)                                               // a delivery time added
	is.Equal(get(first), 401)                                                                // the same report again is a replay
	is.Equal(deliveries(), taken)                                                            // and changes nothing
	is.Equal(get(messagebirdReport("messagebird-signing-key", u, pid, time.Now(), "")), 200) // a newly signed one is taken
}

// TestReceiptTokens_Bounded: the tokens kept against replays go once no
// fresh receipt can carry them any more, so the table holds minutes of
// receipts whatever the traffic.
func TestReceiptTokens_Bounded(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	store := srv.Herald.Integrations
	count := func() (n int) {
		is.NoErr(srv.App.DB.QueryRow(t.Context(), `SELECT count(*) FROM receipt_tokens`).Scan(&n))
		return n
	}
	at := time.Now()
	for i := range 50 {
		seen, err := store.Replayed("in-1", "t-"+strconv.Itoa(i), at)
		is.NoErr(err)
		is.True(!seen) // each new
	}
	seen, err := store.Replayed("in-1", "t-1", at.Add(time.Minute))
	is.NoErr(err)
	is.True(seen)         // a token within the tolerance is a replay
	is.Equal(count(), 50) // all kept while a fresh receipt could carry them
	seen, err = store.Replayed("in-1", "later", at.Add(20*time.Minute))
	is.NoErr(err)
	is.True(!seen)       // new
	is.Equal(count(), 1) // the old ones gone
}

package console_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

var shownSecret = regexp.MustCompile(`id="shown-secret">(whsec_[^<]+)<`)

// endpointID is the endpoint id in the link a page of endpoints gives for
// url.
func endpointID(t *testing.T, page, listPath, endpointURL string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(listPath) + `/([0-9a-f]{24})">` + regexp.QuoteMeta(endpointURL) + `<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no link to the endpoint %s in the page", endpointURL)
	}
	return m[1]
}

func TestWebhooks_Pages(t *testing.T) {
	is := is.New(t)
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-signature") != "" {
			received.Add(1)
		}
	}))
	defer receiver.Close()
	srv := apptest.NewServer(t)
	b := member(t, srv, "admin@example.com", platform.RoleAdmin)
	list := devURL(srv, "webhooks")

	is.True(strings.Contains(b.get(list).body, "No endpoint yet")) // empty at first

	res := b.post(list, url.Values{"url": {"ftp://example.com/hook"}, "allEvents": {"true"}, "active": {"true"}})
	is.Equal(res.status, 422)                                             // a URL no endpoint may have
	is.True(strings.Contains(res.body, "must be an http or https URL"))   // said on the form
	is.True(strings.Contains(res.body, `value="ftp://example.com/hook"`)) // which keeps what was typed
	res = b.post(list, url.Values{"url": {receiver.URL + "/hook"}, "active": {"true"}})
	is.Equal(res.status, 422)                                           // no event type ticked
	is.True(strings.Contains(res.body, "tick at least one event type")) // marked
	res = b.post(list, url.Values{"url": {receiver.URL + "/hook"}, "eventTypes": {"message.bogus"}})
	is.Equal(res.status, 422)                                                        // a type not in the catalogue
	is.True(strings.Contains(res.body, "must be one of the"))                        // refused as the API refuses it
	is.True(strings.Contains(res.body, `class="prefs has-error" id="f-eventTypes"`)) // on the event types' boxes
	res = b.post(list, url.Values{"url": {strings.Repeat("x", 5000)}, "allEvents": {"true"}})
	is.Equal(res.status, 422) // a long, broken URL is a form error, not a failure

	res = b.post(list, url.Values{"url": {receiver.URL + "/hook"}, "description": {"Billing"}, "allEvents": {"true"}, "active": {"true"}})
	is.Equal(res.status, http.StatusCreated) // created, and opened
	m := shownSecret.FindStringSubmatch(res.body)
	is.True(m != nil) // with its signing secret, shown once
	secret := html.UnescapeString(m[1])
	page := b.get(list).body
	is.True(strings.Contains(page, "Billing")) // listed
	id := endpointID(t, page, list, receiver.URL+"/hook")
	one := devURL(srv, "webhooks", id)
	page = b.get(one).body
	is.True(!strings.Contains(page, secret))                 // never shown again
	is.True(strings.Contains(page, "Nothing delivered yet")) // an empty log

	var ep struct {
		URL        string   `json:"url"`
		EventTypes []string `json:"eventTypes"`
		Active     bool     `json:"active"`
	}
	api(t, srv.Dev, "/v2/webhooks/endpoints/"+id, &ep)
	is.Equal(ep.URL, receiver.URL+"/hook") // as the API reads it
	is.Equal(ep.EventTypes, nil)           // every event

	res = b.post(one+"/test", url.Values{"eventType": {"message.nothing"}})
	is.Equal(res.status, 422)                                 // an unknown test event
	is.True(strings.Contains(res.body, "must be one of the")) // on the form
	res = b.post(one+"/test", url.Values{"eventType": {"message.delivered"}})
	is.Equal(res.status, 303) // queued
	deadline := time.Now().Add(10 * time.Second)
	for received.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	is.Equal(received.Load(), int64(1)) // the receiver got it, signed
	for time.Now().Before(deadline) && !strings.Contains(b.get(one).body, ">succeeded<") {
		time.Sleep(20 * time.Millisecond)
	}
	page = b.get(one).body
	is.True(strings.Contains(page, ">succeeded<"))       // the log shows the delivery's status
	is.True(strings.Contains(page, "message.delivered")) // its event type
	is.True(strings.Contains(page, "<code>200</code>"))  // and the answer's code

	res = b.post(one+"/replay", url.Values{"since": {"yesterday"}})
	is.Equal(res.status, 422)                                      // a time it cannot read
	is.True(strings.Contains(res.body, "must be a date and time")) // said on the form
	res = b.post(one+"/replay", url.Values{"sinceLocal": {time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")}})
	is.Equal(res.status, 303)                                                   // replayed
	is.True(strings.Contains(b.get(one).body, "1 delivery will be sent again")) // and counted
	for received.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	is.Equal(received.Load(), int64(2)) // sent again

	res = b.post(one, url.Values{"url": {receiver.URL + "/other"}, "eventTypes": {"message.sent", "message.failed"}})
	is.Equal(res.status, 303) // saved, active unticked
	api(t, srv.Dev, "/v2/webhooks/endpoints/"+id, &ep)
	is.Equal(ep.URL, receiver.URL+"/other")                             // the new URL
	is.Equal(ep.EventTypes, []string{"message.sent", "message.failed"}) // the types ticked
	is.Equal(ep.Active, false)                                          // disabled
	res = b.post(one, url.Values{"url": {"not a url"}, "allEvents": {"true"}})
	is.Equal(res.status, 422) // refused on the edit form too

	res = b.post(one+"/secret", nil)
	is.Equal(res.status, 200)
	m = shownSecret.FindStringSubmatch(res.body)
	is.True(m != nil && html.UnescapeString(m[1]) != secret) // a new secret, shown once

	is.True(strings.Contains(b.get(one+"?after=bogus").body, "is not a cursor")) // a forged cursor is a problem shown
	is.True(strings.Contains(b.get(list+"?before=bogus").body, "is not a cursor"))

	is.Equal(b.post(one+"/deliveries/000000000000000000000000/replay", nil).status, 404) // an unknown delivery
	is.Equal(b.post(one+"/delete", nil).status, 303)                                     // deleted
	is.Equal(b.get(one).status, 404)                                                     // gone
	is.Equal(srv.Dev.Do(t, "GET", "/v2/webhooks/endpoints/"+id, "").Status, 404)         // from the API too
	is.Equal(b.post(devURL(srv, "webhooks", "nope", "test"), url.Values{"eventType": {"message.sent"}}).status, 404)

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	res = b.post(list, url.Values{"url": {failing.URL}, "eventTypes": {"message.failed"}, "active": {"true"}})
	is.Equal(res.status, http.StatusCreated)
	one = devURL(srv, "webhooks", endpointID(t, b.get(list).body, list, failing.URL))
	is.Equal(b.post(one+"/test", url.Values{"eventType": {"message.failed"}}).status, 303)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(page, "<code>503</code>"); {
		time.Sleep(20 * time.Millisecond)
		page = b.get(one).body
	}
	is.True(strings.Contains(page, "<code>503</code>"))     // the refused attempt's code
	is.True(strings.Contains(page, ">pending<"))            // to be tried again
	is.True(strings.Contains(page, "next <time"))           // at the time shown
	is.True(strings.Contains(page, "down for maintenance")) // with the answer's excerpt
}

func TestWebhooks_AdminsOnly(t *testing.T) {
	srv := apptest.NewServer(t)
	created := srv.Dev.Do(t, "POST", "/v2/webhooks/endpoints", `{"url":"https://example.com/hook"}`)
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	var list struct {
		Data []struct {
			ID string `json:"_id"`
		} `json:"data"`
	}
	api(t, srv.Dev, "/v2/webhooks/endpoints", &list)
	one := devURL(srv, "webhooks", list.Data[0].ID)
	for _, role := range []platform.Role{platform.RoleViewer, platform.RoleEditor} {
		t.Run(string(role), func(t *testing.T) {
			is := is.New(t)
			b := member(t, srv, string(role)+"@example.com", role)
			is.Equal(b.get(devURL(srv, "webhooks")).status, 403)                                                // the list
			is.Equal(b.get(one).status, 403)                                                                    // an endpoint
			is.True(!strings.Contains(b.get(devURL(srv)).body, devURL(srv, "webhooks")))                        // nor in the navigation
			is.Equal(b.post(devURL(srv, "webhooks"), url.Values{"url": {"https://example.com/x"}}).status, 403) // no new one
			is.Equal(b.post(one, url.Values{"url": {"https://example.com/x"}, "allEvents": {"1"}}).status, 403) // no change
			is.Equal(b.post(one+"/delete", nil).status, 403)                                                    // no deletion
			is.Equal(b.post(one+"/secret", nil).status, 403)                                                    // no secret
		})
	}
	var ep struct {
		URL    string `json:"url"`
		Active bool   `json:"active"`
	}
	api(t, srv.Dev, "/v2/webhooks/endpoints/"+list.Data[0].ID, &ep)
	is.New(t).Equal(ep.URL, "https://example.com/hook") // unchanged
}

package messaging_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

// These tests drive the inbox the way @novu/js does: a session bought with
// the environment's public identifier, then a subscriber token on every
// other /v1/inbox route.

// inAppIntegration returns the _id of the Development in-app integration.
func inAppIntegration(t *testing.T, srv *apptest.Server) string {
	t.Helper()
	var list []struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
		Channel       string `json:"channel"`
	}
	srv.Dev.Do(t, "GET", "/v1/integrations", "").Decode(t, &list)
	for _, in := range list {
		if in.Channel == "in_app" && in.EnvironmentID == srv.App.Development.ID {
			return in.ID
		}
	}
	t.Fatal("no in-app integration")
	return ""
}

func TestInbox_SessionRefusals(t *testing.T) {
	srv := apptest.NewServer(t)
	ident := srv.App.Development.Identifier
	c := apptest.NewInbox(t, srv, "")
	for _, tc := range []struct {
		name, body string
		status     int
		message    string
	}{
		{"no identifier with a subscriber", `{"subscriber":{"subscriberId":"a"}}`, 422, ""},
		{"no identifier at all", `{}`, 400, "Please provide a valid application identifier"},
		{"unknown identifier", `{"applicationIdentifier":"nope","subscriberId":"a"}`, 400, "Please provide a valid application identifier"},
		{"no subscriberId", `{"applicationIdentifier":"` + ident + `","subscriber":{"firstName":"x"}}`, 422, ""},
		{"subscriber of the wrong type", `{"applicationIdentifier":"` + ident + `","subscriber":7}`, 422, ""},
		{"bad email", `{"applicationIdentifier":"` + ident + `","subscriber":{"subscriberId":"a","email":"nope"}}`, 422, ""},
		{"not JSON", `{`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body, _ := c.Do("POST", "/v1/inbox/session", tc.body)
			is.Equal(status, tc.status) // the reference platform's status
			var e struct {
				Message string `json:"message"`
			}
			is.NoErr(json.Unmarshal(body, &e)) // the error is JSON the client reads message from
			if tc.message != "" {
				is.Equal(e.Message, tc.message) // the reference platform's message
			}
		})
	}
	is := is.New(t)
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/a", "").Status, 404) // no refused session made its subscriber
}

func TestInbox_SessionCreatesTheSubscriber(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	_, s := apptest.OpenInbox(t, srv, "ada", `,"email":"ada@example.com"`)
	is.True(s.Token != "")                                                // a token
	is.Equal(s.MaxSnoozeDurationHours, 24)                                // snooze offered, 24 h by default
	is.True(s.IsDevelopmentMode)                                          // the Development environment
	is.Equal(s.ApplicationIdentifier, srv.App.Development.Identifier)     // echoed
	is.Equal(len(s.UnreadCount.Severity), 4)                              // every severity counted
	is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Status, 200) // created

	// Without a valid hash an existing subscriber keeps its profile.
	apptest.OpenInbox(t, srv, "ada", `,"lastName":"Changed"`)
	var sub struct {
		Data struct {
			FirstName string  `json:"firstName"`
			LastName  *string `json:"lastName"`
			Email     string  `json:"email"`
		}
	}
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub.Data)
	is.Equal(sub.Data.Email, "ada@example.com") // kept
	is.Equal(sub.Data.LastName, nil)            // not written without a hash

	// With one, the profile sent is written.
	hash := platform.SubscriberHash(platformtest.DevKey, "ada")
	apptest.OpenInbox(t, srv, "ada", `,"lastName":"Lovelace"},"subscriberHash":"`+hash+`","x":{"a":1`)
	srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Decode(t, &sub.Data)
	is.True(sub.Data.LastName != nil && *sub.Data.LastName == "Lovelace") // updated with a valid hash
}

func TestInbox_HMAC(t *testing.T) {
	srv := apptest.NewServer(t)
	id := inAppIntegration(t, srv)
	res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+id, `{"credentials":{"hmac":true}}`)
	if res.Status != 200 {
		t.Fatalf("turn hmac on: %d %s", res.Status, res.Body)
	}
	ident := srv.App.Development.Identifier
	good := platform.SubscriberHash(platformtest.DevKey, "ada")
	prod := platform.SubscriberHash(platformtest.ProdKey, "ada")
	c := apptest.NewInbox(t, srv, "")
	for _, tc := range []struct {
		name, hash string
		status     int
	}{
		{"missing", "", 400},
		{"wrong", strings.Repeat("0", 64), 400},
		{"another environment's key", prod, 400},
		{"uppercase", strings.ToUpper(good), 400},
		{"right", good, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+ident+
				`","subscriber":{"subscriberId":"ada"},"subscriberHash":"`+tc.hash+`"}`)
			is.Equal(status, tc.status) // hex HMAC-SHA256 of the subscriberId under the environment's key
			if status == 400 {
				is.True(strings.Contains(string(body), "Please provide a valid HMAC hash")) // the reference message
			}
		})
	}
}

func TestInbox_HMACWithoutASealedKey(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	// A key made before keys were sealed exists only as its digest.
	_, err := srv.App.DB.ExecContext(context.Background(), `UPDATE api_keys SET sealed = NULL`)
	is.NoErr(err)
	srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppIntegration(t, srv), `{"credentials":{"hmac":true}}`)
	c := apptest.NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+
		`","subscriberId":"ada","subscriberHash":"`+platform.SubscriberHash(platformtest.DevKey, "ada")+`"}`)
	is.Equal(status, 400)                                              // no HMAC can be checked
	is.True(strings.Contains(string(body), "exists only as a digest")) // and the answer says why
}

func TestInbox_NoInAppIntegration(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppIntegration(t, srv), `{"active":false}`)
	is.Equal(res.Status, 200) // deactivated
	c := apptest.NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+`","subscriberId":"ada"}`)
	is.Equal(status, 404)                                                                       // no in-app integration
	is.True(strings.Contains(string(body), "The active in-app integration could not be found")) // the reference message
}

func TestInbox_Tokens(t *testing.T) {
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	good := c.Token
	parts := strings.Split(good, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
	for _, tc := range []struct {
		name, token string
		status      int
	}{
		{"valid", good, 200},
		{"missing", "", 401},
		{"forged signature", forged, 401},
		{"alg none", none, 401},
		{"garbage", "x.y.z", 401},
		{"an API key", platformtest.DevKey, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c.Token = tc.token
			status, _, _ := c.Do("GET", "/v1/inbox/notifications?limit=10", "")
			is.Equal(status, tc.status) // only Herald's own tokens open the inbox
		})
	}
	is := is.New(t)
	// An API key does not open the inbox either, nor a token the API.
	is.Equal(srv.Dev.Do(t, "GET", "/v1/inbox/notifications?limit=10", "").Status, 401) // ApiKey on an inbox route
	c.Token = good
	status, _, _ := c.Do("GET", "/v1/subscribers", "")
	is.Equal(status, 401) // a subscriber token on the API

	// A token expires after 15 days.
	srv.App.Clock.Advance(15*24*time.Hour + time.Second)
	status, _, _ = c.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 401) // expired
}

func TestInbox_TokenOfADeletedSubscriber(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	is.Equal(srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada", "").Status, 200) // deleted
	status, _, _ := c.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 401) // its token is refused
	// Created again under the same subscriberId, it is another subscriber.
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	status, _, _ = c.Do("GET", "/v1/inbox/notifications?limit=10", "")
	is.Equal(status, 401) // the old token still is
}

func TestInbox_CORS(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/inbox/session", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,novu-api-version,novu-client-version")
	res, err := srv.Client().Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 204)                                // the preflight ends at CORS
	is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "*") // any origin
	allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "novu-api-version", "novu-client-version", "novu-user-agent"} {
		is.True(strings.Contains(allowed, h)) // the client's custom headers
	}
	is.True(strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "PATCH")) // its methods

	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	_, _, h := c.Do("GET", "/v1/inbox/notifications?limit=1", "")
	is.Equal(h.Get("Access-Control-Allow-Origin"), "*") // on answers too
	_, _, h = c.Do("GET", "/v1/inbox/notifications?limit=x", "")
	is.Equal(h.Get("Access-Control-Allow-Origin"), "*") // and on errors, which the client must read

	api := srv.Dev.Do(t, "GET", "/v1/subscribers", "", "Origin", "https://app.example.com")
	is.Equal(api.Header.Get("Access-Control-Allow-Origin"), "") // the ApiKey API stays server-side
}

func TestInbox_NotificationsAndActions(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Alerts","workflowId":"alerts","active":true,"tags":["ops"],"severity":"high",
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"subject":"Alert","body":"Alert {{ payload.n }}",
		"data":{"n":"{{ payload.n }}"},
		"primaryAction":{"label":"Ack","redirect":{"url":"https://acme.test/ack"}}}}]}`)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	other, _ := apptest.OpenInbox(t, srv, "bob", "")
	apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"1"}`)
	apptest.TriggerTo(t, srv, "alerts", "ada", `{"n":"2"}`)
	apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"3"}`)
	apptest.TriggerTo(t, srv, "hello", "bob", `{"n":"4"}`)
	all := c.Wait(3)
	other.Wait(1)

	t.Run("list", func(t *testing.T) {
		is := is.New(t)
		is.Equal(all[0].Body, "Hello 3")               // newest first
		is.Equal(all[0].To.SubscriberID, "ada")        // to the subscriber
		is.Equal(len(all[0].DeliveredAt), 1)           // delivered once
		is.Equal(all[1].Severity, "high")              // the workflow's severity
		is.Equal(all[1].Workflow.Identifier, "alerts") // and the workflow
		is.Equal(all[1].PrimaryAction.Label, "Ack")    // its button
		is.True(!all[1].PrimaryAction.IsCompleted)     // not yet done
		is.Equal(all[2].Workflow.Severity, "none")     // severity defaults to none
		page, more := c.List("limit=2")
		is.Equal(len(page), 2) // a page
		is.True(more)          // with more after it
		rest, more := c.List("limit=2&after=" + page[1].ID)
		is.Equal(len(rest), 1)            // the cursor continues after the last item
		is.Equal(rest[0].Body, "Hello 1") // where the page stopped
		is.True(!more)                    // and it is the last
		skipped, _ := c.List("limit=2&offset=2")
		is.Equal(skipped[0].Body, "Hello 1") // offset without a cursor
		high, _ := c.List("limit=10&severity=high")
		is.Equal(len(high), 1) // by severity
		none, _ := c.List("limit=10&severity[]=none&severity[]=low")
		is.Equal(len(none), 2) // severities listed
		tagged, _ := c.List("limit=10&tags[]=ops&tags[]=nope")
		is.Equal(len(tagged), 1) // any of the tags
		both, _ := c.List("limit=10&tags[0][]=ops&tags[1][]=nope")
		is.Equal(len(both), 0) // each tag group must match
		byData, _ := c.List("limit=10&data=" + url.QueryEscape(`{"n":"2"}`))
		is.Equal(len(byData), 1) // by the message's data
	})

	t.Run("bad filters", func(t *testing.T) {
		for _, tc := range []struct {
			query  string
			status int
		}{
			{"limit=0", 422},
			{"limit=101", 422},
			{"limit=10&after=nope", 422},
			{"limit=10&read=false&archived=true", 400},
			{"limit=10&severity=urgent", 422},
			{"limit=10&data=notjson", 422},
			{"limit=10&createdGte=yesterday", 422},
		} {
			is := is.New(t)
			status, _, _ := c.Do("GET", "/v1/inbox/notifications?"+tc.query, "")
			is.Equal(status, tc.status) // refused: tc.query
		}
	})

	t.Run("count", func(t *testing.T) {
		is := is.New(t)
		filters := url.QueryEscape(`[{"read":false,"archived":false,"snoozed":false},{"read":false,"severity":"high"},{"tags":["ops"]},{"seen":true}]`)
		status, body, _ := c.Do("GET", "/v1/inbox/notifications/count?filters="+filters, "")
		is.Equal(status, 200) // counted
		var out struct {
			Data []struct {
				Count  int             `json:"count"`
				Filter json.RawMessage `json:"filter"`
			} `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &out))
		is.Equal(len(out.Data), 4)     // one count per filter, in order
		is.Equal(out.Data[0].Count, 3) // unread
		is.Equal(out.Data[1].Count, 1) // unread high
		is.Equal(out.Data[2].Count, 1) // tagged
		is.Equal(out.Data[3].Count, 0) // seen
		for _, bad := range []string{"nope", `[{"read":false,"archived":true}]`, `{"read":false}`} {
			status, _, _ := c.Do("GET", "/v1/inbox/notifications/count?filters="+url.QueryEscape(bad), "")
			is.Equal(status, 400) // refused filters
		}
	})

	t.Run("read and unread", func(t *testing.T) {
		is := is.New(t)
		status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+all[0].ID+"/read", "")
		is.Equal(status, 200) // read
		var out struct {
			Data apptest.InboxNotification `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &out))
		is.True(out.Data.IsRead && out.Data.IsSeen) // in the {data} envelope, read and seen
		is.True(out.Data.ReadAt != nil)             // with its time
		var msgs struct {
			Data []struct {
				ID   string `json:"_id"`
				Read bool   `json:"read"`
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/messages?channel=in_app&subscriberId=ada", "").Decode(t, &msgs)
		for _, m := range msgs.Data {
			is.Equal(m.Read, m.ID == all[0].ID) // read in the messages list too
		}
		status, body, _ = c.Do("PATCH", "/v1/inbox/notifications/"+all[0].ID+"/unread", "")
		is.Equal(status, 200) // unread again
		is.NoErr(json.Unmarshal(body, &out))
		is.True(!out.Data.IsRead && out.Data.ReadAt == nil) // its read time cleared
	})

	t.Run("archive", func(t *testing.T) {
		is := is.New(t)
		status, _, _ := c.Do("PATCH", "/v1/inbox/notifications/"+all[2].ID+"/archive", "")
		is.Equal(status, 200) // archived
		archived, _ := c.List("limit=10&archived=true")
		is.Equal(len(archived), 1)             // in the archived tab
		is.True(archived[0].IsRead)            // archived is read
		is.True(archived[0].ArchivedAt != nil) // with its time
		inbox, _ := c.List("limit=10&archived=false&snoozed=false")
		is.Equal(len(inbox), 2) // out of the inbox
		var feed struct {
			Data []struct {
				ID       string `json:"_id"`
				Archived bool   `json:"archived"`
			} `json:"data"`
		}
		srv.Dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "").Decode(t, &feed)
		for _, item := range feed.Data {
			is.Equal(item.Archived, item.ID == all[2].ID) // the server API's feed shows it archived
		}
		status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+all[2].ID+"/unarchive", "")
		is.Equal(status, 200) // back
		inbox, _ = c.List("limit=10&archived=false")
		is.Equal(len(inbox), 3) // in the inbox again
	})

	t.Run("actions", func(t *testing.T) {
		is := is.New(t)
		status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+all[1].ID+"/complete", `{"actionType":"primary"}`)
		is.Equal(status, 200) // completed
		var out struct {
			Data apptest.InboxNotification `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &out))
		is.True(out.Data.PrimaryAction.IsCompleted) // done
		is.True(out.Data.IsRead)                    // and read
		status, body, _ = c.Do("PATCH", "/v1/inbox/notifications/"+all[1].ID+"/revert", `{"actionType":"primary"}`)
		is.Equal(status, 200) // reverted
		is.NoErr(json.Unmarshal(body, &out))
		is.True(!out.Data.PrimaryAction.IsCompleted) // pending again
		status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+all[1].ID+"/complete", `{"actionType":"secondary"}`)
		is.Equal(status, 400) // no secondary button
		status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+all[1].ID+"/complete", `{"actionType":"tertiary"}`)
		is.Equal(status, 422) // no such action type
	})

	t.Run("another subscriber's notification", func(t *testing.T) {
		bobs, _ := other.List("limit=10")
		for _, action := range []string{"read", "unread", "archive", "unarchive", "unsnooze"} {
			is := is.New(t)
			status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+bobs[0].ID+"/"+action, "")
			is.Equal(status, 404)                                                                         // not ada's
			is.True(strings.Contains(string(body), "Notification with id: "+bobs[0].ID+" is not found.")) // the reference message
		}
		is := is.New(t)
		status, _, _ := c.Do("DELETE", "/v1/inbox/notifications/"+bobs[0].ID+"/delete", "")
		is.Equal(status, 404) // nor deleted
		status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/nope/read", "")
		is.Equal(status, 404) // not an id at all
		still, _ := other.List("limit=10")
		is.True(!still[0].IsRead && len(still) == 1) // bob's is untouched
	})

	t.Run("bulk", func(t *testing.T) {
		is := is.New(t)
		status, _, _ := c.Do("POST", "/v1/inbox/notifications/seen", `{"notificationIds":["`+all[0].ID+`"]}`)
		is.Equal(status, 204) // seen
		seen, _ := c.List("limit=10&seen=true")
		is.Equal(len(seen), 3) // every one was seen by an action before, or now
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/seen", `{"notificationIds":["nope"]}`)
		is.Equal(status, 422) // not an id
		c.Do("PATCH", "/v1/inbox/notifications/"+all[1].ID+"/unread", "")
		unread, _ := c.List("limit=10&read=false")
		is.Equal(len(unread), 2) // the alert and the newest
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/read", `{"tags":["ops"]}`)
		is.Equal(status, 204) // read all of a tag
		unread, _ = c.List("limit=10&read=false")
		is.Equal(len(unread), 1)          // the alert is read
		is.Equal(unread[0].ID, all[0].ID) // the other is not
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/read-archive", `{}`)
		is.Equal(status, 204) // archive what is read
		archived, _ := c.List("limit=10&archived=true")
		is.Equal(len(archived), 2) // the read ones
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/read", `{"data":"{\"n\":\"3\"}"}`)
		is.Equal(status, 204) // read by data, as a JSON string
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/read", `{"data":"[1]"}`)
		is.Equal(status, 400) // data that is not an object
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/archive", "")
		is.Equal(status, 204) // archive everything
		inbox, _ := c.List("limit=10&archived=false")
		is.Equal(len(inbox), 0) // nothing left in the inbox
		status, _, _ = c.Do("DELETE", "/v1/inbox/notifications/"+all[0].ID+"/delete", "")
		is.Equal(status, 204) // one deleted
		status, _, _ = c.Do("POST", "/v1/inbox/notifications/delete", `{}`)
		is.Equal(status, 204) // then the rest
		left, _ := c.List("limit=10")
		is.Equal(len(left), 0) // gone
		bobs, _ := other.List("limit=10")
		is.Equal(len(bobs), 1) // bob's stay
	})
}

func TestInbox_Snooze(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	n := c.Wait(1)[0]
	now := srv.App.Clock.Now()
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"in the past", `{"snoozeUntil":"` + now.Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`, 422},
		{"under a minute", `{"snoozeUntil":"` + now.Add(30*time.Second).UTC().Format(time.RFC3339) + `"}`, 422},
		{"past the maximum", `{"snoozeUntil":"` + now.Add(25*time.Hour).UTC().Format(time.RFC3339) + `"}`, 422},
		{"not a date", `{"snoozeUntil":"tomorrow"}`, 422},
		{"missing", `{}`, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, _, _ := c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/snooze", tc.body)
			is.Equal(status, tc.status) // refused
		})
	}
	is := is.New(t)
	until := now.Add(2 * time.Hour).UTC()
	status, body, _ := c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/snooze", `{"snoozeUntil":"`+until.Format(time.RFC3339)+`"}`)
	is.Equal(status, 200) // snoozed
	var out struct {
		Data apptest.InboxNotification `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &out))
	is.True(out.Data.IsSnoozed)          // snoozed
	is.True(out.Data.SnoozedUntil != "") // until then
	inbox, _ := c.List("limit=10&archived=false&snoozed=false")
	is.Equal(len(inbox), 0) // out of the inbox
	snoozed, _ := c.List("limit=10&snoozed=true")
	is.Equal(len(snoozed), 1) // in the snoozed tab
	var msg struct {
		Data []struct {
			SnoozedUntil string `json:"snoozedUntil"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/messages?channel=in_app", "").Decode(t, &msg)
	is.True(msg.Data[0].SnoozedUntil != "") // the messages list shows it

	// The job queue brings it back when the snooze ends.
	srv.App.Clock.Advance(2*time.Hour + time.Second)
	platformtest.Eventually(t, 10*time.Second, func() bool {
		inbox, _ = c.List("limit=10&archived=false&snoozed=false")
		return len(inbox) == 1
	}, "the snooze to end")
	is.True(!inbox[0].IsRead)              // unread again
	is.Equal(len(inbox[0].DeliveredAt), 2) // delivered again

	// Unsnoozing by hand drops the job.
	until = srv.App.Clock.Now().Add(3 * time.Hour).UTC()
	status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/snooze", `{"snoozeUntil":"`+until.Format(time.RFC3339)+`"}`)
	is.Equal(status, 200) // snoozed again
	status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/unsnooze", "")
	is.Equal(status, 200) // unsnoozed
	var jobs int
	is.NoErr(srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM jobs WHERE type = 'unsnooze' AND status = 'queued'`).Scan(&jobs))
	is.Equal(jobs, 0) // no job left to bring it back
	status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+n.ID+"/unsnooze", "")
	is.Equal(status, 404) // unsnoozing what is not snoozed
	var activity struct {
		Data []struct {
			Jobs []struct {
				Type string `json:"type"`
			} `json:"jobs"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications", "").Decode(t, &activity)
	for _, j := range activity.Data[0].Jobs {
		is.True(j.Type != "unsnooze") // the activity views show the workflow's steps only
	}
}

// A revoked key no longer vouches for a subscriber: its HMAC is refused
// as a wrong one is.
func TestInbox_HMACOfARevokedKey(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	srv.Dev.Do(t, "PUT", "/v1/integrations/"+inAppIntegration(t, srv), `{"credentials":{"hmac":true}}`)
	key, k, err := platform.CreateAPIKey(t.Context(), srv.App.DB, platform.Development, srv.App.Secret, srv.App.Clock.Now())
	is.NoErr(err) // a second Development key, sealed
	c := apptest.NewInbox(t, srv, "")
	session := func() int {
		status, _, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+srv.App.Development.Identifier+
			`","subscriberId":"ada","subscriberHash":"`+platform.SubscriberHash(key, "ada")+`"}`)
		return status
	}
	is.Equal(session(), 201) // the new key's HMAC opens a session
	_, err = platform.RevokeAPIKey(t.Context(), srv.App.DB, k.ID, srv.App.Clock.Now())
	is.NoErr(err)            // revoked
	is.Equal(session(), 400) // and its HMAC opens none
}

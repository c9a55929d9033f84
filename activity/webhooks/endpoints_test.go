package webhooks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

func TestEndpoints_CreateReadUpdateDelete(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	var created endpoint
	apptest.MustCreate(t, srv.Dev, "/v2/webhooks/endpoints",
		`{"url":"https://hooks.example.com/herald","description":"CRM","eventTypes":["message.sent"]}`).Decode(t, &created)
	is.True(strings.HasPrefix(created.Secret, "whsec_"))      // the secret, shown once
	is.Equal(created.URL, "https://hooks.example.com/herald") // as given
	is.Equal(created.EventTypes, []string{"message.sent"})    // the types asked for
	is.True(created.Active)                                   // active unless said otherwise

	got := mustEndpointGet(t, srv, created.ID)
	is.Equal(got.Secret, "")                   // no later answer shows the secret
	is.Equal(got.Description, "CRM")           // the description kept
	is.Equal(got.CreatedAt, created.CreatedAt) // the same endpoint

	var patched endpoint
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/webhooks/endpoints/"+created.ID, `{"eventTypes":null,"active":false}`, 200).Decode(t, &patched)
	is.Equal(patched.EventTypes, nil)    // null takes every type again
	is.True(!patched.Active)             // deactivated
	is.Equal(patched.Description, "CRM") // what was not given is kept
	res := srv.Prod.Do(t, "GET", "/v2/webhooks/endpoints/"+created.ID, "")
	is.Equal(res.Status, 404) // another environment's endpoint is not found
	apptest.MustStatus(t, srv.Dev, "DELETE", "/v2/webhooks/endpoints/"+created.ID, "", 204)
	res = srv.Dev.Do(t, "GET", "/v2/webhooks/endpoints/"+created.ID, "")
	is.Equal(res.Status, 404) // deleted
}

func TestEndpoints_CreateRefusesBadInput(t *testing.T) {
	srv := apptest.NewServer(t)
	for _, tc := range []struct {
		name, body, field string
		status            int
	}{
		{"ErrNoURL", `{}`, "url", 422},
		{"ErrRelativeURL", `{"url":"/hook"}`, "url", 422},
		{"ErrScheme", `{"url":"ftp://example.com/hook"}`, "url", 422},
		{"ErrCredentialsInURL", `{"url":"https://user:pw@example.com/hook"}`, "url", 422},
		{"ErrUnknownType", `{"url":"https://example.com","eventTypes":["message.nope"]}`, "eventTypes.0", 422},
		{"ErrTypesNotAList", `{"url":"https://example.com","eventTypes":"message.sent"}`, "", 422},
		{"ErrLongDescription", `{"url":"https://example.com","description":"` + strings.Repeat("x", 501) + `"}`, "description", 422},
		{"ErrNotJSON", `{"url":`, "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v2/webhooks/endpoints", tc.body)
			is.Equal(res.Status, tc.status) // refused
			var e struct {
				Errors map[string]any `json:"errors"`
			}
			json.Unmarshal(res.Body, &e)
			if tc.field != "" {
				_, named := e.Errors[tc.field]
				is.True(named) // the error names the field
			}
		})
	}
	var page struct {
		Data []endpoint `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints", "", 200).Decode(t, &page)
	is.New(t).Equal(len(page.Data), 0) // nothing was created
}

func TestEndpoints_ListPagesByCursor(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	var ids []string
	for range 5 {
		var e endpoint
		apptest.MustCreate(t, srv.Dev, "/v2/webhooks/endpoints", `{"url":"https://example.com/h"}`).Decode(t, &e)
		ids = append([]string{e.ID}, ids...) // newest first
	}
	type page struct {
		Data     []endpoint `json:"data"`
		Next     *string    `json:"next"`
		Previous *string    `json:"previous"`
	}
	var seen []string
	var p page
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints?limit=2", "", 200).Decode(t, &p)
	is.Equal(p.Previous, nil) // the first page has none before it
	for {
		for _, e := range p.Data {
			seen = append(seen, e.ID)
		}
		if p.Next == nil {
			break
		}
		next := *p.Next
		p = page{}
		apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints?limit=2&after="+next, "", 200).Decode(t, &p)
		is.True(p.Previous != nil) // a later page can go back
	}
	is.Equal(seen, ids) // following next visits each endpoint once, newest first
	var back page
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/endpoints?limit=2&before="+*p.Previous, "", 200).Decode(t, &back)
	is.Equal(len(back.Data), 2)       // previous walks back
	is.Equal(back.Data[1].ID, ids[3]) // to the page before
	res := srv.Dev.Do(t, "GET", "/v2/webhooks/endpoints?after=bogus", "")
	is.Equal(res.Status, 422) // a cursor no page gave is refused
}

func TestEndpoints_RotatedSecretKeepsVerifying(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	old := newReceiver(t)
	e := mustEndpoint(t, srv, old, "message.sent")
	var rotated struct {
		Secret string `json:"secret"`
	}
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/secret/rotate", "", 200).Decode(t, &rotated)
	is.True(strings.HasPrefix(rotated.Secret, "whsec_")) // a new secret
	is.True(rotated.Secret != e.Secret)                  // not the old one
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/test", `{"eventType":"message.sent"}`, 202)
	got := old.wait(1)
	is.True(got[0].Verified) // a receiver still on the old secret verifies for the next 24 hours
	old.mu.Lock()
	old.secret, old.got = []string{rotated.Secret}, nil
	old.mu.Unlock()
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/webhooks/endpoints/"+e.ID+"/test", `{"eventType":"message.sent"}`, 202)
	got = old.wait(1)
	is.True(got[0].Verified) // and one on the new secret too
	res := srv.Dev.Do(t, "POST", "/v2/webhooks/endpoints/000000000000000000000000/secret/rotate", "")
	is.Equal(res.Status, 404) // an unknown endpoint
}

func TestEventTypes_Catalogue(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	var c struct {
		Data []struct {
			Type   string `json:"type"`
			Object string `json:"object"`
		} `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/webhooks/event-types", "", 200).Decode(t, &c)
	types := map[string]string{}
	for _, e := range c.Data {
		types[e.Type] = e.Object
	}
	for _, want := range []string{"message.sent", "message.delivered", "message.failed", "message.read", "message.unread",
		"message.seen", "message.archived", "message.unarchived", "message.snoozed", "message.unsnoozed", "message.bounced",
		"message.opened", "message.clicked", "message.complained", "workflow.created", "workflow.updated", "workflow.deleted",
		"preference.updated"} {
		_, ok := types[want]
		is.True(ok) // every event Herald raises is listed
	}
	is.Equal(types["preference.updated"], "preference") // with its object
}

package subscribers_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// channelJSON is an entry (docs/api.md, "Channel credentials") as a client
// decodes it.
type channelJSON struct {
	ProviderID            string         `json:"providerId"`
	IntegrationIdentifier string         `json:"integrationIdentifier"`
	IntegrationID         *string        `json:"_integrationId"`
	Credentials           map[string]any `json:"credentials"`
}

// subscriberJSON is a subscriber (docs/api.md, "Subscribers") as a client
// decodes it; the pointer fields tell a missing key from a null or a value.
type subscriberJSON struct {
	ID             string          `json:"_id"`
	SubscriberID   string          `json:"subscriberId"`
	FirstName      *string         `json:"firstName"`
	LastName       *string         `json:"lastName"`
	Email          *string         `json:"email"`
	Phone          *string         `json:"phone"`
	Avatar         *string         `json:"avatar"`
	Locale         *string         `json:"locale"`
	Timezone       *string         `json:"timezone"`
	Data           json.RawMessage `json:"data"`
	Channels       []channelJSON   `json:"channels"`
	Version        *int            `json:"__v"`
	OrganizationID string          `json:"_organizationId"`
	EnvironmentID  string          `json:"_environmentId"`
	Deleted        *bool           `json:"deleted"`
	CreatedAt      string          `json:"createdAt"`
	UpdatedAt      string          `json:"updatedAt"`
}

// errorJSON is an error body (docs/api.md, "Errors").
type errorJSON struct {
	StatusCode int                        `json:"statusCode"`
	Message    string                     `json:"message"`
	Errors     map[string]json.RawMessage `json:"errors"`
}

// fakeResolver answers ResolveIntegrationID from a map keyed "provider/identifier".
type fakeResolver map[string]string

func (f fakeResolver) ResolveIntegrationID(_ context.Context, _, providerID, identifier string) (string, error) {
	return f[providerID+"/"+identifier], nil
}

func newServer(t testing.TB, resolver subscribers.IntegrationResolver) (*platformtest.Server, *subscribers.Store) {
	t.Helper()
	var store *subscribers.Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		store = subscribers.NewStore(app.DB, resolver, app.Clock.Now).WithSecret(app.Secret)
		subscribers.AddRoutes(mux, store)
	})
	return srv, store
}

func mustDo(t *testing.T, c platformtest.Client, method, path, body string, want int, v any) {
	t.Helper()
	res := c.Do(t, method, path, body)
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, want, res.Body)
	}
	if v != nil {
		res.Decode(t, v)
	}
}

func mustCreateSubscriber(t *testing.T, c platformtest.Client, body string) subscriberJSON {
	t.Helper()
	var s subscriberJSON
	mustDo(t, c, "POST", "/v1/subscribers", body, 201, &s)
	return s
}

const fullSubscriber = `{"subscriberId":"ada","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",
	"phone":"+44 20 7946 0000","avatar":"https://example.com/ada.png","locale":"en-GB","timezone":"Europe/London",
	"data":{"plan":"pro","n":3,"tags":["a","b"]},
	"channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.slack.com/x"}},
	            {"providerId":"fcm","integrationIdentifier":"fcm-main","credentials":{"deviceTokens":["t1","t2","t1"]}}]}`

func TestSubscriber_Create(t *testing.T) {
	t.Run("OK every field round-trips", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		created := mustCreateSubscriber(t, srv.Dev, fullSubscriber)
		for _, path := range []string{"/v1/subscribers/ada", "/v2/subscribers/ada"} {
			var s subscriberJSON
			mustDo(t, srv.Dev, "GET", path, "", 200, &s)
			is.Equal(s.ID, created.ID)                                                     // same subscriber
			is.True(sqldb.IsID(s.ID))                                                      // _id is a database id
			is.True(s.ID != "ada")                                                         // _id is not the subscriberId
			is.Equal(s.SubscriberID, "ada")                                                // subscriberId
			is.Equal(*s.FirstName, "Ada")                                                  // firstName
			is.Equal(*s.LastName, "Lovelace")                                              // lastName
			is.Equal(*s.Email, "ada@example.com")                                          // email
			is.Equal(*s.Phone, "+44 20 7946 0000")                                         // phone
			is.Equal(*s.Avatar, "https://example.com/ada.png")                             // avatar
			is.Equal(*s.Locale, "en-GB")                                                   // locale
			is.Equal(*s.Timezone, "Europe/London")                                         // timezone
			is.Equal(string(s.Data), `{"plan":"pro","n":3,"tags":["a","b"]}`)              // data kept verbatim
			is.Equal(len(s.Channels), 2)                                                   // both channels
			is.Equal(s.Channels[0].ProviderID, "slack")                                    // first channel provider
			is.Equal(s.Channels[0].Credentials["webhookUrl"], "https://hooks.slack.com/x") // webhookUrl
			is.Equal(*s.Channels[0].IntegrationID, "")                                     // no integrations known: empty _integrationId, present
			is.Equal(s.Channels[1].IntegrationIdentifier, "fcm-main")                      // integrationIdentifier kept
			is.Equal(s.Channels[1].Credentials["deviceTokens"], []any{"t1", "t2"})         // tokens de-duplicated, order kept
			is.Equal(*s.Version, 0)                                                        // __v starts at 0
			is.Equal(*s.Deleted, false)                                                    // deleted flag present
			is.Equal(s.OrganizationID, srv.App.Development.OrganizationID)                 // _organizationId
			is.Equal(s.EnvironmentID, srv.App.Development.ID)                              // _environmentId
			is.Equal(s.CreatedAt, s.UpdatedAt)                                             // fresh row
			is.Equal(len(s.CreatedAt), len("2026-11-21T10:04:05.123Z"))                    // timestamp (docs/api.md, "Identifiers and timestamps")
		}
	})

	t.Run("OK minimal subscriber has every key", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		res := srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"bob"}`)
		is.Equal(res.Status, 201) // created
		var raw map[string]json.RawMessage
		res.Decode(t, &raw)
		for _, k := range []string{"_id", "firstName", "lastName", "email", "phone", "avatar", "locale", "channels",
			"topics", "isOnline", "lastOnlineAt", "__v", "data", "timezone", "subscriberId", "_organizationId",
			"_environmentId", "deleted", "createdAt", "updatedAt"} {
			_, ok := raw[k]
			is.True(ok) // every key (docs/api.md, "Subscribers") is present
		}
		is.Equal(string(raw["firstName"]), "null") // unset field is null
		is.Equal(string(raw["channels"]), "[]")    // channels is an empty array
	})

	t.Run("OK upsert keeps _id and createdAt and bumps __v", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		first := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","firstName":"Ada","email":"a@x.io"}`)
		srv.App.Clock.Advance(2000_000_000)
		second := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","lastName":"Byron"}`)
		is.Equal(second.ID, first.ID)               // same _id
		is.Equal(second.CreatedAt, first.CreatedAt) // createdAt kept
		is.True(second.UpdatedAt > first.UpdatedAt) // updatedAt moves
		is.Equal(*second.Version, 1)                // __v incremented
		is.Equal(*second.FirstName, "Ada")          // unsent field kept
		is.Equal(*second.LastName, "Byron")         // sent field updated
		third := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","email":null}`)
		is.Equal(*third.Version, 2) // __v incremented again
		is.Equal(third.Email, nil)  // null clears
	})

	t.Run("OK upsert that changes nothing writes nothing", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		body := `{"subscriberId":"ada","firstName":"Ada","data":{"plan":"pro"},
			"channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example/a"}}]}`
		first := mustCreateSubscriber(t, srv.Dev, body)
		srv.App.Clock.Advance(2000_000_000)
		same := mustCreateSubscriber(t, srv.Dev, body)
		is.Equal(*same.Version, 0)                // __v not bumped
		is.Equal(same.UpdatedAt, first.UpdatedAt) // updatedAt kept
		is.Equal(len(same.Channels), 1)           // the answer is the whole subscriber
		is.Equal(*same.FirstName, "Ada")          // as stored
		spaced := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","data":{ "plan" : "pro" }}`)
		is.Equal(*spaced.Version, 0) // the same data, spelled differently, is no change
		var put subscriberJSON
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/ada", `{"firstName":"Ada"}`, 200, &put)
		is.Equal(*put.Version, 0) // an update to the same value is no change either
		changed := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","firstName":"Ada",
			"channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example/b"}}]}`)
		is.Equal(*changed.Version, 1)                // a changed credential is written
		is.True(changed.UpdatedAt > first.UpdatedAt) // and moves updatedAt
		cleared := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","firstName":null}`)
		is.Equal(*cleared.Version, 2) // null over a value is a change
		is.Equal(cleared.FirstName, nil)
	})

	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"ErrMissingSubscriberId", `{"firstName":"x"}`, 422, "subscriberId"},
		{"ErrEmptySubscriberId", `{"subscriberId":""}`, 422, "subscriberId"},
		{"ErrBadEmail", `{"subscriberId":"a","email":"not an email"}`, 422, "email"},
		{"ErrLongPhone", `{"subscriberId":"a","phone":"` + strings.Repeat("1", 51) + `"}`, 422, "phone"},
		{"ErrDataNotObject", `{"subscriberId":"a","data":[1]}`, 422, "data"},
		{"ErrWrongType", `{"subscriberId":"a","firstName":5}`, 422, "firstName"},
		{"ErrUnknownProvider", `{"subscriberId":"a","channels":[{"providerId":"pigeon","credentials":{}}]}`, 422, "channels.0.providerId"},
		{"ErrMalformedJSON", `{"subscriberId":`, 400, ""},
		{"ErrNotObject", `[1]`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			res := srv.Dev.Do(t, "POST", "/v1/subscribers", tc.body)
			is.Equal(res.Status, tc.status) // rejected with the right status
			var e errorJSON
			res.Decode(t, &e)
			is.Equal(e.StatusCode, tc.status) // body (docs/api.md, "Errors")
			if tc.field != "" {
				_, ok := e.Errors[tc.field]
				is.True(ok) // the error is keyed by the field's JSON path
			}
			is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/a", "").Status, 404) // nothing was written
		})
	}
}

func TestSubscriber_CreateV2(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	var s subscriberJSON
	mustDo(t, srv.Dev, "POST", "/v2/subscribers?failIfExists=true", `{"subscriberId":"ada","timezone":"UTC"}`, 201, &s)
	is.Equal(*s.Timezone, "UTC") // created through v2
	res := srv.Dev.Do(t, "POST", "/v2/subscribers?failIfExists=true", `{"subscriberId":"ada"}`)
	is.Equal(res.Status, 409) // failIfExists on an existing subscriber
	mustDo(t, srv.Dev, "POST", "/v2/subscribers", `{"subscriberId":"ada","firstName":"A"}`, 201, &s)
	is.Equal(*s.FirstName, "A")                                                                               // without failIfExists it updates
	is.Equal(srv.Dev.Do(t, "POST", "/v2/subscribers?failIfExists=maybe", `{"subscriberId":"b"}`).Status, 400) // unparsable flag
}

func TestSubscriber_Update(t *testing.T) {
	for _, tc := range []struct{ method, path string }{
		{"PUT", "/v1/subscribers/ada"},
		{"PATCH", "/v2/subscribers/ada"},
	} {
		t.Run("OK "+tc.method, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			created := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","firstName":"Ada","phone":"123","data":{"a":1}}`)
			var s subscriberJSON
			mustDo(t, srv.Dev, tc.method, tc.path, `{"lastName":"King","phone":null,"data":{"b":2}}`, 200, &s)
			is.Equal(s.ID, created.ID)          // same subscriber
			is.Equal(*s.FirstName, "Ada")       // unsent field kept
			is.Equal(*s.LastName, "King")       // sent field set
			is.Equal(s.Phone, nil)              // null clears
			is.Equal(string(s.Data), `{"b":2}`) // data replaced
			is.Equal(*s.Version, 1)             // __v incremented
		})
		t.Run("ErrNotFound "+tc.method, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			res := srv.Dev.Do(t, tc.method, tc.path, `{"firstName":"x"}`)
			is.Equal(res.Status, 404) // unknown subscriber
		})
		t.Run("ErrBadEmail "+tc.method, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
			is.Equal(srv.Dev.Do(t, tc.method, tc.path, `{"email":"@"}`).Status, 422) // invalid email
		})
	}
}

func TestSubscriber_Delete(t *testing.T) {
	for _, version := range []string{"v1", "v2"} {
		t.Run("OK "+version, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			first := mustCreateSubscriber(t, srv.Dev, fullSubscriber)
			var body map[string]any
			mustDo(t, srv.Dev, "DELETE", "/"+version+"/subscribers/ada", "", 200, &body)
			is.Equal(body, map[string]any{"acknowledged": true, "status": "deleted"})         // reference body
			is.Equal(srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "").Status, 404)             // gone
			is.Equal(srv.Dev.Do(t, "DELETE", "/"+version+"/subscribers/ada", "").Status, 404) // second delete
			again := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
			is.True(again.ID != first.ID)    // a new subscriber
			is.Equal(len(again.Channels), 0) // credentials were deleted with it
			is.Equal(again.FirstName, nil)   // nothing left over
		})
	}
}

func TestSubscriber_Environments(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	dev := mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","firstName":"Dev"}`)
	is.Equal(srv.Prod.Do(t, "GET", "/v1/subscribers/ada", "").Status, 404)    // invisible to Production
	is.Equal(srv.Prod.Do(t, "PUT", "/v1/subscribers/ada", `{}`).Status, 404)  // cannot be updated from Production
	is.Equal(srv.Prod.Do(t, "DELETE", "/v1/subscribers/ada", "").Status, 404) // cannot be deleted from Production
	is.Equal(srv.Prod.Do(t, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"slack","credentials":{}}`).Status, 404) // nor its credentials
	var list struct {
		Data       []subscriberJSON `json:"data"`
		TotalCount int              `json:"totalCount"`
	}
	mustDo(t, srv.Prod, "GET", "/v2/subscribers?subscriberId=ada", "", 200, &list)
	is.Equal(len(list.Data), 0)  // not found by search
	is.Equal(list.TotalCount, 0) // not counted
	prod := mustCreateSubscriber(t, srv.Prod, `{"subscriberId":"ada","firstName":"Prod"}`)
	is.True(prod.ID != dev.ID) // the same subscriberId is a different subscriber per environment
	var s subscriberJSON
	mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
	is.Equal(*s.FirstName, "Dev")                                                     // Development's untouched
	is.Equal(srv.Dev.WithKey("").Do(t, "GET", "/v1/subscribers/ada", "").Status, 401) // no key
}

func asError(err error, target **platform.Error) bool { return errors.As(err, target) }

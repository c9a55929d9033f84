package subscribers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
)

// newConformanceServer wires subscribers to the real integrations store, as
// wire.go does, so channel entries carry real _integrationIds.
func newConformanceServer(t *testing.T) *platformtest.Server {
	t.Helper()
	return platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		ints, err := integrations.NewStore(app.DB, app.Secret)
		if err != nil {
			t.Fatalf("integrations store: %v", err)
		}
		integrations.AddRoutes(mux, ints)
		subscribers.AddRoutes(mux, subscribers.NewStore(app.DB, ints, app.Clock.Now))
	})
}

var (
	chatPushProviders = []string{"slack", "discord", "msteams", "mattermost", "ryver", "zulip", "grafana-on-call",
		"getstream", "rocket-chat", "whatsapp-business", "chat-webhook", "service-slack", "fcm", "apns", "expo",
		"one-signal", "pushpad", "push-webhook", "pusher-beams", "appio"}
	// the search and messages-list variant (spec §2.3 note)
	listedProviders = slices.DeleteFunc(slices.Clone(chatPushProviders), func(p string) bool { return p == "service-slack" || p == "appio" })
)

// subscriberFields is spec §2.1.
var subscriberFields = []field{
	{name: "_id", kind: "id"},
	{name: "firstName", kind: "string", nullable: true},
	{name: "lastName", kind: "string", nullable: true},
	{name: "email", kind: "string", nullable: true},
	{name: "phone", kind: "string", nullable: true},
	{name: "avatar", kind: "string", nullable: true},
	{name: "locale", kind: "string", nullable: true},
	{name: "channels", kind: "array"},
	{name: "topics", kind: "array"},
	{name: "isOnline", kind: "bool", nullable: true},
	{name: "lastOnlineAt", kind: "time", nullable: true},
	{name: "__v", kind: "number"},
	{name: "data", kind: "object", nullable: true},
	{name: "timezone", kind: "string", nullable: true},
	{name: "subscriberId", kind: "string", required: true},
	{name: "_organizationId", kind: "id", required: true},
	{name: "_environmentId", kind: "id", required: true},
	{name: "deleted", kind: "bool", required: true},
	{name: "createdAt", kind: "time", required: true},
	{name: "updatedAt", kind: "time", required: true},
}

// conformSubscriber checks a spec §2.1 subscriber and its channels against
// the providerId enumeration in force for the response.
func conformSubscriber(t *testing.T, where string, v any, providers []string) map[string]any {
	t.Helper()
	sub := conform(t, where, v, subscriberFields)
	for i, c := range items(t, where+".channels", sub["channels"]) {
		at := where + ".channels." + string(rune('0'+i))
		ch := conform(t, at, c, []field{
			{name: "providerId", kind: "string", required: true, enum: providers},
			{name: "integrationIdentifier", kind: "string"},
			{name: "credentials", kind: "object", required: true},
			{name: "_integrationId", kind: "string", required: true},
		})
		conform(t, at+".credentials", ch["credentials"], []field{
			{name: "webhookUrl", kind: "string"}, {name: "channel", kind: "string"},
			{name: "deviceTokens", kind: "array"}, {name: "alertUid", kind: "string"},
			{name: "title", kind: "string"}, {name: "imageUrl", kind: "string"},
			{name: "state", kind: "string"}, {name: "externalUrl", kind: "string"},
		})
	}
	for _, topic := range items(t, where+".topics", sub["topics"]) {
		if _, ok := topic.(string); !ok {
			t.Errorf("%s.topics: want strings, got %v", where, topic)
		}
	}
	return sub
}

func TestConformance_SubscriberResponses(t *testing.T) {
	is := is.New(t)
	srv := newConformanceServer(t)
	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","active":true,"credentials":{"webhookUrl":"https://hooks.example.com/i"}}`)
	is.Equal(res.Status, 201) // slack integration created

	res = srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com",
		"data":{"plan":"pro"},"channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example.com/a"}}]}`)
	is.Equal(res.Status, 201) // POST /v1/subscribers creates: 201
	sub := conformSubscriber(t, "POST /v1/subscribers", decode(t, res), chatPushProviders)
	is.Equal(sub["subscriberId"], "ada") // the created subscriber

	res = srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"bare"}`)
	is.Equal(res.Status, 201) // a subscriber with nothing but its id
	conformSubscriber(t, "POST /v1/subscribers (bare)", decode(t, res), chatPushProviders)

	res = srv.Dev.Do(t, "POST", "/v2/subscribers", `{"subscriberId":"bea","timezone":"Europe/Paris","lastName":null}`)
	is.Equal(res.Status, 201) // POST /v2/subscribers creates: 201
	conformSubscriber(t, "POST /v2/subscribers", decode(t, res), chatPushProviders)

	for _, path := range []string{"/v1/subscribers/ada", "/v2/subscribers/ada"} {
		res = srv.Dev.Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // read
		conformSubscriber(t, "GET "+path, decode(t, res), chatPushProviders)
	}
	res = srv.Dev.Do(t, "PUT", "/v1/subscribers/ada", `{"lastName":"Lovelace","data":null}`)
	is.Equal(res.Status, 200) // update: 200
	conformSubscriber(t, "PUT /v1/subscribers/ada", decode(t, res), chatPushProviders)
	res = srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada", `{"locale":"en-GB"}`)
	is.Equal(res.Status, 200) // update: 200
	conformSubscriber(t, "PATCH /v2/subscribers/ada", decode(t, res), chatPushProviders)

	for _, body := range []string{
		`{"providerId":"appio","credentials":{"deviceTokens":["t1","t1","t2"]}}`,
		`{"providerId":"service-slack","credentials":{"webhookUrl":"https://hooks.example.com/s"}}`,
		`{"providerId":"fcm","credentials":{"deviceTokens":[]}}`,
		`{"providerId":"slack","integrationIdentifier":"nope","credentials":{"webhookUrl":"https://hooks.example.com/b"}}`,
	} {
		res = srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials", body)
		is.Equal(res.Status, 200) // credentials upserted: 200
		conformSubscriber(t, "PATCH credentials "+body, decode(t, res), chatPushProviders)
	}
	res = srv.Dev.Do(t, "PUT", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":["x"]}}`)
	is.Equal(res.Status, 200) // credentials replaced: 200
	conformSubscriber(t, "PUT credentials", decode(t, res), chatPushProviders)

	res = srv.Dev.Do(t, "GET", "/v2/subscribers?limit=2", "")
	is.Equal(res.Status, 200) // search
	page := conform(t, "GET /v2/subscribers", decode(t, res), []field{
		{name: "data", kind: "array", required: true},
		{name: "next", kind: "string", required: true, nullable: true},
		{name: "previous", kind: "string", required: true, nullable: true},
		{name: "totalCount", kind: "number", required: true},
		{name: "totalCountCapped", kind: "bool", required: true},
	})
	is.Equal(page["previous"], nil) // the first page has no previous
	is.True(page["next"] != nil)    // three subscribers, two per page
	res = srv.Dev.Do(t, "GET", "/v2/subscribers?subscriberId=ada", "")
	is.Equal(res.Status, 200) // search by subscriberId
	page = conform(t, "GET /v2/subscribers?subscriberId=ada", decode(t, res), []field{{name: "data", kind: "array", required: true}})
	found := items(t, "data", page["data"])
	is.Equal(len(found), 1) // ada
	ada := conformSubscriber(t, "search data.0", found[0], listedProviders)
	is.Equal(len(items(t, "channels", ada["channels"])), 3) // two slack entries and fcm; appio and service-slack are hidden in search

	res = srv.Dev.Do(t, "GET", "/v2/subscribers?email=nobody", "")
	is.Equal(res.Status, 200) // an empty search
	page = conform(t, "empty search", decode(t, res), []field{{name: "data", kind: "array", required: true}})
	is.Equal(len(items(t, "data", page["data"])), 0) // data is [], not null

	res = srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada/credentials/fcm", "")
	is.Equal(res.Status, 204)  // deleting credentials: 204
	is.Equal(len(res.Body), 0) // with no body

	res = srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada", "")
	is.Equal(res.Status, 200) // deleting a subscriber: 200
	conform(t, "DELETE /v1/subscribers/ada", decode(t, res), []field{
		{name: "acknowledged", kind: "bool", required: true},
		{name: "status", kind: "string", required: true, enum: []string{"deleted"}},
	})
}

// errorFields is contract §4's error body.
var errorFields = []field{
	{name: "statusCode", kind: "number", required: true},
	{name: "timestamp", kind: "time", required: true},
	{name: "path", kind: "string", required: true},
	{name: "message", kind: "string", required: true},
}

func TestConformance_SubscriberBadInput(t *testing.T) {
	srv := newConformanceServer(t)
	if res := srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada"}`); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"Err huge number as subscriberId", "POST", "/v1/subscribers", `{"subscriberId":1e400}`, 422},
		{"Err number as subscriberId", "POST", "/v1/subscribers", `{"subscriberId":12345678901234567890}`, 422},
		{"Err null body", "POST", "/v1/subscribers", `null`, 422},
		{"Err array body", "POST", "/v1/subscribers", `[]`, 400},
		{"Err nested nulls in channels", "POST", "/v1/subscribers", `{"subscriberId":"x","channels":[null]}`, 422},
		{"Err null credentials", "POST", "/v1/subscribers", `{"subscriberId":"x","channels":[{"providerId":"slack","credentials":null}]}`, 422},
		{"Err data as an array", "POST", "/v1/subscribers", `{"subscriberId":"x","data":[1]}`, 422},
		{"Err data as a string", "POST", "/v1/subscribers", `{"subscriberId":"x","data":"s"}`, 422},
		{"Err long unicode name", "POST", "/v1/subscribers", `{"subscriberId":"x","firstName":"` + long + `"}`, 422},
		{"Err blank subscriberId", "POST", "/v2/subscribers", `{"subscriberId":"  "}`, 422},
		{"Err unknown provider", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"sendgrid","credentials":{}}`, 422},
		{"Err deviceTokens of numbers", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":[1,2]}}`, 422},
		{"Err deviceTokens holding null", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":[null]}}`, 422},
		{"Err credentials as an array", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":[]}`, 422},
		{"Err unknown subscriber credentials", "PATCH", "/v1/subscribers/nobody/credentials", `{"providerId":"fcm","credentials":{}}`, 404},
		{"Err unknown provider in delete path", "DELETE", "/v1/subscribers/ada/credentials/%00", "", 422},
		{"Err unknown subscriber", "GET", "/v1/subscribers/%F0%9F%98%80", "", 404},
		{"Err unknown subscriber update", "PUT", "/v1/subscribers/nobody", `{"firstName":"x"}`, 404},
		{"OK search NUL and unicode", "GET", "/v2/subscribers?name=%00%F0%9F%98%80&email=%C3%A9", "", 200},
		{"Err limit zero", "GET", "/v2/subscribers?limit=0", "", 422},
		{"Err limit huge", "GET", "/v2/subscribers?limit=99999999999999999999999", "", 400},
		{"Err forged cursor", "GET", "/v2/subscribers?after=abc", "", 422},
		{"Err both cursors", "GET", "/v2/subscribers?after=abc&before=abc", "", 422},
		{"Err orderBy unknown", "GET", "/v2/subscribers?orderBy=email", "", 422},
		{"Err failIfExists not a bool", "POST", "/v2/subscribers?failIfExists=maybe", `{"subscriberId":"x"}`, 400},
		{"Err exists with failIfExists", "POST", "/v2/subscribers?failIfExists=true", `{"subscriberId":"ada"}`, 409},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.want) // a clear 4xx
			if res.Status == 200 {
				return
			}
			body := conform(t, tc.name, decode(t, res), errorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (contract §9)
			}
		})
	}
}

// field is one property of a response object as the spec types it.
type field struct {
	name     string
	kind     string // string, id, time, bool, number, object, array, any
	required bool
	nullable bool
	enum     []string
}

var timeFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// conform checks obj against fields as a client validating the spec's schema
// would: required keys present, types and nulls as allowed, enums exact,
// timestamps in contract §3's format, ids 24 lowercase hex.
func conform(t *testing.T, where string, obj any, fields []field) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T %v", where, obj, obj)
	}
	for _, f := range fields {
		v, present := m[f.name]
		at := where + "." + f.name
		if !present {
			if f.required {
				t.Errorf("%s: required, missing", at)
			}
			continue
		}
		if v == nil {
			if !f.nullable {
				t.Errorf("%s: null, spec allows no null", at)
			}
			continue
		}
		bad := false
		switch f.kind {
		case "string":
			_, ok := v.(string)
			bad = !ok
		case "id":
			s, ok := v.(string)
			bad = !ok || !isID(s)
		case "time":
			s, ok := v.(string)
			bad = !ok || !timeFormat.MatchString(s)
		case "bool":
			_, ok := v.(bool)
			bad = !ok
		case "number":
			_, ok := v.(float64)
			bad = !ok
		case "object":
			_, ok := v.(map[string]any)
			bad = !ok
		case "array":
			_, ok := v.([]any)
			bad = !ok
		}
		if bad {
			t.Errorf("%s: want %s, got %T %v", at, f.kind, v, v)
			continue
		}
		if f.enum != nil {
			if s, _ := v.(string); !slices.Contains(f.enum, s) {
				t.Errorf("%s: %v is not one of %v", at, v, f.enum)
			}
		}
	}
	return m
}

func isID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decode unmarshals a response body into generic JSON.
func decode(t *testing.T, res *platformtest.Response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatalf("body %s: %v", res.Body, err)
	}
	return v
}

// items returns v as an array, failing when it is not one (null included).
func items(t *testing.T, where string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T %v", where, v, v)
	}
	return a
}

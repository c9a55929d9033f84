package subscribers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

var (
	chatPushProviders = []string{"slack", "discord", "msteams", "mattermost", "ryver", "zulip", "grafana-on-call",
		"getstream", "rocket-chat", "whatsapp-business", "chat-webhook", "service-slack", "fcm", "apns", "expo",
		"one-signal", "pushpad", "push-webhook", "pusher-beams", "appio", "web-push"}
	// the search and messages-list variant (docs/api.md, "Channel credentials")
	listedProviders = slices.DeleteFunc(slices.Clone(chatPushProviders), func(p string) bool { return p == "service-slack" || p == "appio" })
)

// subscriberFields follows docs/api.md, "Subscribers".
var subscriberFields = []platformtest.Field{
	{Name: "_id", Kind: "id"},
	{Name: "firstName", Kind: "string", Nullable: true},
	{Name: "lastName", Kind: "string", Nullable: true},
	{Name: "email", Kind: "string", Nullable: true},
	{Name: "phone", Kind: "string", Nullable: true},
	{Name: "avatar", Kind: "string", Nullable: true},
	{Name: "locale", Kind: "string", Nullable: true},
	{Name: "channels", Kind: "array"},
	{Name: "topics", Kind: "array"},
	{Name: "isOnline", Kind: "bool", Nullable: true},
	{Name: "lastOnlineAt", Kind: "time", Nullable: true},
	{Name: "__v", Kind: "number"},
	{Name: "data", Kind: "object", Nullable: true},
	{Name: "timezone", Kind: "string", Nullable: true},
	{Name: "subscriberId", Kind: "string", Required: true},
	{Name: "_organizationId", Kind: "id", Required: true},
	{Name: "_environmentId", Kind: "id", Required: true},
	{Name: "deleted", Kind: "bool", Required: true},
	{Name: "createdAt", Kind: "time", Required: true},
	{Name: "updatedAt", Kind: "time", Required: true},
}

// conformSubscriber checks a subscriber (docs/api.md, "Subscribers") and its
// channels against the providerId enumeration in force for the response.
func conformSubscriber(t *testing.T, where string, v any, providers []string) map[string]any {
	t.Helper()
	sub := platformtest.Conform(t, where, v, subscriberFields)
	for i, c := range platformtest.Items(t, where+".channels", sub["channels"]) {
		at := where + ".channels." + string(rune('0'+i))
		ch := platformtest.Conform(t, at, c, []platformtest.Field{
			{Name: "providerId", Kind: "string", Required: true, Enum: providers},
			{Name: "integrationIdentifier", Kind: "string"},
			{Name: "credentials", Kind: "object", Required: true},
			{Name: "_integrationId", Kind: "string", Required: true},
		})
		platformtest.Conform(t, at+".credentials", ch["credentials"], []platformtest.Field{
			{Name: "webhookUrl", Kind: "string"}, {Name: "channel", Kind: "string"},
			{Name: "deviceTokens", Kind: "array"}, {Name: "alertUid", Kind: "string"},
			{Name: "title", Kind: "string"}, {Name: "imageUrl", Kind: "string"},
			{Name: "state", Kind: "string"}, {Name: "externalUrl", Kind: "string"},
		})
	}
	for _, topic := range platformtest.Items(t, where+".topics", sub["topics"]) {
		if _, ok := topic.(string); !ok {
			t.Errorf("%s.topics: want strings, got %v", where, topic)
		}
	}
	return sub
}

func TestConformance_SubscriberResponses(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","active":true,"credentials":{"webhookUrl":"https://hooks.example.com/i"}}`)
	is.Equal(res.Status, 201) // slack integration created

	res = srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com",
		"data":{"plan":"pro"},"channels":[{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example.com/a"}}]}`)
	is.Equal(res.Status, 201) // POST /v1/subscribers creates: 201
	sub := conformSubscriber(t, "POST /v1/subscribers", platformtest.DecodeAny(t, res), chatPushProviders)
	is.Equal(sub["subscriberId"], "ada") // the created subscriber

	res = srv.Dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"bare"}`)
	is.Equal(res.Status, 201) // a subscriber with nothing but its id
	conformSubscriber(t, "POST /v1/subscribers (bare)", platformtest.DecodeAny(t, res), chatPushProviders)

	res = srv.Dev.Do(t, "POST", "/v2/subscribers", `{"subscriberId":"bea","timezone":"Europe/Paris","lastName":null}`)
	is.Equal(res.Status, 201) // POST /v2/subscribers creates: 201
	conformSubscriber(t, "POST /v2/subscribers", platformtest.DecodeAny(t, res), chatPushProviders)

	for _, path := range []string{"/v1/subscribers/ada", "/v2/subscribers/ada"} {
		res = srv.Dev.Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // read
		conformSubscriber(t, "GET "+path, platformtest.DecodeAny(t, res), chatPushProviders)
	}
	res = srv.Dev.Do(t, "PUT", "/v1/subscribers/ada", `{"lastName":"Lovelace","data":null}`)
	is.Equal(res.Status, 200) // update: 200
	conformSubscriber(t, "PUT /v1/subscribers/ada", platformtest.DecodeAny(t, res), chatPushProviders)
	res = srv.Dev.Do(t, "PATCH", "/v2/subscribers/ada", `{"locale":"en-GB"}`)
	is.Equal(res.Status, 200) // update: 200
	conformSubscriber(t, "PATCH /v2/subscribers/ada", platformtest.DecodeAny(t, res), chatPushProviders)

	for _, body := range []string{
		`{"providerId":"appio","credentials":{"deviceTokens":["t1","t1","t2"]}}`,
		`{"providerId":"service-slack","credentials":{"webhookUrl":"https://hooks.example.com/s"}}`,
		`{"providerId":"fcm","credentials":{"deviceTokens":[]}}`,
		`{"providerId":"slack","integrationIdentifier":"nope","credentials":{"webhookUrl":"https://hooks.example.com/b"}}`,
	} {
		res = srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials", body)
		is.Equal(res.Status, 200) // credentials upserted: 200
		conformSubscriber(t, "PATCH credentials "+body, platformtest.DecodeAny(t, res), chatPushProviders)
	}
	res = srv.Dev.Do(t, "PUT", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":["x"]}}`)
	is.Equal(res.Status, 200) // credentials replaced: 200
	conformSubscriber(t, "PUT credentials", platformtest.DecodeAny(t, res), chatPushProviders)

	res = srv.Dev.Do(t, "GET", "/v2/subscribers?limit=2", "")
	is.Equal(res.Status, 200) // search
	page := platformtest.Conform(t, "GET /v2/subscribers", platformtest.DecodeAny(t, res), []platformtest.Field{
		{Name: "data", Kind: "array", Required: true},
		{Name: "next", Kind: "string", Required: true, Nullable: true},
		{Name: "previous", Kind: "string", Required: true, Nullable: true},
		{Name: "totalCount", Kind: "number", Required: true},
		{Name: "totalCountCapped", Kind: "bool", Required: true},
	})
	is.Equal(page["previous"], nil) // the first page has no previous
	is.True(page["next"] != nil)    // three subscribers, two per page
	res = srv.Dev.Do(t, "GET", "/v2/subscribers?subscriberId=ada", "")
	is.Equal(res.Status, 200) // search by subscriberId
	page = platformtest.Conform(t, "GET /v2/subscribers?subscriberId=ada", platformtest.DecodeAny(t, res), []platformtest.Field{{Name: "data", Kind: "array", Required: true}})
	found := platformtest.Items(t, "data", page["data"])
	is.Equal(len(found), 1) // ada
	ada := conformSubscriber(t, "search data.0", found[0], listedProviders)
	is.Equal(len(platformtest.Items(t, "channels", ada["channels"])), 3) // two slack entries and fcm; appio and service-slack are hidden in search

	res = srv.Dev.Do(t, "GET", "/v2/subscribers?email=nobody", "")
	is.Equal(res.Status, 200) // an empty search
	page = platformtest.Conform(t, "empty search", platformtest.DecodeAny(t, res), []platformtest.Field{{Name: "data", Kind: "array", Required: true}})
	is.Equal(len(platformtest.Items(t, "data", page["data"])), 0) // data is [], not null

	res = srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada/credentials/fcm", "")
	is.Equal(res.Status, 204)  // deleting credentials: 204
	is.Equal(len(res.Body), 0) // with no body

	res = srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada", "")
	is.Equal(res.Status, 200) // deleting a subscriber: 200
	platformtest.Conform(t, "DELETE /v1/subscribers/ada", platformtest.DecodeAny(t, res), []platformtest.Field{
		{Name: "acknowledged", Kind: "bool", Required: true},
		{Name: "status", Kind: "string", Required: true, Enum: []string{"deleted"}},
	})
}

// platformtest.ErrorFields is the error body (docs/api.md, "Errors").
func TestConformance_SubscriberBadInput(t *testing.T) {
	srv := apptest.NewServer(t)
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
		{"Err unknown provider in delete path", "DELETE", "/v1/subscribers/ada/credentials/fax", "", 422},
		{"Err NUL in a path", "DELETE", "/v1/subscribers/ada/credentials/%00", "", 400},
		{"Err unknown subscriber", "GET", "/v1/subscribers/%F0%9F%98%80", "", 404},
		{"Err unknown subscriber update", "PUT", "/v1/subscribers/nobody", `{"firstName":"x"}`, 404},
		{"OK search unicode", "GET", "/v2/subscribers?name=%F0%9F%98%80&email=%C3%A9", "", 200},
		{"Err search NUL", "GET", "/v2/subscribers?name=%00%F0%9F%98%80", "", 400},
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
			body := platformtest.Conform(t, tc.name, platformtest.DecodeAny(t, res), platformtest.ErrorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (docs/api.md, "What strict clients check")
			}
		})
	}
}

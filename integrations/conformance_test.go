package integrations_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// integrationFields follows docs/api.md, "Integrations".
var integrationFields = []platformtest.Field{
	{Name: "_id", Kind: "id"},
	{Name: "_environmentId", Kind: "id", Required: true},
	{Name: "_organizationId", Kind: "id", Required: true},
	{Name: "name", Kind: "string", Required: true},
	{Name: "identifier", Kind: "string", Required: true},
	{Name: "providerId", Kind: "string", Required: true},
	{Name: "channel", Kind: "string", Required: true, Enum: []string{"in_app", "email", "sms", "chat", "push"}},
	{Name: "credentials", Kind: "object", Required: true},
	{Name: "configurations", Kind: "object"},
	{Name: "active", Kind: "bool", Required: true},
	{Name: "deleted", Kind: "bool", Required: true},
	{Name: "deletedAt", Kind: "time"},
	{Name: "deletedBy", Kind: "id"},
	{Name: "primary", Kind: "bool", Required: true},
	{Name: "conditions", Kind: "array"},
}

var (
	credentialStrings = strings.Fields(`apiKey user secretKey domain password host port region accountSid
		messageProfileId token from senderName projectName applicationId clientId baseUrl webhookUrl redirectUrl
		serviceAccount ipPoolName apiKeyRequestHeader secretKeyRequestHeader idPath datePath apiToken
		authenticationTokenKey instanceId alertUid title imageUrl state externalLink channelId
		phoneNumberIdentification accessKey`)
	// autoCreateSubscribers is Herald's one addition, present only when set.
	credentialBools = strings.Fields(`secure requireTls ignoreTls hmac authenticateByToken autoCreateSubscribers`)
	updateOnly      = []string{"appSid", "senderId", "AppIOBaseUrl"}
)

// conformIntegration checks one integration (docs/api.md, "Integrations");
// update says whether the update-only credentials (docs/api.md,
// "Integrations") may appear.
func conformIntegration(t *testing.T, where string, v any, update bool) map[string]any {
	t.Helper()
	in := platformtest.Conform(t, where, v, integrationFields)
	creds, _ := in["credentials"].(map[string]any)
	for k, val := range creds {
		switch {
		case slices.Contains(credentialStrings, k), update && slices.Contains(updateOnly, k):
			if _, ok := val.(string); !ok {
				t.Errorf("%s.credentials.%s: want a string, got %T", where, k, val)
			}
		case slices.Contains(credentialBools, k):
			if _, ok := val.(bool); !ok {
				t.Errorf("%s.credentials.%s: want a boolean, got %T", where, k, val)
			}
		case k == "tlsOptions":
			if _, ok := val.(map[string]any); !ok {
				t.Errorf("%s.credentials.tlsOptions: want an object, got %T", where, val)
			}
		default:
			t.Errorf("%s.credentials.%s: not in this response's schema", where, k)
		}
	}
	if cfg, ok := in["configurations"]; ok {
		platformtest.Conform(t, where+".configurations", cfg, []platformtest.Field{
			{Name: "inboundWebhookEnabled", Kind: "bool"},
			{Name: "inboundWebhookSigningKey", Kind: "string"},
		})
	}
	for _, c := range platformtest.Items(t, where+".conditions", orEmpty(in["conditions"])) {
		f := platformtest.Conform(t, where+".conditions", c, []platformtest.Field{
			{Name: "isNegated", Kind: "bool", Required: true},
			{Name: "type", Kind: "string", Required: true, Enum: strings.Fields("BOOLEAN TEXT DATE NUMBER STATEMENT LIST MULTI_LIST GROUP")},
			{Name: "value", Kind: "string", Required: true, Enum: []string{"AND", "OR"}},
			{Name: "children", Kind: "array", Required: true},
		})
		for _, part := range platformtest.Items(t, "children", f["children"]) {
			platformtest.Conform(t, where+".conditions.children", part, []platformtest.Field{
				{Name: "field", Kind: "string", Required: true},
				{Name: "value", Kind: "string", Required: true},
				{Name: "operator", Kind: "string", Required: true, Enum: strings.Fields("LARGER SMALLER LARGER_EQUAL SMALLER_EQUAL EQUAL NOT_EQUAL ALL_IN ANY_IN NOT_IN BETWEEN NOT_BETWEEN LIKE NOT_LIKE IN")},
				{Name: "on", Kind: "string", Required: true, Enum: []string{"subscriber", "payload"}},
			})
		}
	}
	return in
}

func orEmpty(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}

func TestConformance_IntegrationResponses(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)

	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"twilio","channel":"sms","name":"Twilio",
		"credentials":{"accountSid":"AC1","token":"t","from":"+15550100","appSid":"app-1","senderId":"HERALD","AppIOBaseUrl":"https://appio.example.com"},
		"conditions":[{"isNegated":false,"type":"GROUP","value":"AND","children":[{"field":"tier","value":"gold","operator":"EQUAL","on":"payload"}]}]}`)
	is.Equal(res.Status, 201) // create: 201
	created := conformIntegration(t, "POST /v1/integrations", platformtest.DecodeAny(t, res), false)
	id := created["_id"].(string)

	res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+id, `{"active":true,"configurations":{"inboundWebhookEnabled":true}}`)
	is.Equal(res.Status, 200) // update: 200
	updated := conformIntegration(t, "PUT /v1/integrations/{id}", platformtest.DecodeAny(t, res), true)
	is.Equal(updated["credentials"].(map[string]any)["appSid"], "app-1") // the update response carries appSid
	_, ok := updated["configurations"].(map[string]any)
	is.True(ok) // and configurations

	res = srv.Dev.Do(t, "POST", "/v1/integrations/"+id+"/set-primary", "")
	is.Equal(res.Status, 200) // set-primary: 200 (docs/api.md, "What strict clients check")
	conformIntegration(t, "POST set-primary", platformtest.DecodeAny(t, res), false)

	for _, path := range []string{"/v1/integrations", "/v1/integrations/active"} {
		res = srv.Dev.Do(t, "GET", path, "")
		is.Equal(res.Status, 200) // listed
		list := platformtest.Items(t, path, platformtest.DecodeAny(t, res))
		is.True(len(list) >= 2) // the seeded in_app integration and twilio
		for _, in := range list {
			m := conformIntegration(t, "GET "+path, in, false)
			_, hasConfigurations := m["configurations"]
			is.True(!hasConfigurations) // the list omits configurations (docs/api.md, "Integrations")
		}
	}

	other := conformIntegration(t, "POST", platformtest.DecodeAny(t, srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"sendgrid","channel":"email"}`)), false)
	res = srv.Dev.Do(t, "DELETE", "/v1/integrations/"+other["_id"].(string), "")
	is.Equal(res.Status, 200) // delete: 200 with the remaining integrations
	for _, in := range platformtest.Items(t, "DELETE", platformtest.DecodeAny(t, res)) {
		m := conformIntegration(t, "DELETE /v1/integrations/{id}", in, false)
		is.True(m["_id"] != other["_id"]) // the deleted one is gone
	}
}

func TestConformance_IntegrationBadInput(t *testing.T) {
	srv := apptest.NewServer(t)
	res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"sendgrid","channel":"email"}`)
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var in struct {
		ID string `json:"_id"`
	}
	res.Decode(t, &in)
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"Err malformed id on update", "PUT", "/v1/integrations/not-an-id", `{"name":"x"}`, 404},
		{"Err uppercase id on update", "PUT", "/v1/integrations/" + strings.ToUpper(in.ID), `{"name":"x"}`, 404},
		{"Err malformed id on delete", "DELETE", "/v1/integrations/%F0%9F%98%80", "", 404},
		{"Err malformed id on set-primary", "POST", "/v1/integrations/zzz/set-primary", "", 404},
		{"Err unknown id", "DELETE", "/v1/integrations/5f0000000000000000000000", "", 404},
		{"Err huge number as name", "PUT", "/v1/integrations/" + in.ID, `{"name":1e999}`, 422},
		{"Err nested null condition", "PUT", "/v1/integrations/" + in.ID, `{"conditions":[null]}`, 422},
		{"Err null children", "PUT", "/v1/integrations/" + in.ID, `{"conditions":[{"isNegated":false,"type":"GROUP","value":"AND","children":null}]}`, 422},
		{"Err credentials as a string", "PUT", "/v1/integrations/" + in.ID, `{"credentials":"secret"}`, 422},
		{"Err port as a number", "PUT", "/v1/integrations/" + in.ID, `{"credentials":{"port":587}}`, 422},
		{"Err empty update", "PUT", "/v1/integrations/" + in.ID, `{}`, 400},
		{"Err unknown channel", "POST", "/v1/integrations", `{"providerId":"x","channel":"fax"}`, 422},
		{"Err unicode blank provider", "POST", "/v1/integrations", `{"providerId":"\u00a0","channel":"email"}`, 422},
		{"Err malformed environment", "POST", "/v1/integrations", `{"providerId":"x","channel":"email","_environmentId":"abc"}`, 422},
		{"Err set-primary without credentials", "POST", "/v1/integrations/" + in.ID + "/set-primary", "", 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.want) // a clear 4xx
			if res.Status < 400 {
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

// platformtest.ErrorFields is the error body (docs/api.md, "Errors").

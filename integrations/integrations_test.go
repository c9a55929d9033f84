package integrations_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestIntegration_Create(t *testing.T) {
	srv, _ := newServer(t)

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"nodemailer","channel":"email",
			"credentials":{"host":"smtp.example.com","port":"587","from":"a@example.com","appSid":"sid-1"}}`)
		is.Equal(res.Status, http.StatusCreated) // created
		var raw map[string]any
		res.Decode(t, &raw)
		for _, key := range []string{"_id", "_environmentId", "_organizationId", "name", "identifier", "providerId",
			"channel", "credentials", "configurations", "active", "deleted", "primary", "conditions"} {
			_, ok := raw[key]
			is.True(ok) // every field (docs/api.md, "Integrations") is present
		}
		_, hasDeletedAt := raw["deletedAt"]
		is.True(!hasDeletedAt) // deletedAt is absent until a delete
		var in integrationBody
		res.Decode(t, &in)
		is.Equal(in.EnvironmentID, srv.App.Development.ID)              // caller's environment
		is.Equal(in.OrganizationID, srv.App.Development.OrganizationID) // caller's organization
		is.Equal(in.Name, "Custom SMTP")                                // readable provider name by default
		is.True(strings.HasPrefix(in.Identifier, "custom-smtp-"))       // slug of the name plus a suffix
		is.Equal(len(in.Identifier), len("custom-smtp-")+6)             // six-character suffix
		is.True(!in.Active)                                             // inactive by default
		is.True(!in.Primary)                                            // inactive is never primary
		is.True(in.Conditions != nil && len(in.Conditions) == 0)        // conditions default []
		is.Equal(in.Credentials["host"], "smtp.example.com")            // credentials read back decrypted
		_, hasSid := in.Credentials["appSid"]
		is.True(!hasSid) // update-only credential absent from the create response
	})

	t.Run("OKExplicitIdentifierAndOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		a := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","identifier":"team-slack","name":"Team"}`)
		is.Equal(a.Identifier, "team-slack") // explicit identifier kept
		is.Equal(a.Name, "Team")             // explicit name kept
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","identifier":"team-slack"}`)
		is.Equal(res.Status, http.StatusConflict) // duplicate identifier in the environment
		b := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","identifier":"team-slack-2","_environmentId":"`+srv.App.Production.ID+`"}`)
		is.Equal(b.EnvironmentID, srv.App.Production.ID) // _environmentId picks the organization's environment
		c := mustCreate(t, srv.Prod, `{"providerId":"slack","channel":"chat","identifier":"team-slack"}`)
		is.Equal(c.Identifier, "team-slack") // identifiers are unique per environment only
	})

	t.Run("OKInboundWebhookKeyGenerated", func(t *testing.T) {
		is := is.New(t)
		in := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","configurations":{"inboundWebhookEnabled":true}}`)
		key, _ := in.Configurations["inboundWebhookSigningKey"].(string)
		is.Equal(len(key), 64) // a signing key was generated
	})

	for _, tc := range []struct {
		name, body, field string
	}{
		{"ErrProviderMissing", `{"channel":"email"}`, "providerId"},
		{"ErrChannelMissing", `{"providerId":"x"}`, "channel"},
		{"ErrChannelUnknown", `{"providerId":"x","channel":"pigeon"}`, "channel"},
		{"ErrProviderOnWrongChannel", `{"providerId":"nodemailer","channel":"sms"}`, "channel"},
		{"ErrActiveType", `{"providerId":"sendgrid","channel":"email","active":"yes"}`, "active"},
		{"ErrCredentialType", `{"providerId":"sendgrid","channel":"email","credentials":{"port":587}}`, "credentials.port"},
		{"ErrWebhookURL", `{"providerId":"email-webhook","channel":"email","credentials":{"webhookUrl":"ftp://x"}}`, "credentials.webhookUrl"},
		{"ErrEnvironmentMalformed", `{"providerId":"sendgrid","channel":"email","_environmentId":"nope"}`, "_environmentId"},
		{"ErrEnvironmentUnknown", `{"providerId":"sendgrid","channel":"email","_environmentId":"aaaaaaaaaaaaaaaaaaaaaaaa"}`, "_environmentId"},
		{"ErrConditionType", `{"providerId":"sendgrid","channel":"email","conditions":[{"isNegated":false,"type":"WORD","value":"AND","children":[]}]}`, "conditions.0.type"},
		{"ErrConditionValue", `{"providerId":"sendgrid","channel":"email","conditions":[{"isNegated":false,"type":"TEXT","value":"XOR","children":[]}]}`, "conditions.0.value"},
		{"ErrConditionNegated", `{"providerId":"sendgrid","channel":"email","conditions":[{"type":"TEXT","value":"AND","children":[]}]}`, "conditions.0.isNegated"},
		{"ErrConditionChildren", `{"providerId":"sendgrid","channel":"email","conditions":[{"isNegated":true,"type":"TEXT","value":"AND"}]}`, "conditions.0.children"},
		{"ErrConditionOperator", `{"providerId":"sendgrid","channel":"email","conditions":[{"isNegated":false,"type":"TEXT","value":"AND",
			"children":[{"field":"f","value":"v","operator":"ABOUT","on":"payload"}]}]}`, "conditions.0.children.0.operator"},
		{"ErrConditionOn", `{"providerId":"sendgrid","channel":"email","conditions":[{"isNegated":false,"type":"TEXT","value":"AND",
			"children":[{"field":"f","value":"v","operator":"EQUAL","on":"tenant"}]}]}`, "conditions.0.children.0.on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v1/integrations", tc.body)
			is.Equal(res.Status, http.StatusUnprocessableEntity) // invalid body
			var body struct {
				Errors map[string]any `json:"errors"`
			}
			res.Decode(t, &body)
			_, ok := body.Errors[tc.field]
			if !ok {
				t.Logf("errors: %s", res.Body)
			}
			is.True(ok) // the error names the offending field
		})
	}

	t.Run("ErrSecondServiceInApp", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations", `{"providerId":"service","channel":"in_app","active":true}`)
		is.Equal(res.Status, http.StatusBadRequest) // one in-app service integration per environment
	})

	t.Run("ConditionsRoundTrip", func(t *testing.T) {
		is := is.New(t)
		in := mustCreate(t, srv.Dev, `{"providerId":"push-webhook","channel":"push","conditions":[{"isNegated":true,"type":"GROUP","value":"OR",
			"children":[{"field":"tier","value":"gold","operator":"EQUAL","on":"subscriber"}]}]}`)
		is.Equal(len(in.Conditions), 1)                         // condition kept
		is.True(in.Conditions[0].IsNegated)                     // isNegated kept
		is.Equal(in.Conditions[0].Children[0]["field"], "tier") // children kept
	})
}

func TestIntegration_List(t *testing.T) {
	srv, _ := newServer(t)
	is := is.New(t)
	dev := mustCreate(t, srv.Dev, `{"providerId":"discord","channel":"chat","active":true}`)
	prod := mustCreate(t, srv.Prod, `{"providerId":"msteams","channel":"chat"}`)

	all := list(t, srv.Prod, "/v1/integrations")
	is.Equal(len(all), 4) // both seeded service integrations and both created ones: the organization's list
	_, ok := byID(all, dev.ID)
	is.True(ok) // Production's key sees Development's integration (docs/api.md, "Integrations")
	services := 0
	for _, in := range all {
		is.True(in.Configurations == nil) // the list has no configurations
		if in.ProviderID == "service" {
			services++
			is.True(in.Active)             // seeded service integration is active
			is.Equal(in.Channel, "in_app") // on the in_app channel
		}
	}
	is.Equal(services, 2) // one seeded service integration per environment

	active := list(t, srv.Prod, "/v1/integrations/active")
	is.Equal(len(active), 1)                                 // only Production's active service integration
	is.Equal(active[0].ProviderID, "service")                // which is Production's
	is.Equal(active[0].EnvironmentID, srv.App.Production.ID) // of the caller's environment
	_, ok = byID(active, prod.ID)
	is.True(!ok) // inactive integrations are not active

	devActive := list(t, srv.Dev, "/v1/integrations/active")
	is.Equal(len(devActive), 2) // Development's service and discord
}

func TestIntegration_Update(t *testing.T) {
	srv, _ := newServer(t)
	in := mustCreate(t, srv.Dev, `{"providerId":"nodemailer","channel":"email","name":"Mail",
		"credentials":{"host":"smtp.example.com","port":"25","from":"a@example.com"},
		"configurations":{"inboundWebhookEnabled":true}}`)
	key := in.Configurations["inboundWebhookSigningKey"]

	t.Run("OKPartial", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"name":"Mail 2","configurations":{}}`)
		is.Equal(res.Status, http.StatusOK) // updated
		var out integrationBody
		res.Decode(t, &out)
		is.Equal(out.Name, "Mail 2")                                  // name changed
		is.Equal(out.Identifier, in.Identifier)                       // identifier kept
		is.Equal(out.Credentials["host"], "smtp.example.com")         // credentials kept
		is.Equal(out.Configurations["inboundWebhookSigningKey"], key) // configurations {} changes nothing
		is.Equal(out.Configurations["inboundWebhookEnabled"], true)   // still enabled
	})

	t.Run("OKActivateWithUpdateOnlyCredentials", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"active":true,
			"credentials":{"host":"smtp.example.com","port":"25","from":"b@example.com","senderId":"S1"}}`)
		is.Equal(res.Status, http.StatusOK) // activated
		var out integrationBody
		res.Decode(t, &out)
		is.True(out.Active)                                // active now
		is.True(out.Primary)                               // first active email integration becomes primary
		is.Equal(out.Credentials["senderId"], "S1")        // update response carries update-only credentials
		is.Equal(out.Credentials["from"], "b@example.com") // credentials replaced
		got, _ := byID(list(t, srv.Dev, "/v1/integrations"), in.ID)
		_, ok := got.Credentials["senderId"]
		is.True(!ok) // the list omits update-only credentials
	})

	t.Run("OKFromOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		res := srv.Prod.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"name":"Renamed by prod"}`)
		is.Equal(res.Status, http.StatusOK) // update by id works across the organization (docs/api.md, "Keys and environments")
	})

	t.Run("OKMoveEnvironment", func(t *testing.T) {
		is := is.New(t)
		hook := mustCreate(t, srv.Dev, `{"providerId":"discord","channel":"chat","active":true}`)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+hook.ID, `{"_environmentId":"`+srv.App.Production.ID+`"}`)
		is.Equal(res.Status, http.StatusOK) // moved to the organization's other environment
		_, ok := byID(list(t, srv.Prod, "/v1/integrations/active"), hook.ID)
		is.True(ok) // Production now has it
		_, ok = byID(list(t, srv.Dev, "/v1/integrations/active"), hook.ID)
		is.True(!ok) // Development no longer does
	})

	t.Run("OKMovePrimaryWhereThereIsOne", func(t *testing.T) {
		is := is.New(t)
		sms := `{"providerId":"generic-sms","channel":"sms","active":true,"credentials":{"baseUrl":"https://sms.example","from":"+15550100"}}`
		prodPrimary := mustCreate(t, srv.Prod, sms)
		is.True(prodPrimary.Primary) // Production's primary sms
		devPrimary := mustCreate(t, srv.Dev, sms)
		is.True(devPrimary.Primary) // Development's
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+devPrimary.ID, `{"_environmentId":"`+srv.App.Production.ID+`"}`)
		is.Equal(res.Status, http.StatusOK) // moved, not a false identifier conflict
		moved, _ := byID(list(t, srv.Prod, "/v1/integrations"), devPrimary.ID)
		is.True(!moved.Primary) // the primary flag does not travel
		kept, _ := byID(list(t, srv.Prod, "/v1/integrations"), prodPrimary.ID)
		is.True(kept.Primary) // Production keeps its own
	})

	t.Run("ErrIdentifierUsedInTheOrganization", func(t *testing.T) {
		is := is.New(t)
		mustCreate(t, srv.Prod, `{"providerId":"slack","channel":"chat","identifier":"pm-1"}`)
		dev := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","identifier":"dev-1"}`)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+dev.ID, `{"identifier":"pm-1"}`)
		is.Equal(res.Status, http.StatusConflict) // a changed identifier is free org-wide (docs/api.md, "Integrations")
		res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+dev.ID, `{"identifier":"dev-1","name":"Kept"}`)
		is.Equal(res.Status, http.StatusOK) // an unchanged one is no conflict
	})

	t.Run("ErrMoveSecondService", func(t *testing.T) {
		is := is.New(t)
		var service string
		for _, in := range list(t, srv.Dev, "/v1/integrations/active") {
			if in.ProviderID == "service" {
				service = in.ID
			}
		}
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+service, `{"_environmentId":"`+srv.App.Production.ID+`"}`)
		is.Equal(res.Status, http.StatusBadRequest) // Production already has its in-app service integration
	})

	t.Run("ErrEmpty", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"check":false}`)
		is.Equal(res.Status, http.StatusBadRequest) // nothing to update
	})

	t.Run("ErrDuplicateIdentifier", func(t *testing.T) {
		is := is.New(t)
		other := mustCreate(t, srv.Dev, `{"providerId":"twilio","channel":"sms","identifier":"taken"}`)
		_ = other
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"identifier":"taken"}`)
		is.Equal(res.Status, http.StatusConflict) // identifier used in the environment
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{"aaaaaaaaaaaaaaaaaaaaaaaa", "not-an-id", "AAAAAAAAAAAAAAAAAAAAAAAA"} {
			res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+id, `{"name":"x"}`)
			is.Equal(res.Status, http.StatusNotFound) // unknown or malformed id
		}
	})

	t.Run("ErrBlankName", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+in.ID, `{"name":"  "}`)
		is.Equal(res.Status, http.StatusUnprocessableEntity) // a name cannot be erased
	})
}

func TestIntegration_RequiredCredentials(t *testing.T) {
	srv, _ := newServer(t)
	for _, tc := range []struct {
		name, provider, channel, credentials, missing string
	}{
		{"NodemailerHost", "nodemailer", "email", `{"port":"25","from":"a@b.c"}`, "host"},
		{"NodemailerPort", "nodemailer", "email", `{"host":"h","from":"a@b.c"}`, "port"},
		{"NodemailerFrom", "nodemailer", "email", `{"host":"h","port":"25"}`, "from"},
		{"EmailWebhook", "email-webhook", "email", `{}`, "webhookUrl"},
		{"PushWebhook", "push-webhook", "push", `{}`, "webhookUrl"},
		{"ChatWebhook", "chat-webhook", "chat", `{}`, "webhookUrl"},
		{"GenericSMSBaseURL", "generic-sms", "sms", `{"from":"+1"}`, "baseUrl"},
		{"GenericSMSFrom", "generic-sms", "sms", `{"baseUrl":"http://sms.example"}`, "from"},
		{"SendGrid", "sendgrid", "email", `{"from":"a@b.c"}`, "apiKey"},
		{"Twilio", "twilio", "sms", `{"accountSid":"a","from":"+1"}`, "token"},
		{"Slack", "slack", "chat", `{}`, ""},
		{"Discord", "discord", "chat", `{}`, ""},
		{"MSTeams", "msteams", "chat", `{}`, ""},
		{"Mattermost", "mattermost", "chat", `{}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			body := `{"providerId":"` + tc.provider + `","channel":"` + tc.channel + `","credentials":` + tc.credentials
			inactive := mustCreate(t, srv.Dev, body+`}`)
			is.True(!inactive.Active) // an inactive integration may lack credentials
			res := srv.Dev.Do(t, "PUT", "/v1/integrations/"+inactive.ID, `{"active":true}`)
			created := srv.Dev.Do(t, "POST", "/v1/integrations", body+`,"active":true}`)
			if tc.missing == "" {
				is.Equal(res.Status, http.StatusOK)          // nothing required at the integration level
				is.Equal(created.Status, http.StatusCreated) // nor on create
				return
			}
			is.Equal(res.Status, http.StatusUnprocessableEntity)     // activation needs the credential
			is.Equal(created.Status, http.StatusUnprocessableEntity) // so does an active create
			var body422 struct {
				Errors map[string]any `json:"errors"`
			}
			res.Decode(t, &body422)
			_, ok := body422.Errors["credentials."+tc.missing]
			is.True(ok) // the 422 names the missing credential
		})
	}
}

func TestIntegration_CredentialsEncrypted(t *testing.T) {
	srv, _ := newServer(t)
	is := is.New(t)
	const secret = "super-secret-api-key-7f3a9c"
	in := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","credentials":{"apiKey":"`+secret+`","from":"a@b.c"}}`)
	rows, err := srv.App.DB.QueryContext(t.Context(), `SELECT credentials FROM integrations`)
	is.NoErr(err) // read the raw column
	defer rows.Close()
	n := 0
	for rows.Next() {
		var raw []byte
		is.NoErr(rows.Scan(&raw))                       // scan the column
		is.True(!bytes.Contains(raw, []byte(secret)))   // the secret is not stored in plaintext
		is.True(!bytes.Contains(raw, []byte("apiKey"))) // nor is the JSON around it
		n++
	}
	is.NoErr(rows.Err()) // rows read
	is.Equal(n, 3)       // two seeded integrations and the created one
	got, _ := byID(list(t, srv.Dev, "/v1/integrations"), in.ID)
	is.Equal(got.Credentials["apiKey"], secret) // the owner reads it back decrypted
	raw, _ := json.Marshal(got)
	is.True(bytes.Contains(raw, []byte(secret))) // through the API only
}

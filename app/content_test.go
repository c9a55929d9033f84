package app_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// An email step is sent inside its layout: the one it names, the
// environment's default when it names none, and none when the trigger
// says null; the layout reads the same variables as the step.
func TestContent_EmailInsideItsLayout(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	box := apptest.NewMailbox(t)
	box.UseFor(t, srv.Dev)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`)
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`)
	page, _ := json.Marshal(`<html><body><h1>{{ payload.brand }} for {{ subscriber.firstName }}</h1>{{ content }}<footer>bye</footer></body></html>`)
	apptest.MustStatus(t, srv.Dev, "PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"body":`+string(page)+`,"editorType":"html"}}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"<p>Hello {{ payload.name }}</p>","layoutId":"brand"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Plain","workflowId":"plain","active":true,"steps":[
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"<p>Plain</p>"}}]}`)

	apptest.TriggerTo(t, srv, "welcome", "ada", `{"name":"<Bea>","brand":"Acme"}`)
	html := box.WaitHTML(t, 1)
	is.Equal(html, `<html><body><h1>Acme for Ada</h1><p>Hello &lt;Bea&gt;</p><footer>bye</footer></body></html>`) // the step's body in the brand layout

	apptest.TriggerTo(t, srv, "plain", "ada", `{}`)
	html = box.WaitHTML(t, 2)
	is.True(strings.HasPrefix(html, "<!DOCTYPE html>"))          // the environment's default layout
	is.True(strings.Contains(html, "<p>Plain</p></div></body>")) // around the body

	apptest.Trigger(t, srv, `{"name":"welcome","to":"ada","payload":{"name":"Cy"},"overrides":{"steps":{"mail":{"layoutId":null}}}}`)
	is.Equal(box.WaitHTML(t, 3), `<p>Hello Cy</p>`) // the trigger turned the layout off

	// A layout as created, before an update gives it a body: the empty
	// block document, which holds the step's body and nothing else of note.
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"fresh","name":"Fresh"}`)
	apptest.Trigger(t, srv, `{"name":"welcome","to":"ada","payload":{"name":"Di"},"overrides":{"steps":{"mail":{"layoutId":"fresh"}}}}`)
	html = box.WaitHTML(t, 4)
	is.True(strings.Contains(html, "<p>Hello Di</p>"))   // the step's body inside the new layout
	is.True(!strings.HasPrefix(html, "<!DOCTYPE html>")) // not Herald's default page
}

// inAppContent waits for the subscriber's newest in-app message and returns
// its content.
func inAppContent(t *testing.T, srv *apptest.Server, subscriberID string, n int) string {
	t.Helper()
	var page struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	platformtest.Eventually(t, 10*time.Second, func() bool {
		srv.Dev.Do(t, "GET", "/v1/messages?channel=in_app&subscriberId="+subscriberID, "").Decode(t, &page)
		return len(page.Data) >= n
	}, "the in-app message")
	return page.Data[0].Content
}

// A workflow with translations on renders {{t.key}} in the subscriber's
// locale, falling back to the language, then to en_US; a missing key
// renders as the key, with a warning in the step's execution details.
func TestContent_Translations(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"isTranslationEnabled":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{ t.greeting }} · {{t.button.open}}"}}]}`)
	for locale, content := range map[string]string{
		"en_US": `{"greeting":"Hello {{ subscriber.firstName }}","button":{"open":"Open"}}`,
		"fr_FR": `{"greeting":"Bonjour {{ subscriber.firstName }}","button":{"open":"Ouvrir"}}`,
		"fr":    `{"greeting":"Salut {{ subscriber.firstName }}","button":{"open":"Voir"}}`,
	} {
		apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"`+locale+`","content":`+content+`}`, 200)
	}
	for _, tc := range []struct{ name, locale, want string }{
		{"OK exact locale", "fr_FR", "Bonjour Ada · Ouvrir"},
		{"OK the language", "fr_CA", "Salut Ada · Voir"},
		{"OK unknown locale takes the default", "ja_JP", "Hello Ada · Open"},
		{"OK no locale takes the default", "", "Hello Ada · Open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id := strings.ReplaceAll(strings.ToLower(tc.name), " ", "-")
			apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+id+`","firstName":"Ada","locale":"`+tc.locale+`"}`)
			apptest.TriggerTo(t, srv, "welcome", id, `{}`)
			is.Equal(inAppContent(t, srv, id, 1), tc.want) // rendered in the locale chosen
		})
	}
	t.Run("OK a missing key renders as the key, with a warning", func(t *testing.T) {
		is := is.New(t)
		apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Gap","workflowId":"gap","active":true,"isTranslationEnabled":true,
			"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{t.gone}}!"}}]}`)
		apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", `{"resourceId":"gap","resourceType":"workflow","locale":"en_US","content":{"x":"y"}}`, 200)
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"gap-ada"}`)
		tx := apptest.TriggerTo(t, srv, "gap", "gap-ada", `{}`)
		is.Equal(inAppContent(t, srv, "gap-ada", 1), "gone!") // the key in its place
		n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
		var details []string
		for _, d := range n.Jobs[1].ExecutionDetails {
			details = append(details, d.Status+": "+d.Detail)
		}
		is.True(slices.Contains(details, "Warning: Translation missing for gone")) // a warning names the key
	})
	t.Run("OK translations off leave the references empty", func(t *testing.T) {
		is := is.New(t)
		apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/workflows/welcome", `{"isTranslationEnabled":false}`, 200)
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"off-ada","locale":"fr_FR"}`)
		apptest.TriggerTo(t, srv, "welcome", "off-ada", `{}`)
		is.Equal(inAppContent(t, srv, "off-ada", 1), " · ") // not translated
	})
}

// A layout with translations on reads its own keys in the subscriber's
// locale.
func TestContent_LayoutTranslations(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	box := apptest.NewMailbox(t)
	box.UseFor(t, srv.Dev)
	page, _ := json.Marshal(`<html><body>{{ content }}<footer>{{ t.footer }}</footer></body></html>`)
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"brand","name":"Brand","isTranslationEnabled":true}`)
	apptest.MustStatus(t, srv.Dev, "PUT", "/v2/layouts/brand", `{"name":"Brand","isTranslationEnabled":true,"controlValues":{"email":{"body":`+string(page)+`,"editorType":"html"}}}`, 200)
	apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", `{"resourceId":"brand","resourceType":"layout","locale":"de_DE","content":{"footer":"Tschüss"}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Mail","workflowId":"mail","active":true,
		"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"S","body":"<p>B</p>","layoutId":"brand"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com","locale":"de_AT"}`)
	apptest.TriggerTo(t, srv, "mail", "ada", `{}`)
	is.Equal(box.WaitHTML(t, 1), `<html><body><p>B</p><footer>Tschüss</footer></body></html>`) // the layout's key in the locale's language
}

// A trigger's context creates the contexts it names, is kept with the
// notification, and templates read its data; the older tenant field names
// the tenant context.
func TestContent_Contexts(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "{{ context.tenant.data.name }} ({{ context.tenant.id }}) · {{ tenant.name }} · {{ context.app.id }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)

	tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada","context":{"tenant":{"id":"acme","data":{"name":"Acme"}},"app":"jira"}}`)
	is.Equal(inAppContent(t, srv, "ada", 1), "Acme (acme) · Acme · jira") // the contexts' data rendered
	var created struct {
		Data map[string]any `json:"data"`
	}
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/contexts/tenant/acme", "", 200).Decode(t, &created)
	is.Equal(created.Data["name"], "Acme") // created by the trigger, with its data
	apptest.MustStatus(t, srv.Dev, "GET", "/v2/contexts/app/jira", "", 200)
	var list struct {
		Data []struct {
			TransactionID string   `json:"transactionId"`
			ContextKeys   []string `json:"contextKeys"`
		} `json:"data"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications?contextKeys=tenant:acme", "").Decode(t, &list)
	is.Equal(len(list.Data), 1)              // the notification is kept with its contexts
	is.Equal(list.Data[0].TransactionID, tx) // this trigger's

	// A context that exists keeps its data; a trigger does not rewrite it.
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","context":{"tenant":{"id":"acme","data":{"name":"Other"}}}}`)
	is.True(strings.HasPrefix(inAppContent(t, srv, "ada", 2), "Acme (acme)")) // the stored data
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/contexts/tenant/acme", `{"data":{"name":"Acme Inc"}}`, 200)
	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","context":{"tenant":"acme"}}`)
	is.True(strings.HasPrefix(inAppContent(t, srv, "ada", 3), "Acme Inc (acme)")) // the data as it is now

	apptest.Trigger(t, srv, `{"name":"hello","to":"ada","tenant":{"identifier":"globex","name":"Globex"}}`)
	is.Equal(inAppContent(t, srv, "ada", 4), "Globex (globex) · Globex · ") // tenant is the tenant context
}

// Deliveries read contexts from a cache: every write of a context through
// the API reaches the next delivery (an update, a delete and a trigger
// creating it again with new data, a v1 tenant's new name and its new
// identifier), and a trigger naming a context it has writes nothing to it.
func TestContent_ContextWritesReachTheNextDelivery(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "{{ context.tenant.id }}: {{ context.tenant.data.name }}")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	sent := 0
	deliver := func(context string) string {
		t.Helper()
		apptest.Trigger(t, srv, `{"name":"hello","to":"ada","context":`+context+`}`)
		sent++
		return inAppContent(t, srv, "ada", sent)
	}
	updatedAt := func(key string) string {
		var c struct {
			UpdatedAt string `json:"updatedAt"`
		}
		apptest.MustStatus(t, srv.Dev, "GET", "/v2/contexts/"+key, "", 200).Decode(t, &c)
		return c.UpdatedAt
	}

	is.Equal(deliver(`{"tenant":{"id":"acme","data":{"name":"Acme"}}}`), "acme: Acme") // created by the trigger
	is.Equal(deliver(`{"tenant":"acme"}`), "acme: Acme")                               // read again, now cached
	stamp := updatedAt("tenant/acme")
	time.Sleep(5 * time.Millisecond)                                                    // a write would stamp a later time
	is.Equal(deliver(`{"tenant":{"id":"acme","data":{"name":"Acme"}}}`), "acme: Acme")  // the same data
	is.Equal(deliver(`{"tenant":{"id":"acme","data":{"name":"Other"}}}`), "acme: Acme") // other data: the stored data stays
	is.Equal(updatedAt("tenant/acme"), stamp)                                           // neither trigger wrote the context

	apptest.MustStatus(t, srv.Dev, "PATCH", "/v2/contexts/tenant/acme", `{"data":{"name":"Acme Inc"}}`, 200)
	is.Equal(deliver(`{"tenant":"acme"}`), "acme: Acme Inc") // the update

	apptest.MustStatus(t, srv.Dev, "DELETE", "/v2/contexts/tenant/acme", "", 204)
	is.Equal(deliver(`{"tenant":{"id":"acme","data":{"name":"Acme Again"}}}`), "acme: Acme Again") // deleted, then created by the trigger

	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/tenants/acme", `{"name":"Acme v1"}`, 200)
	is.Equal(deliver(`{"tenant":"acme"}`), "acme: Acme v1") // a v1 tenant's new name
	is.Equal(deliver(`{"tenant":"acme2"}`), "acme2: ")      // not yet a context: created without data
	apptest.MustStatus(t, srv.Dev, "DELETE", "/v2/contexts/tenant/acme2", "", 204)
	apptest.MustStatus(t, srv.Dev, "PATCH", "/v1/tenants/acme", `{"identifier":"acme2"}`, 200)
	is.Equal(deliver(`{"tenant":"acme2"}`), "acme2: Acme v1") // the renamed tenant under its new key
	is.Equal(deliver(`{"tenant":"acme"}`), "acme: ")          // and none under its old one
}

// A step's preview is translated as a delivery is: the step's keys and its
// layout's, in the locale of the subscriber previewed (the sample's,
// en_US, unless the request names another).
func TestContent_PreviewTranslates(t *testing.T) {
	srv := apptest.NewServer(t)
	page, _ := json.Marshal(`<html><body>{{ content }}<footer>{{ t.footer }}</footer></body></html>`)
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"brand","name":"Brand","isTranslationEnabled":true}`)
	apptest.MustStatus(t, srv.Dev, "PUT", "/v2/layouts/brand", `{"name":"Brand","isTranslationEnabled":true,"controlValues":{"email":{"body":`+string(page)+`,"editorType":"html"}}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Mail","workflowId":"mail","active":true,"isTranslationEnabled":true,
		"steps":[{"name":"Mail","type":"email","controlValues":{"subject":"{{t.subject}}","body":"<p>{{t.body}}</p>","layoutId":"brand"}}]}`)
	for _, tr := range []string{
		`{"resourceId":"brand","resourceType":"layout","locale":"en_US","content":{"footer":"Bye"}}`,
		`{"resourceId":"brand","resourceType":"layout","locale":"de_DE","content":{"footer":"Tschüss"}}`,
		`{"resourceId":"mail","resourceType":"workflow","locale":"en_US","content":{"subject":"Hello","body":"Welcome"}}`,
		`{"resourceId":"mail","resourceType":"workflow","locale":"de_DE","content":{"subject":"Hallo","body":"Willkommen"}}`,
	} {
		apptest.MustStatus(t, srv.Dev, "POST", "/v2/translations", tr, 200)
	}
	for _, tc := range []struct{ name, body, subject, html string }{
		{"OK the sample's locale", `{}`, "Hello", `<html><body><p>Welcome</p><footer>Bye</footer></body></html>`},
		{"OK a German subscriber", `{"previewPayload":{"subscriber":{"locale":"de_AT"}}}`, "Hallo", `<html><body><p>Willkommen</p><footer>Tschüss</footer></body></html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var out struct {
				Result struct {
					Preview struct{ Subject, Body string } `json:"preview"`
				} `json:"result"`
			}
			res := srv.Dev.Do(t, "POST", "/v2/workflows/mail/step/mail/preview", tc.body)
			is.Equal(res.Status, 201)
			res.Decode(t, &out)
			is.Equal(out.Result.Preview.Subject, tc.subject) // the step's keys
			is.Equal(out.Result.Preview.Body, tc.html)       // and the layout's
		})
	}
}

package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

func TestTopics_Pages(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	seed(t, srv)
	b := member(t, srv, "editor@example.com", platform.RoleEditor)
	topics := devURL(srv, "topics")

	res := b.post(topics, url.Values{"key": {"not a key!"}, "name": {"Bad"}})
	is.Equal(res.status, 422)                                                            // a key no topic may have
	is.True(strings.Contains(res.body, `f-key`))                                         // marked on its field
	is.Equal(b.post(topics, url.Values{"key": {"beta"}, "name": {"Again"}}).status, 409) // a taken key
	res = b.post(topics, url.Values{"key": {"news"}, "name": {"News"}})
	is.Equal(res.status, 303)                             // created
	is.Equal(res.location, devURL(srv, "topics", "news")) // and opened

	news := devURL(srv, "topics", "news")
	res = b.post(news+"/members", url.Values{"subscriberIds": {"ada, bob\nnobody"}})
	is.Equal(res.status, 303) // added
	page := b.get(news)
	is.True(strings.Contains(page.body, "Not found or not members: nobody")) // the unknown one named
	is.True(strings.Contains(page.body, devURL(srv, "subscribers", "bob")))  // the members listed, linked
	var members struct {
		Data []any `json:"data"`
	}
	api(t, srv.Dev, "/v2/topics/news/subscriptions", &members)
	is.Equal(len(members.Data), 2) // as the API lists them

	is.Equal(b.post(news+"/members", url.Values{"subscriberIds": {"bob"}, "remove": {"1"}}).status, 303) // one removed
	is.Equal(b.post(news+"/rename", url.Values{"name": {""}}).status, 422)                               // a name is required
	is.Equal(b.post(news+"/rename", url.Values{"name": {"Newsletter"}}).status, 303)                     // renamed
	is.True(strings.Contains(b.get(topics).body, "Newsletter"))                                          // as the list shows
	is.Equal(b.post(news+"/delete", nil).status, 303)                                                    // deleted
	is.Equal(b.get(news).status, 404)                                                                    // gone
}

func TestWorkflows_Pages(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	seed(t, srv)
	b := member(t, srv, "editor@example.com", platform.RoleEditor)
	list := b.get(devURL(srv, "workflows"))
	is.True(strings.Contains(list.body, "welcome"))  // listed
	is.True(strings.Contains(list.body, ">ACTIVE<")) // with its status
	is.True(strings.Contains(b.get(devURL(srv, "workflows")+"?query=nothing-like-it").body, "No workflow matches"))

	is.Equal(b.post(devURL(srv, "workflows", "welcome", "active"), url.Values{"active": {"false"}}).status, 303) // deactivated
	var wf struct {
		Active bool   `json:"active"`
		Status string `json:"status"`
	}
	api(t, srv.Dev, "/v2/workflows/welcome", &wf)
	is.Equal(wf.Active, false) // as the API reads it

	is.Equal(b.post(devURL(srv, "workflows", "welcome", "sync"), url.Values{"target": {srv.App.Production.ID}}).status, 303) // synced
	api(t, srv.Prod, "/v2/workflows/welcome", &wf)
	is.Equal(wf.Status, "INACTIVE")                                                                                           // the copy in Production, as it was
	is.Equal(b.post(devURL(srv, "workflows", "welcome", "sync"), url.Values{"target": {srv.App.Development.ID}}).status, 422) // not to itself
}

func TestIntegrations_Pages(t *testing.T) {
	srv := apptest.NewServer(t)
	b := member(t, srv, "admin@example.com", platform.RoleAdmin)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer receiver.Close()
	list := devURL(srv, "integrations")
	var ints []struct {
		ID          string            `json:"_id"`
		Name        string            `json:"name"`
		Active      bool              `json:"active"`
		Primary     bool              `json:"primary"`
		Credentials map[string]string `json:"credentials"`
	}
	find := func(name string) (int, bool) {
		api(t, srv.Dev, "/v1/integrations", &ints)
		for i, in := range ints {
			if in.Name == name {
				return i, true
			}
		}
		return 0, false
	}

	t.Run("the form comes from the catalog", func(t *testing.T) {
		is := is.New(t)
		page := b.get(list + "/new?provider=sendgrid")
		is.Equal(page.status, 200)
		for _, field := range []string{`name="credentials.apiKey" type="password"`, `name="credentials.from"`, `name="credentials.senderName"`} {
			is.True(strings.Contains(page.body, field)) // each field the provider reads, a secret as one
		}
		is.Equal(b.get(list+"/new?provider=carrier-pigeon").status, 404) // no such provider
	})
	t.Run("ErrActiveWithoutItsKey", func(t *testing.T) {
		is := is.New(t)
		res := b.post(list, url.Values{"providerId": {"sendgrid"}, "name": {"Mail"}, "active": {"true"}, "credentials.from": {"a@example.com"}})
		is.Equal(res.status, 422)                                       // refused
		is.True(strings.Contains(res.body, "is required for provider")) // saying which
		_, found := find("Mail")
		is.True(!found) // and nothing stored
	})
	t.Run("OK create, keep the secret, switch, primary", func(t *testing.T) {
		is := is.New(t)
		res := b.post(list, url.Values{"providerId": {"sendgrid"}, "name": {"Mail"}, "credentials.apiKey": {"SG.key-1234"}, "credentials.from": {"a@example.com"}})
		is.Equal(res.status, 303) // created
		i, found := find("Mail")
		is.True(found)
		id := ints[i].ID
		is.Equal(ints[i].Credentials["apiKey"], "SG.key-1234") // with its key

		res = b.post(list+"/"+id, url.Values{"name": {"Mail"}, "credentials.apiKey": {""}, "credentials.from": {"b@example.com"}, "active": {"true"}})
		is.Equal(res.status, 303) // saved
		i, _ = find("Mail")
		is.Equal(ints[i].Credentials["apiKey"], "SG.key-1234") // a secret left empty stays
		is.Equal(ints[i].Credentials["from"], "b@example.com") // the rest changed
		is.True(ints[i].Active)                                // and switched on

		is.Equal(b.post(list+"/"+id+"/active", url.Values{"active": {"false"}}).status, 303) // off
		is.Equal(b.post(list+"/"+id+"/primary", nil).status, 303)                            // primary
		i, _ = find("Mail")
		is.True(ints[i].Primary && ints[i].Active) // primary, so active again
		is.True(strings.Contains(b.get(list).body, ">primary<"))
		is.Equal(b.post(list+"/"+id+"/delete", nil).status, 303) // deleted
		_, found = find("Mail")
		is.True(!found) // gone
	})
	t.Run("check", func(t *testing.T) {
		is := is.New(t)
		ok := b.post(list+"/check", url.Values{"providerId": {"chat-webhook"}, "credentials.webhookUrl": {receiver.URL + "/hook"}})
		is.Equal(ok.status, 200)                                         // checked
		is.True(strings.Contains(ok.body, "accepted these credentials")) // the provider answered
		bad := b.post(list+"/check", url.Values{"providerId": {"sendgrid"}, "credentials.from": {"a@example.com"}})
		is.True(strings.Contains(bad.body, "The check failed"))   // a missing key fails
		is.True(strings.Contains(bad.body, "credentials.apiKey")) // naming it
		_, found := find("Chat Webhook")
		is.True(!found) // nothing saved
	})
}

func TestKeys_Page(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	b := member(t, srv, "admin@example.com", platform.RoleAdmin)
	key := shownOnce(t, b.post(devURL(srv, "keys"), nil))
	is.Equal(srv.Dev.WithKey(key).Do(t, "GET", "/v1/environments", "").Status, 200) // the key works
	page := b.get(devURL(srv, "keys"))
	is.True(strings.Contains(page.body, "••••"+key[len(key)-4:]))                              // listed by its last four
	is.True(strings.Contains(page.body, ">never<") || strings.Contains(page.body, "data-ago")) // with its last use
	is.True(strings.Contains(b.get(devURL(srv, "keys")).body, "<time"))                        // the use is recorded

	prodKeys := b.get("/console/env/" + srv.App.Production.ID + "/keys").body
	is.True(!strings.Contains(prodKeys, key[len(key)-4:]+"<")) // another environment's list does not hold it

	// The list holds the environment's other keys too: take the form of the
	// one ending in the new key's last four.
	id := regexp.MustCompile(`/keys/([0-9a-f]{24})/revoke" class="inline" data-confirm="Revoke the key ending ` + key[len(key)-4:]).FindStringSubmatch(page.body)
	is.True(id != nil)
	is.Equal(b.post("/console/env/"+srv.App.Production.ID+"/keys/"+id[1]+"/revoke", nil).status, 404) // not from another environment
	is.Equal(b.post(devURL(srv, "keys", id[1], "revoke"), nil).status, 303)                           // revoked
	platformtest.Eventually(t, 2*time.Second, func() bool {
		return srv.Dev.WithKey(key).Do(t, "GET", "/v1/environments", "").Status == 401
	}, "the revoked key to be refused")
}

func TestTeam_Page(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	b := member(t, srv, "admin@example.com", platform.RoleAdmin)
	org := srv.App.Development.OrganizationID
	accounts := srv.Console.Accounts()

	res := b.post("/console/team", url.Values{"name": {"Bob"}, "email": {"bob"}, "role": {"viewer"}})
	is.Equal(res.status, 422)                                       // an email that is none
	is.True(strings.Contains(res.body, "must be an email address")) // marked
	link := shownOnce(t, b.post("/console/team", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "role": {"viewer"}, "access": {"link"}}))
	is.True(strings.HasPrefix(link, srv.URL+"/console/setup?token=")) // a setup link to this console
	bob, err := accounts.User(t.Context(), org, "bob@example.com")
	is.NoErr(err)
	is.True(!bob.HasPassword) // who sets a password through it

	is.Equal(b.post("/console/team/"+bob.ID+"/role", url.Values{"role": {"editor"}}).status, 303) // promoted
	bob, _ = accounts.User(t.Context(), org, bob.ID)
	is.Equal(bob.Role, platform.RoleEditor)

	me, _ := accounts.User(t.Context(), org, "admin@example.com")
	res = b.post("/console/team/"+me.ID+"/role", url.Values{"role": {"viewer"}})
	is.Equal(res.status, 409)                                            // the last admin stays one
	is.True(strings.Contains(res.body, "last admin"))                    // saying why
	is.Equal(b.post("/console/team/"+bob.ID+"/remove", nil).status, 303) // removed
	_, err = accounts.User(t.Context(), org, bob.ID)
	is.True(err != nil) // gone
}

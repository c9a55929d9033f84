package subscribers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
	"github.com/herald-notify/herald/subscribers"
)

func channelOf(s subscriberJSON, provider string) *channelJSON {
	for i := range s.Channels {
		if s.Channels[i].ProviderID == provider {
			return &s.Channels[i]
		}
	}
	return nil
}

func TestCredentials_Update(t *testing.T) {
	t.Run("OK PATCH merges and deviceTokens replaces", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
		var s subscriberJSON
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"fcm","credentials":{"deviceTokens":["a","b","a","c"],"title":"t"}}`, 200, &s)
		is.Equal(len(s.Channels), 1)                                                    // channel added
		is.Equal(channelOf(s, "fcm").Credentials["deviceTokens"], []any{"a", "b", "c"}) // de-duplicated, order kept
		is.Equal(*s.Version, 1)                                                         // __v bumped
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"fcm","credentials":{"webhookUrl":"https://x.io/h"}}`, 200, &s)
		c := channelOf(s, "fcm")
		is.Equal(len(s.Channels), 1)                                  // same entry updated
		is.Equal(c.Credentials["deviceTokens"], []any{"a", "b", "c"}) // tokens kept when not sent
		is.Equal(c.Credentials["webhookUrl"], "https://x.io/h")       // new field merged in
		is.Equal(c.Credentials["title"], "t")                         // old field kept
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"fcm","credentials":{"deviceTokens":["z"]}}`, 200, &s)
		is.Equal(channelOf(s, "fcm").Credentials["deviceTokens"], []any{"z"}) // supplied tokens replace
		is.Equal(channelOf(s, "fcm").Credentials["title"], "t")               // other fields kept
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"fcm","credentials":{"deviceTokens":[]}}`, 200, &s)
		is.Equal(channelOf(s, "fcm").Credentials["deviceTokens"], []any{}) // [] clears
		is.Equal(*s.Version, 4)                                            // every write bumps __v
		mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
		is.Equal(channelOf(s, "fcm").Credentials["deviceTokens"], []any{}) // stored, not just answered
	})

	t.Run("OK PUT replaces the whole entry", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada","channels":[{"providerId":"slack",
			"credentials":{"webhookUrl":"https://a.io","channel":"#x"}}]}`)
		var s subscriberJSON
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/ada/credentials",
			`{"providerId":"slack","credentials":{"webhookUrl":"https://b.io"}}`, 200, &s)
		is.Equal(len(s.Channels), 1)                                                              // replaced, not added
		is.Equal(channelOf(s, "slack").Credentials, map[string]any{"webhookUrl": "https://b.io"}) // channel gone
	})

	t.Run("OK the same credentials again change nothing", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
		var first, again subscriberJSON
		put := `{"providerId":"slack","credentials":{"webhookUrl":"https://a.io","channel":"#x"}}`
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/ada/credentials", put, 200, &first)
		is.Equal(*first.Version, 1) // the entry added
		srv.App.Clock.Advance(time.Minute)
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/ada/credentials", put, 200, &again)
		is.Equal(*again.Version, 1)                // the same entry again is no write
		is.Equal(again.UpdatedAt, first.UpdatedAt) // as the platform skips it
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"slack","credentials":{"channel":"#x"}}`, 200, &again)
		is.Equal(*again.Version, 1) // nor is merging in a value already there
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"slack","credentials":{"channel":"#y"}}`, 200, &again)
		is.Equal(*again.Version, 2) // a changed value is written
		is.True(again.UpdatedAt != first.UpdatedAt)
	})

	t.Run("OK entries per integrationIdentifier", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
		var s subscriberJSON
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"slack","integrationIdentifier":"one","credentials":{"webhookUrl":"https://1.io"}}`, 200, &s)
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
			`{"providerId":"slack","integrationIdentifier":"two","credentials":{"webhookUrl":"https://2.io"}}`, 200, &s)
		is.Equal(len(s.Channels), 2) // one entry per integration
	})

	t.Run("OK DELETE removes the provider's entries", func(t *testing.T) {
		is := is.New(t)
		srv, _ := newServer(t, nil)
		mustCreateSubscriber(t, srv.Dev, fullSubscriber)
		res := srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada/credentials/slack", "")
		is.Equal(res.Status, 204)  // no content
		is.Equal(len(res.Body), 0) // and no body
		var s subscriberJSON
		mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
		is.Equal(len(s.Channels), 1)                                                               // only fcm left
		is.Equal(channelOf(s, "slack"), nil)                                                       // slack removed
		is.Equal(srv.Dev.Do(t, "DELETE", "/v1/subscribers/ada/credentials/slack", "").Status, 204) // idempotent
	})

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"ErrUnknownProvider", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"pigeon","credentials":{}}`, 422, "providerId"},
		{"ErrMissingProvider", "PATCH", "/v1/subscribers/ada/credentials", `{"credentials":{}}`, 422, "providerId"},
		{"ErrMissingCredentials", "PUT", "/v1/subscribers/ada/credentials", `{"providerId":"slack"}`, 422, "credentials"},
		{"ErrTokensNotStrings", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":5}}`, 422, ""},
		{"ErrEmptyToken", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":["a",""]}}`, 422, "credentials.deviceTokens.1"},
		{"ErrBadWebhookUrl", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"slack","credentials":{"webhookUrl":"nope"}}`, 422, "credentials.webhookUrl"},
		{"ErrMalformedJSON", "PATCH", "/v1/subscribers/ada/credentials", `{"providerId"`, 400, ""},
		{"ErrUnknownSubscriber", "PATCH", "/v1/subscribers/nobody/credentials", `{"providerId":"slack","credentials":{}}`, 404, ""},
		{"ErrUnknownSubscriberDelete", "DELETE", "/v1/subscribers/nobody/credentials/slack", ``, 404, ""},
		{"ErrDeleteUnknownProvider", "DELETE", "/v1/subscribers/ada/credentials/pigeon", ``, 422, "providerId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv, _ := newServer(t, nil)
			mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
			res := srv.Dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status) // rejected
			var e errorJSON
			res.Decode(t, &e)
			if tc.status == 422 {
				is.True(e.Errors != nil) // every 422 carries errors
			}
			if tc.field != "" {
				_, ok := e.Errors[tc.field]
				is.True(ok) // keyed by JSON path
			}
			var s subscriberJSON
			mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
			is.Equal(*s.Version, 0) // nothing was written
		})
	}
}

func TestCredentials_IntegrationID(t *testing.T) {
	is := is.New(t)
	resolver := fakeResolver{"slack/": "655f00000000000000000001", "slack/team-b": "655f00000000000000000002"}
	srv, store := newServer(t, resolver)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
	var s subscriberJSON
	mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"slack","credentials":{"webhookUrl":"https://a.io"}}`, 200, &s)
	is.Equal(*channelOf(s, "slack").IntegrationID, "655f00000000000000000001") // primary integration of the provider
	mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"slack","integrationIdentifier":"team-b","credentials":{"webhookUrl":"https://b.io"}}`, 200, &s)
	is.Equal(len(s.Channels), 2)                                       // another integration, another entry
	is.Equal(*s.Channels[1].IntegrationID, "655f00000000000000000002") // the named integration
	mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/ada/credentials",
		`{"providerId":"discord","credentials":{"webhookUrl":"https://d.io"}}`, 200, &s)
	is.Equal(*channelOf(s, "discord").IntegrationID, "") // no integration for the provider yet
	raw, err := subscriberDoc(store, context.Background(), srv.App.Development.ID, "ada")
	is.NoErr(err) // a contract read before the integration exists, which must not be kept
	is.NoErr(json.Unmarshal(raw, &s))
	is.Equal(*channelOf(s, "discord").IntegrationID, "") // unresolved here too

	// The integration appears later: reads link the entry without a write.
	resolver["discord/"] = "655f00000000000000000003"
	mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
	is.Equal(*channelOf(s, "discord").IntegrationID, "655f00000000000000000003") // resolved at read time
	raw, err = subscriberDoc(store, context.Background(), srv.App.Development.ID, "ada")
	is.NoErr(err) // contract read
	is.NoErr(json.Unmarshal(raw, &s))
	is.Equal(*channelOf(s, "discord").IntegrationID, "655f00000000000000000003") // same through the contract method
}

// Each integrationIdentifier adds an entry, so a subscriber's channels are
// bounded as a create body bounds them: past 50, a 422 that writes nothing.
func TestCredentials_EntryBound(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
	patch := func(identifier string) *platformtest.Response {
		return srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials",
			fmt.Sprintf(`{"providerId":"slack","integrationIdentifier":%q,"credentials":{"webhookUrl":"https://a.io"}}`, identifier))
	}
	for i := range 50 {
		is.Equal(patch(fmt.Sprint("team-", i)).Status, 200) // up to the bound
	}
	res := patch("team-50")
	is.Equal(res.Status, 422) // one past it
	var e struct {
		Errors map[string]json.RawMessage `json:"errors"`
	}
	res.Decode(t, &e)
	_, named := e.Errors["providerId"]
	is.True(named)                        // names the field
	is.Equal(patch("team-7").Status, 200) // an existing entry still updates
	var s subscriberJSON
	mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
	is.Equal(len(s.Channels), 50) // nothing added
}

// A subscriber stored with more entries than the bound (written straight
// to the table) still updates the entries it has and grows no further.
func TestCredentials_EntryBoundStoredPast(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"ada"}`)
	entries := make([]string, 61)
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"providerId":"slack","integrationIdentifier":"team-%d","_integrationId":"","credentials":{"webhookUrl":"https://a.io"}}`, i)
	}
	_, err := srv.App.DB.ExecContext(context.Background(), `UPDATE subscribers SET channels = ? WHERE subscriber_id = 'ada'`,
		"["+strings.Join(entries, ",")+"]")
	is.NoErr(err)
	patch := func(identifier, url string) *platformtest.Response {
		return srv.Dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials",
			fmt.Sprintf(`{"providerId":"slack","integrationIdentifier":%q,"credentials":{"webhookUrl":%q}}`, identifier, url))
	}
	is.Equal(patch("team-7", "https://b.io").Status, 200)  // an existing entry updates
	is.Equal(patch("team-61", "https://b.io").Status, 422) // a new one is refused
	var s subscriberJSON
	mustDo(t, srv.Dev, "GET", "/v1/subscribers/ada", "", 200, &s)
	is.Equal(len(s.Channels), 61) // none added
	updated := 0
	for _, c := range s.Channels {
		if c.Credentials["webhookUrl"] == "https://b.io" {
			updated++
		}
	}
	is.Equal(updated, 1) // the one named, and only it
}

func TestStore_Contract(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		srv, store := newServer(t, nil)
		dev := platform.Tenant{OrganizationID: srv.App.Development.OrganizationID, EnvironmentID: srv.App.Development.ID}
		docs, err := upsertDocs(store, ctx, dev, []json.RawMessage{[]byte(`{"subscriberId":"ada","email":"a@x.io",
			"channels":[{"providerId":"service-slack","credentials":{}},{"providerId":"appio","credentials":{}},
			{"providerId":"slack","credentials":{}}]}`)}, nil)
		is.NoErr(err) // upserted
		var ada subscriberJSON
		is.NoErr(json.Unmarshal(docs[0], &ada))
		is.Equal(len(ada.Channels), 3) // the full subscriber keeps every channel
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"bob"}`)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"cat"}`)
		mustCreateSubscriber(t, srv.Prod, `{"subscriberId":"dan"}`)

		byID, err := byIDDocs(store, ctx, dev.EnvironmentID, []string{ada.ID, "655f00000000000000000009"})
		is.NoErr(err)          // read by _id
		is.Equal(len(byID), 1) // unknown ids are absent
		var listed subscriberJSON
		is.NoErr(json.Unmarshal(byID[ada.ID], &listed))
		is.Equal(len(listed.Channels), 1)                // service-slack and appio left out
		is.Equal(listed.Channels[0].ProviderID, "slack") // the rest kept

		_, err = subscriberDoc(store, ctx, dev.EnvironmentID, "nobody")
		is.Equal(err, platform.ErrNotFound) // contract: platform.ErrNotFound itself

		adaDoc, err := subscriberDoc(store, ctx, dev.EnvironmentID, "ada") // now cached; bob is not
		is.NoErr(err)
		bySubscriberID, err := bySubscriberIDDocs(store, ctx, dev.EnvironmentID, []string{"ada", "bob", "nobody", "dan", "bob"})
		is.NoErr(err)
		is.Equal(len(bySubscriberID), 2)                        // unknown subscriberIds and Production's dan are absent
		is.Equal(string(bySubscriberID["ada"]), string(adaDoc)) // the cached one, as Subscriber answers it
		bobDoc, err := subscriberDoc(store, ctx, dev.EnvironmentID, "bob")
		is.NoErr(err)
		is.Equal(string(bySubscriberID["bob"]), string(bobDoc)) // the one read, likewise

		raw, err := identityDoc(store, ctx, dev.EnvironmentID, "ada")
		is.NoErr(err)
		is.Equal(string(raw), `{"_id":"`+ada.ID+`","subscriberId":"ada","firstName":null,"lastName":null,"avatar":null}`) // the naming fields only
		_, err = identityDoc(store, ctx, srv.App.Production.ID, "ada")
		is.Equal(err, platform.ErrNotFound) // another environment's subscriberId is not found

		after := func(from string) []string {
			docs, err := afterDocs(store, ctx, dev.EnvironmentID, from, 2)
			is.NoErr(err)
			ids := []string{}
			for _, doc := range docs {
				var sub subscriberJSON
				is.NoErr(json.Unmarshal(doc, &sub))
				one, err := subscriberDoc(store, ctx, dev.EnvironmentID, sub.SubscriberID)
				is.NoErr(err)
				is.Equal(string(doc), string(one)) // each as Subscriber returns it
				ids = append(ids, sub.SubscriberID)
			}
			return ids
		}
		is.Equal(after(""), []string{"ada", "bob"}) // first batch, ascending
		is.Equal(after("bob"), []string{"cat"})     // last batch; Production's dan is not there
		is.Equal(after("cat"), []string{})          // none after the last
	})
	t.Run("ReadsFollowWrites", func(t *testing.T) {
		is := is.New(t)
		srv, store := newServer(t, nil)
		env := srv.App.Development.ID
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"bob","firstName":"Bob"}`)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"cat","firstName":"Cat"}`)
		// read answers a subscriber's document and identity, both cached
		// after the first read, as one string to compare.
		read := func(id string) (string, error) {
			var sub subscriberJSON
			raw, err := subscriberDoc(store, ctx, env, id)
			if err != nil {
				return "", err
			}
			if err := json.Unmarshal(raw, &sub); err != nil {
				return "", err
			}
			identity, err := identityDoc(store, ctx, env, id)
			return fmt.Sprintf("%s %d channels; %s", *sub.FirstName, len(sub.Channels), identity), err
		}
		bobIdentity := func(name string) string {
			var sub subscriberJSON
			mustDo(t, srv.Dev, "GET", "/v1/subscribers/bob", "", 200, &sub)
			return `{"_id":"` + sub.ID + `","subscriberId":"bob","firstName":"` + name + `","lastName":null,"avatar":null}`
		}
		cat, err := read("cat")
		is.NoErr(err)
		bob, err := read("bob")
		is.NoErr(err)
		is.Equal(bob, "Bob 0 channels; "+bobIdentity("Bob")) // read (and kept)

		dev := platform.Tenant{OrganizationID: srv.App.Development.OrganizationID, EnvironmentID: env}
		for _, w := range []struct {
			write func()
			want  string
		}{
			{func() { mustDo(t, srv.Dev, "PUT", "/v1/subscribers/bob", `{"firstName":"Robert"}`, 200, nil) }, "Robert 0 channels"},
			{func() {
				mustDo(t, srv.Dev, "PUT", "/v1/subscribers/bob/credentials",
					`{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.example/b"}}`, 200, nil)
			}, "Robert 1 channels"},
			{func() {
				_, err := upsertDocs(store, ctx, dev, []json.RawMessage{[]byte(`{"subscriberId":"bob","firstName":"Bobby"}`)}, nil)
				is.NoErr(err)
			}, "Bobby 1 channels"},
		} {
			w.write()
			bob, err = read("bob")
			is.NoErr(err)
			is.Equal(bob, w.want+"; "+bobIdentity(strings.Fields(w.want)[0])) // each write is seen at once
			now, err := read("cat")
			is.NoErr(err)
			is.Equal(now, cat) // and another subscriber reads as before
		}
		mustDo(t, srv.Dev, "DELETE", "/v1/subscribers/bob", "", 200, nil)
		_, err = read("bob")
		is.Equal(err, platform.ErrNotFound) // and so is a delete
	})
	t.Run("Batch", func(t *testing.T) {
		is := is.New(t)
		db := sqldbtest.NewFileDB(t)
		clock := platformtest.NewClock(time.Now())
		store := subscribers.NewStore(db, nil, clock.Now)
		tenant := platform.Tenant{OrganizationID: "org", EnvironmentID: "env"}
		upsert := func(ctx context.Context, bodies ...string) []subscriberJSON {
			raw := make([]json.RawMessage, len(bodies))
			for i, b := range bodies {
				raw[i] = json.RawMessage(b)
			}
			docs, err := upsertDocs(store, ctx, tenant, raw, nil)
			is.NoErr(err)
			return decodeSubscribers(t, docs)
		}
		created := upsert(ctx, `{"subscriberId":"ada","firstName":"Ada"}`, `{"subscriberId":"bob","firstName":"Bob"}`)
		is.Equal(*created[1].FirstName, "Bob") // answered in order

		// With the writer held, only a batch that changes nothing finishes;
		// one that waits for the writer fails when its context ends.
		_, release := sqldbtest.WriteTx(t, db)
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		same := upsert(short, `{"subscriberId":"bob","firstName":"Bob"}`, `{"subscriberId":"ada"}`)
		cancel()
		is.NoErr(release(false))                          // the writer is free again
		is.Equal(same[0].UpdatedAt, created[1].UpdatedAt) // nothing written
		is.Equal(*same[1].Version, 0)

		clock.Advance(time.Minute)
		mixed := upsert(ctx, `{"subscriberId":"ada","lastName":"Lovelace"}`, `{"subscriberId":"bob","firstName":"Bob"}`,
			`{"subscriberId":"ada","firstName":"Augusta"}`)
		is.Equal(*mixed[0].Version, 1)                     // ada's first write
		is.Equal(*mixed[0].FirstName, "Ada")               // answered before her second
		is.Equal(*mixed[1].Version, 0)                     // bob unchanged in a batch that writes
		is.Equal(mixed[1].UpdatedAt, created[1].UpdatedAt) // and not touched
		is.Equal(*mixed[2].Version, 2)                     // ada's second write sees her first
		is.Equal(*mixed[2].LastName, "Lovelace")
		is.Equal(*mixed[2].FirstName, "Augusta")
	})
	t.Run("ManyByID", func(t *testing.T) {
		is := is.New(t)
		db := sqldbtest.NewDB(t)
		store := subscribers.NewStore(db, nil, nil)
		tenant := platform.Tenant{OrganizationID: "org", EnvironmentID: "env"}
		bodies := make([]json.RawMessage, 600)
		for i := range bodies {
			bodies[i] = fmt.Appendf(nil, `{"subscriberId":"s%03d"}`, i)
		}
		docs, err := upsertDocs(store, ctx, tenant, bodies, nil)
		is.NoErr(err)
		var ids []string
		for _, sub := range decodeSubscribers(t, docs) {
			ids = append(ids, sub.ID)
		}
		for _, n := range []int{0, 1, 2, 5, 16, 17, 499, 500, 501, 600} {
			byID, err := byIDDocs(store, ctx, tenant.EnvironmentID, ids[:n])
			is.NoErr(err)
			is.Equal(len(byID), n) // every one found, however long the list
		}
		again, err := upsertDocs(store, ctx, tenant, bodies, nil)
		is.NoErr(err)
		is.Equal(string(again[599]), string(docs[599])) // found as stored: nothing to write
	})
	t.Run("Matching", func(t *testing.T) {
		is := is.New(t)
		db := sqldbtest.NewDB(t)
		store := subscribers.NewStore(db, nil, nil)
		dev := platform.Tenant{OrganizationID: "org", EnvironmentID: "dev"}
		long := strings.Repeat("x", 40) + "@example.com" // past the 32 characters a suffix keeps
		docs, err := upsertDocs(store, ctx, dev, []json.RawMessage{
			[]byte(`{"subscriberId":"ada","email":"Ada@Example.com"}`),
			[]byte(`{"subscriberId":"bob","email":"bob@example.org"}`),
			[]byte(`{"subscriberId":"cat","email":"` + long + `"}`),
			[]byte(`{"subscriberId":"100%"}`),
		}, nil)
		is.NoErr(err)
		_, err = upsertDocs(store, ctx, platform.Tenant{OrganizationID: "org", EnvironmentID: "prod"},
			[]json.RawMessage{[]byte(`{"subscriberId":"ada","email":"bob@example.org"}`)}, nil)
		is.NoErr(err)
		subscriberID := map[string]string{} // by _id
		for _, sub := range decodeSubscribers(t, docs) {
			subscriberID[sub.ID] = sub.SubscriberID
		}
		match := func(ids, emails []string, search string) []string {
			out, err := store.SubscribersMatching(ctx, dev.EnvironmentID, ids, emails, search)
			is.NoErr(err)
			named := []string{}
			for _, id := range out {
				named = append(named, subscriberID[id]) // another environment's _id would show as ""
			}
			slices.Sort(named)
			return named
		}
		is.Equal(match(nil, nil, ""), []string{})                                                     // no filter, no one
		is.Equal(match([]string{"bob", "nobody"}, nil, ""), []string{"bob"})                          // by subscriberId
		is.Equal(match(nil, []string{"bob@example.org"}, ""), []string{"bob"})                        // by email, this environment only
		is.Equal(match(nil, []string{"ada@example.com"}, ""), []string{})                             // exactly, case included
		is.Equal(match(nil, []string{long}, ""), []string{"cat"})                                     // a long address whole
		is.Equal(match(nil, []string{long[:32]}, ""), []string{})                                     // and not its indexed part
		is.Equal(match(nil, nil, "EXAMPLE"), []string{"ada", "bob", "cat"})                           // search: email in any case
		is.Equal(match(nil, nil, "100%"), []string{"100%"})                                           // or the subscriberId itself
		is.Equal(match(nil, nil, "%"), []string{})                                                    // % is literal, no wildcard
		is.Equal(match([]string{"ada"}, []string{"bob@example.org"}, "nope"), []string{"ada", "bob"}) // any filter matches
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		is := is.New(t)
		srv, store := newServer(t, nil)
		dev := platform.Tenant{OrganizationID: srv.App.Development.OrganizationID, EnvironmentID: srv.App.Development.ID}
		for body, field := range map[string]string{
			`{"email":"a@x.io"}`:                  "subscribers.1.subscriberId",
			`{"subscriberId":"a","email":"nope"}`: "subscribers.1.email",
			`{"subscriberId":7}`:                  "subscribers.1.subscriberId",
			`"ada"`:                               "subscribers.1",
		} {
			bodies := []json.RawMessage{[]byte(`{"subscriberId":"fine"}`), []byte(body)}
			_, err := upsertDocs(store, ctx, dev, bodies, nil)
			var pe *platform.Error
			is.True(asError(err, &pe))                // a client error, not a bug
			is.Equal(pe.Status, 422)                  // validation failed
			is.True(pe.Fields[field].Messages != nil) // named by its index
			_, err = upsertDocs(store, ctx, dev, bodies, []string{"actor", "to.0"})
			is.True(asError(err, &pe))
			is.True(pe.Fields[strings.Replace(field, "subscribers.1", "to.0", 1)].Messages != nil) // or by the caller's path
		}
		_, err := subscriberDoc(store, ctx, dev.EnvironmentID, "fine")
		is.Equal(err, platform.ErrNotFound) // a bad body leaves the good one unwritten
	})
}

// decodeSubscribers decodes the documents (docs/api.md, "Subscribers") a
// store call answers.
func decodeSubscribers(t *testing.T, docs []json.RawMessage) []subscriberJSON {
	t.Helper()
	out := make([]subscriberJSON, len(docs))
	for i, doc := range docs {
		if err := json.Unmarshal(doc, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

package integrations_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// These tests call what other domains use (provided.go) on the store itself,
// with data made through the API.

func TestStore_SeedEnvironment(t *testing.T) {
	srv, store := newServer(t)
	is := is.New(t)
	is.NoErr(store.SeedEnvironment(t.Context(), srv.App.Development)) // seeding again is harmless
	n := 0
	for _, in := range list(t, srv.Dev, "/v1/integrations") {
		if in.EnvironmentID == srv.App.Development.ID && in.ProviderID == "service" {
			n++
		}
	}
	is.Equal(n, 1) // still one service integration in Development
	ok, err := store.HasActiveIntegration(t.Context(), srv.App.Production.ID, "in_app")
	is.NoErr(err) // query works
	is.True(ok)   // Production's inbox works with no setup
}

func TestStore_ResolveIntegrationID(t *testing.T) {
	srv, store := newServer(t)
	ctx := t.Context()
	dev := srv.App.Development.ID
	older := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","active":true,"identifier":"older"}`)
	newer := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","active":true,"identifier":"newer"}`)
	mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","identifier":"idle"}`) // inactive
	const creds = `"credentials":{"apiKey":"k","from":"a@b.c"}`
	mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`) // primary at first
	second := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`)
	is.New(t).Equal(srv.Dev.Do(t, "POST", "/v1/integrations/"+second.ID+"/set-primary", "").Status, 200) // make the newer primary

	for _, tc := range []struct {
		name, env, provider, identifier, want string
	}{
		{"OKOldestActive", dev, "slack", "", older.ID},
		{"OKByIdentifier", dev, "slack", "newer", newer.ID},
		{"OKByIdentifierInactive", dev, "slack", "idle", ""}, // not linked, as on the reference platform
		{"OKPrimaryFirst", dev, "sendgrid", "", second.ID},
		{"OKNone", dev, "discord", "", ""},
		{"OKUnknownIdentifier", dev, "slack", "nope", ""},
		{"OKIdentifierOfOtherProvider", dev, "discord", "older", ""},
		{"OKOtherEnvironment", srv.App.Production.ID, "slack", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := store.ResolveIntegrationID(ctx, tc.env, tc.provider, tc.identifier)
			is.NoErr(err)          // resolving never fails for a missing integration
			is.Equal(got, tc.want) // the contract's choice
		})
	}
}

func TestStore_ActiveIntegrationsJSON(t *testing.T) {
	srv, store := newServer(t)
	ctx := t.Context()
	dev := srv.App.Development.ID
	const creds = `"credentials":{"apiKey":"key-1","from":"a@b.c","appSid":"app-1"}`
	first := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`)
	second := mustCreate(t, srv.Dev, `{"providerId":"resend","channel":"email","active":true,`+creds+`}`)
	third := mustCreate(t, srv.Dev, `{"providerId":"postmark","channel":"email","active":true,`+creds+`}`)
	mustCreate(t, srv.Dev, `{"providerId":"mailgun","channel":"email",`+creds+`}`) // inactive: left out
	mustCreate(t, srv.Prod, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`)
	is.New(t).Equal(srv.Dev.Do(t, "POST", "/v1/integrations/"+third.ID+"/set-primary", "").Status, 200) // third becomes primary
	is.New(t).Equal(srv.Dev.Do(t, "DELETE", "/v1/integrations/"+second.ID, "").Status, 200)             // deleted: left out

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		got, err := store.ActiveIntegrations(ctx, dev, "email")
		is.NoErr(err)                                         // listed
		is.Equal(len(got), 2)                                 // active, live, this environment's
		is.Equal(got[0].ID, third.ID)                         // primary first
		is.True(got[0].Primary)                               // flagged primary
		is.Equal(got[1].ID, first.ID)                         // then oldest
		is.Equal(got[0].Credentials.Value("apiKey"), "key-1") // credentials decrypted
		is.Equal(got[0].Credentials.Value("appSid"), "app-1") // all of them
		is.Equal(got[0].Channel, "email")                     // channel present
		is.True(got[0].Identifier != "")                      // identifier present
		is.Equal(got[0].ProviderID, "postmark")               // providerId present
	})

	t.Run("OKAfterWrite", func(t *testing.T) {
		is := is.New(t)
		_, err := store.ActiveIntegrations(ctx, dev, "email")
		is.NoErr(err)                                                                                // read, and cached
		is.Equal(srv.Dev.Do(t, "PUT", "/v1/integrations/"+first.ID, `{"active":false}`).Status, 200) // deactivated
		docs, err := store.ActiveIntegrations(ctx, dev, "email")
		is.NoErr(err)                                                                               // read again
		is.Equal(len(docs), 1)                                                                      // the write is seen, not the cached answer
		is.Equal(srv.Dev.Do(t, "PUT", "/v1/integrations/"+first.ID, `{"active":true}`).Status, 200) // active again
		docs, err = store.ActiveIntegrations(ctx, dev, "email")
		is.NoErr(err)          // and again
		is.Equal(len(docs), 2) // back
	})

	t.Run("OKEmpty", func(t *testing.T) {
		is := is.New(t)
		docs, err := store.ActiveIntegrations(ctx, dev, "push")
		is.NoErr(err)          // an empty channel is no error
		is.Equal(len(docs), 0) // nothing there
		ok, err := store.HasActiveIntegration(ctx, dev, "push")
		is.NoErr(err) // query works
		is.True(!ok)  // no active push integration
		ok, err = store.HasActiveIntegration(ctx, dev, "email")
		is.NoErr(err) // query works
		is.True(ok)   // an active email integration
	})
}

func TestNewStore_ErrEmptySecret(t *testing.T) {
	is := is.New(t)
	_, err := integrations.NewStore(&sqldb.DB{}, nil)
	is.True(err != nil) // a store without a secret cannot encrypt
}

func TestMigration_UpDown(t *testing.T) {
	is := is.New(t)
	db, err := sqldb.Open(t.Context(), sqldb.MemoryPath)
	is.NoErr(err) // open a fresh database
	defer db.Close()
	is.NoErr(sqldb.Migrate(db, migrations.FS))     // up
	is.NoErr(sqldb.MigrateDown(db, migrations.FS)) // down undoes it
	var n int
	is.NoErr(db.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master WHERE name LIKE 'integrations%'`).Scan(&n)) // schema read
	is.Equal(n, 0)                                                                                                           // the table and its indexes are gone
	is.NoErr(sqldb.Migrate(db, migrations.FS))                                                                               // and up again works
}

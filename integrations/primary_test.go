package integrations_test

import (
	"net/http"
	"testing"

	"github.com/matryer/is"
)

// primaryOf returns the ids of environmentID's primary integrations of channel.
func primaryOf(all []integrationBody, environmentID, channel string) []string {
	var ids []string
	for _, in := range all {
		if in.EnvironmentID == environmentID && in.Channel == channel && in.Primary {
			ids = append(ids, in.ID)
		}
	}
	return ids
}

func TestIntegration_Primary(t *testing.T) {
	srv, _ := newServer(t)
	is := is.New(t)
	dev := srv.App.Development.ID
	const creds = `"credentials":{"apiKey":"k","from":"a@b.c"}`
	inactive := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email",`+creds+`}`)
	is.True(!inactive.Primary) // an inactive integration does not take primary
	first := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`)
	is.True(first.Primary) // the first active email integration becomes primary
	second := mustCreate(t, srv.Dev, `{"providerId":"resend","channel":"email","active":true,`+creds+`}`)
	is.True(!second.Primary) // a second active one does not
	chat := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat","active":true}`)
	is.True(!chat.Primary) // chat has no primary
	prod := mustCreate(t, srv.Prod, `{"providerId":"sendgrid","channel":"email","active":true,`+creds+`}`)
	is.True(prod.Primary) // primary is per environment

	res := srv.Dev.Do(t, "POST", "/v1/integrations/"+second.ID+"/set-primary", "")
	is.Equal(res.Status, http.StatusOK) // set-primary answers 200
	var out integrationBody
	res.Decode(t, &out)
	is.True(out.Primary) // the target is primary
	all := list(t, srv.Dev, "/v1/integrations/active")
	is.Equal(primaryOf(all, dev, "email"), []string{second.ID}) // one primary per channel per environment
	prodNow, _ := byID(list(t, srv.Dev, "/v1/integrations"), prod.ID)
	is.True(prodNow.Primary) // Production's primary is untouched

	res = srv.Dev.Do(t, "POST", "/v1/integrations/"+second.ID+"/set-primary", "")
	is.Equal(res.Status, http.StatusOK) // setting it again is harmless

	res = srv.Dev.Do(t, "POST", "/v1/integrations/"+inactive.ID+"/set-primary", "")
	is.Equal(res.Status, http.StatusOK) // an inactive integration can be made primary
	res.Decode(t, &out)
	is.True(out.Active && out.Primary) // and is activated, as the reference does
	all = list(t, srv.Dev, "/v1/integrations")
	is.Equal(primaryOf(all, dev, "email"), []string{inactive.ID}) // the previous primary lost the flag

	// Deleting the primary hands the flag to the oldest other active one.
	res = srv.Dev.Do(t, "DELETE", "/v1/integrations/"+inactive.ID, "")
	is.Equal(res.Status, http.StatusOK) // deleted
	all = list(t, srv.Dev, "/v1/integrations")
	is.Equal(primaryOf(all, dev, "email"), []string{first.ID}) // primary moved on delete

	// Deactivating the primary hands it over too.
	res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+first.ID, `{"active":false}`)
	is.Equal(res.Status, http.StatusOK) // deactivated
	res.Decode(t, &out)
	is.True(!out.Primary) // an inactive integration is not primary
	all = list(t, srv.Dev, "/v1/integrations")
	is.Equal(primaryOf(all, dev, "email"), []string{second.ID}) // the remaining active one took over

	// Conditions on the primary take the flag away, as in the reference.
	res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+second.ID, `{"conditions":[{"isNegated":false,"type":"TEXT","value":"AND","children":[]}]}`)
	is.Equal(res.Status, http.StatusOK) // conditions set
	res.Decode(t, &out)
	is.True(!out.Primary) // no longer primary
	all = list(t, srv.Dev, "/v1/integrations")
	is.Equal(len(primaryOf(all, dev, "email")), 0) // no other candidate: no primary

	t.Run("ErrChannelWithoutPrimary", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations/"+chat.ID+"/set-primary", "")
		is.Equal(res.Status, http.StatusUnprocessableEntity) // chat has no primary
		var service string
		for _, in := range list(t, srv.Dev, "/v1/integrations/active") {
			if in.Channel == "in_app" {
				service = in.ID
			}
		}
		res = srv.Dev.Do(t, "POST", "/v1/integrations/"+service+"/set-primary", "")
		is.Equal(res.Status, http.StatusUnprocessableEntity) // in_app has no primary
	})

	t.Run("ErrMissingCredentials", func(t *testing.T) {
		is := is.New(t)
		bare := mustCreate(t, srv.Dev, `{"providerId":"sendgrid","channel":"email"}`)
		res := srv.Dev.Do(t, "POST", "/v1/integrations/"+bare.ID+"/set-primary", "")
		is.Equal(res.Status, http.StatusUnprocessableEntity) // activating needs the provider's credentials
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/integrations/zzz/set-primary", "")
		is.Equal(res.Status, http.StatusNotFound) // malformed id
		res = srv.Prod.Do(t, "POST", "/v1/integrations/"+second.ID+"/set-primary", "")
		is.Equal(res.Status, http.StatusNotFound) // another environment's integration
	})
}

func TestIntegration_Delete(t *testing.T) {
	srv, _ := newServer(t)
	is := is.New(t)
	keep := mustCreate(t, srv.Dev, `{"providerId":"slack","channel":"chat"}`)
	gone := mustCreate(t, srv.Dev, `{"providerId":"discord","channel":"chat","identifier":"reuse-me"}`)
	other := mustCreate(t, srv.Prod, `{"providerId":"discord","channel":"chat"}`)

	res := srv.Dev.Do(t, "DELETE", "/v1/integrations/"+gone.ID, "")
	is.Equal(res.Status, http.StatusOK) // delete answers 200
	var remaining []integrationBody
	res.Decode(t, &remaining)
	is.Equal(len(remaining), 2) // the environment's service and slack integrations
	_, ok := byID(remaining, keep.ID)
	is.True(ok) // the kept one is listed
	_, ok = byID(remaining, gone.ID)
	is.True(!ok) // the deleted one is not
	_, ok = byID(remaining, other.ID)
	is.True(!ok) // another environment's is not either

	_, ok = byID(list(t, srv.Dev, "/v1/integrations"), gone.ID)
	is.True(!ok) // the list never shows deleted rows
	res = srv.Dev.Do(t, "DELETE", "/v1/integrations/"+gone.ID, "")
	is.Equal(res.Status, http.StatusNotFound) // a second delete is 404
	res = srv.Dev.Do(t, "PUT", "/v1/integrations/"+gone.ID, `{"name":"back"}`)
	is.Equal(res.Status, http.StatusNotFound) // a deleted integration cannot be updated

	var deletedBy, deletedAt string
	err := srv.App.DB.QueryRowContext(t.Context(),
		`SELECT deleted_by, deleted_at FROM integrations WHERE id = ? AND deleted = 1`, gone.ID).Scan(&deletedBy, &deletedAt)
	is.NoErr(err)                                         // the row is kept, soft-deleted
	is.Equal(deletedBy, srv.App.Development.SystemUserID) // deletedBy is the key's user
	is.True(deletedAt != "")                              // deletedAt is set

	again := mustCreate(t, srv.Dev, `{"providerId":"discord","channel":"chat","identifier":"reuse-me"}`)
	is.Equal(again.Identifier, "reuse-me") // a deleted integration's identifier is free again

	res = srv.Prod.Do(t, "DELETE", "/v1/integrations/"+keep.ID, "")
	is.Equal(res.Status, http.StatusOK) // delete by id works across the organization (docs/api.md, "Keys and environments")
	res.Decode(t, &remaining)
	_, ok = byID(remaining, other.ID)
	is.True(ok) // the answer lists the caller's environment

	for _, id := range []string{"aaaaaaaaaaaaaaaaaaaaaaaa", "x"} {
		res = srv.Dev.Do(t, "DELETE", "/v1/integrations/"+id, "")
		is.Equal(res.Status, http.StatusNotFound) // unknown or malformed id
	}
}

package platform_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

func TestEnvironments_Me(t *testing.T) {
	srv := platformtest.NewServer(t, nil)
	type environment struct {
		ID             string  `json:"_id"`
		Name           string  `json:"name"`
		Identifier     string  `json:"identifier"`
		OrganizationID string  `json:"_organizationId"`
		ParentID       *string `json:"_parentId"`
		APIKeys        []struct {
			Key    string `json:"key"`
			UserID string `json:"_userId"`
		} `json:"apiKeys"`
	}
	for _, tc := range []struct {
		name   string
		client platformtest.Client
		want   platform.Environment
		key    string
	}{
		{"OK Development", srv.Dev, srv.App.Development, platformtest.DevKey},
		{"OK Production", srv.Prod, srv.App.Production, platformtest.ProdKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var e environment
			res := tc.client.Do(t, "GET", "/v1/environments/me", "")
			is.Equal(res.Status, 200) // answered
			res.Decode(t, &e)
			is.Equal(e.ID, tc.want.ID)                                           // the key's own environment
			is.Equal(e.Name, tc.want.Name)                                       // by name
			is.Equal(e.Identifier, tc.want.Identifier)                           // with its public identifier
			is.Equal(e.OrganizationID, tc.want.OrganizationID)                   // and organization
			is.Equal(e.ParentID != nil, tc.want.ParentID != "")                  // Production's parent is Development
			is.Equal(len(e.APIKeys), 1)                                          // its one key
			is.True(strings.HasSuffix(e.APIKeys[0].Key, tc.key[len(tc.key)-4:])) // by its last four characters
			is.True(!strings.Contains(e.APIKeys[0].Key, tc.key[:8]))             // never whole
		})
	}
	t.Run("ErrNoKey", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.WithKey("").Do(t, "GET", "/v1/environments/me", "").Status, 401) // no key, no environment
	})
}

func TestEnvironments_APIKeys(t *testing.T) {
	is := is.New(t)
	srv := platformtest.NewServer(t, nil)
	type key struct {
		Key    string `json:"key"`
		UserID string `json:"_userId"`
	}
	var keys []key
	res := srv.Dev.Do(t, "GET", "/v1/environments/api-keys", "")
	is.Equal(res.Status, 200) // answered
	res.Decode(t, &keys)
	is.Equal(len(keys), 1)                                                                    // Development's one key
	is.True(strings.HasSuffix(keys[0].Key, platformtest.DevKey[len(platformtest.DevKey)-4:])) // shown by its last four characters
	is.True(keys[0].UserID != "")                                                             // with its owner

	_, k, err := platform.CreateAPIKey(context.Background(), srv.App.DB, platform.Development, srv.App.Secret, time.Now())
	is.NoErr(err) // a second key
	srv.Dev.Do(t, "GET", "/v1/environments/api-keys", "").Decode(t, &keys)
	is.Equal(len(keys), 2) // both listed
	_, err = platform.RevokeAPIKey(context.Background(), srv.App.DB, k.ID, time.Now())
	is.NoErr(err) // revoked
	srv.Dev.Do(t, "GET", "/v1/environments/api-keys", "").Decode(t, &keys)
	is.Equal(len(keys), 1) // a revoked key is left out
	srv.Prod.Do(t, "GET", "/v1/environments/api-keys", "").Decode(t, &keys)
	is.True(strings.HasSuffix(keys[0].Key, platformtest.ProdKey[len(platformtest.ProdKey)-4:]))  // each environment its own
	is.Equal(srv.Dev.WithKey("wrong").Do(t, "GET", "/v1/environments/api-keys", "").Status, 401) // a bad key sees none
}

package subscribers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// tenantV1JSON is a v1 tenant on the wire.
type tenantV1JSON struct {
	ID            string         `json:"_id"`
	Identifier    string         `json:"identifier"`
	Name          string         `json:"name"`
	Data          map[string]any `json:"data"`
	EnvironmentID string         `json:"_environmentId"`
	CreatedAt     string         `json:"createdAt"`
	UpdatedAt     string         `json:"updatedAt"`
}

func TestTenantsV1(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		var acme tenantV1JSON
		mustDo(t, c, "POST", "/v1/tenants", `{"identifier":"acme","name":"Acme","data":{"tier":"gold"}}`, 201, &acme)
		is.Equal(acme.Identifier, "acme")                    // the identifier
		is.Equal(acme.Name, "Acme")                          // the name
		is.Equal(acme.Data["tier"], "gold")                  // the data
		is.Equal(acme.Data["name"], nil)                     // without the name
		is.Equal(acme.EnvironmentID, srv.App.Development.ID) // in the environment

		// It is the tenant context a trigger names.
		var ctxv2 struct {
			Type string         `json:"type"`
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		}
		mustDo(t, c, "GET", "/v2/contexts/tenant/acme", "", 200, &ctxv2)
		is.Equal(ctxv2.Data["name"], "Acme") // the name kept in the context's data
		mustDo(t, c, "POST", "/v2/contexts", `{"type":"tenant","id":"initech","data":{"name":"Initech"}}`, 201, nil)
		var initech tenantV1JSON
		mustDo(t, c, "GET", "/v1/tenants/initech", "", 200, &initech)
		is.Equal(initech.Name, "Initech") // a context made by v2 reads as a tenant

		srv.App.Clock.Advance(time.Second)
		var got tenantV1JSON
		mustDo(t, c, "PATCH", "/v1/tenants/acme", `{"identifier":"acme-inc","name":"Acme Inc"}`, 200, &got)
		is.Equal(got.Identifier, "acme-inc")                         // renamed
		is.Equal(got.Name, "Acme Inc")                               // new name
		is.Equal(got.Data["tier"], "gold")                           // data kept
		is.Equal(got.ID, acme.ID)                                    // the same tenant
		is.True(got.UpdatedAt > acme.UpdatedAt)                      // stamped
		is.Equal(c.Do(t, "GET", "/v1/tenants/acme", "").Status, 404) // the old identifier is gone
		mustDo(t, c, "PATCH", "/v1/tenants/acme-inc", `{"data":{"tier":"silver"}}`, 200, &got)
		is.Equal(got.Data["tier"], "silver") // data replaced
		is.Equal(got.Name, "Acme Inc")       // name kept

		var page struct {
			Data     []tenantV1JSON `json:"data"`
			Page     int            `json:"page"`
			PageSize int            `json:"pageSize"`
			HasMore  bool           `json:"hasMore"`
		}
		mustDo(t, c, "GET", "/v1/tenants?limit=1", "", 200, &page)
		is.Equal(page.PageSize, 1) // one on the page
		is.True(page.HasMore)      // another waits
		mustDo(t, c, "GET", "/v1/tenants?page=1&limit=1", "", 200, &page)
		is.True(!page.HasMore) // the last page
		mustDo(t, c, "POST", "/v2/contexts", `{"type":"app","id":"web"}`, 201, nil)
		mustDo(t, c, "GET", "/v1/tenants", "", 200, &page)
		is.Equal(page.PageSize, 2) // other context types are not tenants

		res := c.Do(t, "DELETE", "/v1/tenants/acme-inc", "")
		is.Equal(res.Status, 204)                                        // deleted
		is.Equal(c.Do(t, "GET", "/v1/tenants/acme-inc", "").Status, 404) // gone
	})

	t.Run("OtherEnvironmentInvisible", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Prod.Do(t, "GET", "/v1/tenants/initech", "").Status, 404)    // not Production's
		is.Equal(srv.Prod.Do(t, "DELETE", "/v1/tenants/initech", "").Status, 404) // nor deletable there
	})

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"ErrCreateNoIdentifier", "POST", "/v1/tenants", `{"name":"X"}`, 422, "identifier"},
		{"ErrCreateBadIdentifier", "POST", "/v1/tenants", `{"identifier":"a b","name":"X"}`, 422, "identifier"},
		{"ErrCreateNoName", "POST", "/v1/tenants", `{"identifier":"x"}`, 422, "name"},
		{"ErrCreateDataNotObject", "POST", "/v1/tenants", `{"identifier":"x","name":"X","data":[1]}`, 422, "data"},
		{"ErrCreateTaken", "POST", "/v1/tenants", `{"identifier":"initech","name":"X"}`, 409, ""},
		{"ErrCreateNotJSON", "POST", "/v1/tenants", `{`, 400, ""},
		{"ErrListBadLimit", "GET", "/v1/tenants?limit=0", "", 422, ""},
		{"ErrListBadPage", "GET", "/v1/tenants?page=x", "", 400, ""},
		{"ErrGetUnknown", "GET", "/v1/tenants/nobody", "", 404, ""},
		{"ErrGetBadIdentifier", "GET", "/v1/tenants/a%20b", "", 404, ""},
		{"ErrUpdateUnknown", "PATCH", "/v1/tenants/nobody", `{"name":"X"}`, 404, ""},
		{"ErrUpdateBadIdentifier", "PATCH", "/v1/tenants/initech", `{"identifier":"a/b"}`, 422, "identifier"},
		{"ErrUpdateDataNotObject", "PATCH", "/v1/tenants/initech", `{"data":"x"}`, 422, "data"},
		{"ErrDeleteUnknown", "DELETE", "/v1/tenants/nobody", "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status) // refused with the right status
			if tc.field != "" {
				var e errorJSON
				is.NoErr(json.Unmarshal(res.Body, &e))
				_, ok := e.Errors[tc.field]
				is.True(ok) // the field is named
			}
		})
	}

	t.Run("ErrRenameTaken", func(t *testing.T) {
		is := is.New(t)
		mustDo(t, c, "POST", "/v1/tenants", `{"identifier":"hooli","name":"Hooli"}`, 201, nil)
		res := c.Do(t, "PATCH", "/v1/tenants/hooli", `{"identifier":"initech"}`)
		is.Equal(res.Status, 409)                                     // another tenant has it
		is.True(strings.Contains(string(res.Body), "initech"))        // named
		is.Equal(c.Do(t, "GET", "/v1/tenants/hooli", "").Status, 200) // nothing changed
	})
}

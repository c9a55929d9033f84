package subscribers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// contextBody is a context as the wire shows it.
type contextBody struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Data      map[string]any `json:"data"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
}

type contextPage struct {
	Data             []contextBody `json:"data"`
	Next             *string       `json:"next"`
	Previous         *string       `json:"previous"`
	TotalCount       int           `json:"totalCount"`
	TotalCountCapped bool          `json:"totalCountCapped"`
}

func TestContexts_CRUD(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev

	res := c.Do(t, "POST", "/v2/contexts", `{"type":"tenant","id":"acme","data":{"name":"Acme","plan":"pro"}}`)
	is.Equal(res.Status, http.StatusCreated) // created
	var got contextBody
	res.Decode(t, &got)
	is.Equal(got.Type, "tenant")       // its type
	is.Equal(got.ID, "acme")           // its id
	is.Equal(got.Data["name"], "Acme") // its data
	is.True(got.CreatedAt != "")       // stamped
	res = c.Do(t, "POST", "/v2/contexts", `{"type":"tenant","id":"globex"}`)
	is.Equal(res.Status, http.StatusCreated) // data is optional
	var bare contextBody
	res.Decode(t, &bare)
	is.Equal(len(bare.Data), 0) // and empty
	is.Equal(c.Do(t, "POST", "/v2/contexts", `{"type":"app","id":"jira"}`).Status, http.StatusCreated)

	var one contextBody
	c.Do(t, "GET", "/v2/contexts/tenant/acme", "").Decode(t, &one)
	is.Equal(one.Data["plan"], "pro") // read back

	res = c.Do(t, "PATCH", "/v2/contexts/tenant/acme", `{"data":{"name":"Acme Inc"}}`)
	is.Equal(res.Status, http.StatusOK) // updated
	var patched contextBody
	res.Decode(t, &patched)
	is.Equal(patched.Data["name"], "Acme Inc") // new data
	is.Equal(patched.Data["plan"], nil)        // replaced, not merged

	var page contextPage
	c.Do(t, "GET", "/v2/contexts?limit=2", "").Decode(t, &page)
	is.Equal(page.TotalCount, 3)      // every context counted
	is.Equal(len(page.Data), 2)       // a page of two
	is.True(page.Next != nil)         // with a next cursor
	is.Equal(page.Data[0].ID, "jira") // newest first
	var rest contextPage
	c.Do(t, "GET", "/v2/contexts?limit=2&after="+*page.Next, "").Decode(t, &rest)
	is.Equal(len(rest.Data), 1)       // the last one
	is.Equal(rest.Data[0].ID, "acme") // in order
	is.True(rest.Previous != nil)     // with the way back
	c.Do(t, "GET", "/v2/contexts?search=tenant:", "").Decode(t, &page)
	is.Equal(page.TotalCount, 2) // searched by key
	c.Do(t, "GET", "/v2/contexts?id=jira", "").Decode(t, &page)
	is.Equal(page.TotalCount, 1) // by id

	is.Equal(c.Do(t, "DELETE", "/v2/contexts/tenant/globex", "").Status, http.StatusNoContent)  // deleted
	is.Equal(c.Do(t, "GET", "/v2/contexts/tenant/globex", "").Status, http.StatusNotFound)      // gone
	is.Equal(srv.Prod.Do(t, "GET", "/v2/contexts/tenant/acme", "").Status, http.StatusNotFound) // contexts are per environment
}

func TestContexts_Errors(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev
	c.Do(t, "POST", "/v2/contexts", `{"type":"tenant","id":"acme"}`)
	big := `{"type":"tenant","id":"big","data":{"x":"` + strings.Repeat("a", 70<<10) + `"}}`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"ErrNoType", "POST", "/v2/contexts", `{"id":"x"}`, 422, "type"},
		{"ErrBadId", "POST", "/v2/contexts", `{"type":"tenant","id":"a:b"}`, 422, "id"},
		{"ErrDataNotObject", "POST", "/v2/contexts", `{"type":"tenant","id":"x","data":[1]}`, 422, "data"},
		{"ErrDataTooLarge", "POST", "/v2/contexts", big, 422, "data"},
		{"ErrTaken", "POST", "/v2/contexts", `{"type":"tenant","id":"acme"}`, 409, "tenant:acme"},
		{"ErrNotFound", "GET", "/v2/contexts/tenant/nope", "", 404, "tenant:nope"},
		{"ErrBadPath", "GET", "/v2/contexts/ten%20ant/x", "", 422, "type"},
		{"ErrUpdateNoData", "PATCH", "/v2/contexts/tenant/acme", `{}`, 422, "data"},
		{"ErrUpdateNullData", "PATCH", "/v2/contexts/tenant/acme", `{"data":null}`, 422, "data"},
		{"ErrUpdateNotFound", "PATCH", "/v2/contexts/tenant/nope", `{"data":{}}`, 404, "tenant:nope"},
		{"ErrDeleteNotFound", "DELETE", "/v2/contexts/tenant/nope", "", 404, "tenant:nope"},
		{"ErrCursor", "GET", "/v2/contexts?after=forged", "", 422, "after"},
		{"ErrLimit", "GET", "/v2/contexts?limit=1000", "", 422, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status)                      // the status
			is.True(strings.Contains(string(res.Body), tc.want)) // the message names the problem
		})
	}
}

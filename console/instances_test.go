package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// TestConsole_SessionsSharedByInstances runs two Herald instances on one
// PostgreSQL database, as a load balancer spreads a team's browser over
// them: a session begun on one works on the other, its forms' token too,
// and a sign-out on either ends it on both at once.
func TestConsole_SessionsSharedByInstances(t *testing.T) {
	servers := apptest.NewInstances(t, 2)
	a, b := servers[0], servers[1]
	is := is.New(t)
	onA := member(t, a, "ada@example.com", platform.RoleEditor)
	aURL, _ := url.Parse(a.URL + "/console/")
	bURL, _ := url.Parse(b.URL + "/console/")
	onB := newBrowser(t, b) // a jar of its own: B's sign-out clears B's copy of the cookie only
	onB.client.Jar.SetCookies(bURL, onA.client.Jar.Cookies(aURL))

	is.Equal(onB.get(devURL(b)).status, http.StatusOK) // the session begun on A opens B
	onB.csrf = onA.csrf
	res := onB.post(devURL(b, "topics"), url.Values{"key": {"shared"}, "name": {"Shared"}})
	is.Equal(res.status, http.StatusSeeOther)                              // and B takes its token
	is.Equal(onA.get(devURL(a, "topics", "shared")).status, http.StatusOK) // what B wrote, A reads

	is.Equal(onB.post("/console/logout", nil).status, http.StatusSeeOther) // signed out on B
	is.True(len(onA.client.Jar.Cookies(aURL)) > 0)                         // A's browser still holds the cookie
	is.Equal(onA.get(devURL(a)).status, http.StatusSeeOther)               // which A refuses at once
}

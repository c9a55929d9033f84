package console_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// leastRole is who may use each state-changing route of the console
// (docs/console.md, "Roles"): the policy this test holds the routes to.
var leastRole = map[string]platform.Role{
	"POST /console/login":   "", // before a session: nothing to gate
	"POST /console/setup":   "",
	"POST /console/logout":  platform.RoleViewer,
	"POST /console/account": platform.RoleViewer,

	"POST /console/env/{env}/subscribers/{subscriberId}/profile":                platform.RoleEditor,
	"POST /console/env/{env}/subscribers/{subscriberId}/credentials":            platform.RoleEditor,
	"POST /console/env/{env}/subscribers/{subscriberId}/credentials/remove":     platform.RoleEditor,
	"POST /console/env/{env}/subscribers/{subscriberId}/preferences":            platform.RoleEditor,
	"POST /console/env/{env}/subscribers/{subscriberId}/schedule":               platform.RoleEditor,
	"POST /console/env/{env}/subscribers/{subscriberId}/topics":                 platform.RoleEditor,
	"POST /console/env/{env}/topics":                                            platform.RoleEditor,
	"POST /console/env/{env}/topics/{key}/rename":                               platform.RoleEditor,
	"POST /console/env/{env}/topics/{key}/delete":                               platform.RoleEditor,
	"POST /console/env/{env}/topics/{key}/members":                              platform.RoleEditor,
	"POST /console/env/{env}/workflows/{workflowId}/active":                     platform.RoleEditor,
	"POST /console/env/{env}/workflows/{workflowId}/sync":                       platform.RoleEditor,
	"POST /console/env/{env}/workflows/{workflowId}/edit":                       platform.RoleEditor,
	"POST /console/env/{env}/workflows/{workflowId}/preview":                    platform.RoleViewer, // renders, saves nothing
	"POST /console/env/{env}/workflows/{workflowId}/versions/{version}/restore": platform.RoleEditor,
	"POST /console/env/{env}/workflows/{workflowId}/test":                       platform.RoleEditor,

	"POST /console/env/{env}/contexts/{type}/{id}":        platform.RoleEditor,
	"POST /console/env/{env}/contexts/{type}/{id}/delete": platform.RoleEditor,

	"POST /console/env/{env}/webhooks":                                     platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}":                                platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}/delete":                         platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}/secret":                         platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}/test":                           platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}/replay":                         platform.RoleAdmin,
	"POST /console/env/{env}/webhooks/{id}/deliveries/{deliveryId}/replay": platform.RoleAdmin,
	"POST /console/env/{env}/integrations":                                 platform.RoleAdmin,
	"POST /console/env/{env}/integrations/check":                           platform.RoleAdmin,
	"POST /console/env/{env}/integrations/{id}":                            platform.RoleAdmin,
	"POST /console/env/{env}/integrations/{id}/active":                     platform.RoleAdmin,
	"POST /console/env/{env}/integrations/{id}/primary":                    platform.RoleAdmin,
	"POST /console/env/{env}/integrations/{id}/delete":                     platform.RoleAdmin,
	"POST /console/env/{env}/keys":                                         platform.RoleAdmin,
	"POST /console/env/{env}/keys/{id}/revoke":                             platform.RoleAdmin,
	"POST /console/team":                                                   platform.RoleAdmin,
	"POST /console/team/{id}/role":                                         platform.RoleAdmin,
	"POST /console/team/{id}/access":                                       platform.RoleAdmin,
	"POST /console/team/{id}/remove":                                       platform.RoleAdmin,
}

var routeLine = regexp.MustCompile(`mux\.Handle\("((?:GET|POST) [^"]+)", (?:c\.handle\((\w+),|c\.open\(|handleAsset)`)

// consoleRoutes reads routes.go: each route and the role it is served to.
func consoleRoutes(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range routeLine.FindAllStringSubmatch(string(src), -1) {
		out[m[1]] = m[2]
	}
	if len(out) < 30 {
		t.Fatalf("found %d routes in routes.go: the scan is broken", len(out))
	}
	return out
}

func TestConsole_RolesGateEveryAction(t *testing.T) {
	routes := consoleRoutes(t)
	for pattern, role := range routes {
		if !strings.HasPrefix(pattern, "POST ") {
			continue
		}
		want, ok := leastRole[pattern]
		if !ok {
			t.Errorf("%s changes something, and this test does not say who may: add it to leastRole", pattern)
			continue
		}
		if string(want) != role && want != "" {
			t.Errorf("%s is served to %s, but is meant for %s", pattern, role, want)
		}
	}

	srv := apptest.NewServer(t)
	seed(t, srv)
	browsers := map[platform.Role]*browser{
		platform.RoleViewer: member(t, srv, "viewer@example.com", platform.RoleViewer),
		platform.RoleEditor: member(t, srv, "editor@example.com", platform.RoleEditor),
		platform.RoleAdmin:  member(t, srv, "admin@example.com", platform.RoleAdmin),
	}
	for _, pattern := range sortedKeys(leastRole) {
		need := leastRole[pattern]
		if need == "" || pattern == "POST /console/logout" {
			continue // the session's own end is every member's; TestSession_EndsAtOnce signs out
		}
		for _, role := range platform.Roles {
			t.Run(string(role)+" "+pattern, func(t *testing.T) {
				is := is.New(t)
				path := strings.NewReplacer("{env}", srv.App.Development.ID, "{subscriberId}", "ada", "{key}", "beta",
					"{workflowId}", "welcome", "{id}", "000000000000000000000000", "{version}", "1",
					"{type}", "tenant", "{deliveryId}", "000000000000000000000000").Replace(strings.TrimPrefix(pattern, "POST "))
				res := browsers[role].post(path, nil)
				if role.Allows(need) {
					is.True(res.status != http.StatusForbidden) // the role may
					is.True(res.status < 500)                   // and an empty form is refused, not a failure
				} else {
					is.Equal(res.status, http.StatusForbidden)                      // the role may not
					is.True(strings.Contains(res.body, "cannot do this: it needs")) // and the page says so
				}
			})
		}
	}
	for _, path := range []string{devURL(srv, "keys"), "/console/team", devURL(srv, "integrations", "new"), devURL(srv, "webhooks")} {
		for _, role := range []platform.Role{platform.RoleViewer, platform.RoleEditor} {
			is.New(t).Equal(browsers[role].get(path).status, http.StatusForbidden) // an admin's page
		}
		is.New(t).Equal(browsers[platform.RoleAdmin].get(path).status, http.StatusOK) // which an admin sees
	}
}

func TestConsole_EditControlsFollowTheRole(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	for _, tc := range []struct {
		role     platform.Role
		controls bool
	}{{platform.RoleViewer, false}, {platform.RoleEditor, true}} {
		t.Run(string(tc.role), func(t *testing.T) {
			is := is.New(t)
			b := member(t, srv, string(tc.role)+"@example.com", tc.role)
			page := b.get(devURL(srv, "subscribers", "ada")).body
			is.Equal(strings.Contains(page, "Save profile"), tc.controls)     // the profile's save
			is.Equal(strings.Contains(page, "Add to topic"), tc.controls)     // joining a topic
			is.Equal(strings.Contains(page, "Save credentials"), tc.controls) // adding credentials
			is.Equal(strings.Contains(b.get(devURL(srv, "topics")).body, "Create topic"), tc.controls)
			is.True(!strings.Contains(b.get(devURL(srv, "integrations")).body, "New integration")) // an admin's only
		})
	}
}

// TestConsole_DocsListEveryRoute fails when a route is registered and not
// in the routes table of docs/console.md, or listed there and not
// registered.
func TestConsole_DocsListEveryRoute(t *testing.T) {
	doc, err := os.ReadFile("../docs/console.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Routes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:GET|POST) /[^`]*)`").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	routes := consoleRoutes(t)
	for r := range routes {
		if !listed[r] {
			t.Errorf("%s is registered but missing from the routes of docs/console.md", r)
		}
	}
	for r := range listed {
		if _, ok := routes[r]; !ok {
			t.Errorf("docs/console.md lists %s, which routes.go does not register", r)
		}
	}
}

package console

import (
	"net/http"

	"github.com/herald-notify/herald/platform"
)

const (
	viewer = platform.RoleViewer
	editor = platform.RoleEditor
	admin  = platform.RoleAdmin
)

// addRoutes registers every console route, one line each, with the least
// role that may use it: the console's whole surface (docs/console.md).
func (c *console) addRoutes(mux *http.ServeMux) {
	d := c.d
	mux.Handle("GET /console/assets/{name}", handleAsset())
	mux.Handle("GET /console/login", c.open(handleSignInForm(d)))
	mux.Handle("POST /console/login", c.open(handleSignIn(d)))
	mux.Handle("GET /console/setup", c.open(handleSetupForm(d)))
	mux.Handle("POST /console/setup", c.open(handleSetup(d)))
	mux.Handle("POST /console/logout", c.handle(viewer, handleSignOut(d)))
	mux.Handle("GET /console/account", c.handle(viewer, handleAccount()))
	mux.Handle("POST /console/account", c.handle(viewer, handlePasswordChange(d)))
	mux.Handle("GET /console/{$}", c.handle(viewer, handleHome()))
	mux.Handle("GET /console/switch", c.handle(viewer, handleSwitch()))
	mux.Handle("/console/", c.handle(viewer, handleNotFound()))

	mux.Handle("GET /console/team", c.handle(admin, handleTeam(d)))
	mux.Handle("POST /console/team", c.handle(admin, handleTeamAdd(d)))
	mux.Handle("POST /console/team/{id}/role", c.handle(admin, handleTeamRole(d)))
	mux.Handle("POST /console/team/{id}/access", c.handle(admin, handleTeamAccess(d)))
	mux.Handle("POST /console/team/{id}/remove", c.handle(admin, handleTeamRemove(d)))

	mux.Handle("GET /console/env/{env}/{$}", c.handle(viewer, handleOverview(d.Activity, d.Messages)))
}

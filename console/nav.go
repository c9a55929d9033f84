package console

import "github.com/herald-notify/herald/platform"

// navItem is one entry of the console's navigation.
type navItem struct {
	Section string        // the page's section, which its view names to be marked current
	Label   string        // what the link says
	Path    string        // under the environment, or, for Team, under /console/
	Key     string        // the key that, after g, goes there (docs/console.md, "Keyboard")
	Role    platform.Role // the least role that sees it
	Team    bool          // a page of the whole team rather than of an environment
}

// navigation is the console's navigation, in order: the one list a new
// page adds itself to (docs/console.md, "Adding a page").
var navigation = []navItem{
	{Section: "overview", Label: "Overview", Path: "", Key: "o", Role: platform.RoleViewer},
	{Section: "activity", Label: "Activity", Path: "activity", Key: "a", Role: platform.RoleViewer},
	{Section: "subscribers", Label: "Subscribers", Path: "subscribers", Key: "s", Role: platform.RoleViewer},
	{Section: "topics", Label: "Topics", Path: "topics", Key: "t", Role: platform.RoleViewer},
	{Section: "workflows", Label: "Workflows", Path: "workflows", Key: "w", Role: platform.RoleViewer},
	{Section: "layouts", Label: "Layouts", Path: "layouts", Key: "l", Role: platform.RoleViewer},
	{Section: "contexts", Label: "Contexts", Path: "contexts", Key: "c", Role: platform.RoleViewer},
	{Section: "integrations", Label: "Integrations", Path: "integrations", Key: "i", Role: platform.RoleViewer},
	{Section: "webhooks", Label: "Webhooks", Path: "webhooks", Key: "h", Role: platform.RoleAdmin},
	{Section: "keys", Label: "API keys", Path: "keys", Key: "k", Role: platform.RoleAdmin},
	{Section: "team", Label: "Team", Path: "team", Key: "m", Role: platform.RoleAdmin, Team: true},
}

// navLink is a navigation entry as the layout renders it.
type navLink struct {
	navItem
	URL     string
	Current bool
}

// navFor is the navigation a member sees: the entries their role allows,
// pointing into the environment they are in (or the first one, from a
// page of the whole team).
func navFor(v view) []navLink {
	envID := v.Env.ID
	if envID == "" && len(v.Envs) > 0 {
		envID = v.Envs[0].ID
	}
	var out []navLink
	for _, it := range navigation {
		if !v.User.Role.Allows(it.Role) {
			continue
		}
		url := envURL(envID, it.Path)
		if it.Team {
			url = "/console/" + it.Path
		}
		out = append(out, navLink{navItem: it, URL: url, Current: it.Section == v.Section})
	}
	return out
}

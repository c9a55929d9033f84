package console

import (
	"net/http"
	"net/url"

	"github.com/herald-notify/herald/platform"
)

// teamData is what the team page shows.
type teamData struct {
	Members []platform.ConsoleUser
	Roles   []platform.Role
	Form    form
	Shown   *shownOnce // a new member's one-time password or setup link
}

// shownOnce is a secret the page shows this once: it is kept nowhere the
// console could show it again.
type shownOnce struct {
	What  string // "password" or "link"
	Email string
	Value string
}

// handleTeam serves GET /console/team: the members, their roles, and the
// form to add one.
func handleTeam(d *Deps) handler {
	return func(p *page) error { return renderTeam(p, d, form{}, nil, http.StatusOK) }
}

func renderTeam(p *page, d *Deps, f form, shown *shownOnce, status int) error {
	members, err := d.Auth.Accounts().Users(p.r.Context(), p.s.User.OrganizationID)
	if err != nil {
		return err
	}
	return p.renderStatus(status, "team", "team", "Team", teamData{Members: members, Roles: platform.Roles, Form: f, Shown: shown})
}

// handleTeamAdd serves POST /console/team: a new member, who signs in with
// a one-time password or sets their own through a setup link, either shown
// once in the answer.
func handleTeamAdd(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		role, _ := platform.ParseRole(f.Value("role"))
		n := platform.NewConsoleUser{Email: f.Value("email"), Name: f.Value("name"), Role: role}
		if f.Value("access") != "link" {
			n.Password, n.OneTime = platform.GeneratePassword(), true
		}
		accounts := d.Auth.Accounts()
		u, err := accounts.Create(p.r.Context(), p.s.User.OrganizationID, n)
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderTeam(p, d, f, nil, http.StatusUnprocessableEntity)
		}
		shown, err := access(p, d, u, n.Password)
		if err != nil {
			return err
		}
		return renderTeam(p, d, form{}, shown, http.StatusOK)
	}
}

// access is how a member gets in, shown once: the one-time password given,
// or a new setup link when there is none.
func access(p *page, d *Deps, u platform.ConsoleUser, pw string) (*shownOnce, error) {
	if pw != "" {
		return &shownOnce{What: "password", Email: u.Email, Value: pw}, nil
	}
	token, err := d.Auth.Accounts().InviteLink(p.r.Context(), u.OrganizationID, u.ID)
	if err != nil {
		return nil, err
	}
	return &shownOnce{What: "link", Email: u.Email, Value: origin(p.r) + "/console/setup?token=" + url.QueryEscape(token)}, nil
}

// origin is where the member's browser reached the console, for a link to
// it: the Origin its form was posted from (checked to be the console's
// own), else the request's host.
func origin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		return o
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// handleTeamRole serves POST /console/team/{id}/role.
func handleTeamRole(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		role, _ := platform.ParseRole(f.Value("role"))
		u, err := d.Auth.Accounts().SetRole(p.r.Context(), p.s.User.OrganizationID, p.r.PathValue("id"), role)
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderTeam(p, d, f, nil, http.StatusConflict)
		}
		return p.redirect("/console/team", u.Name+" is now "+string(u.Role)+".")
	}
}

// handleTeamAccess serves POST /console/team/{id}/access: a new one-time
// password (their sessions end) or a new setup link, shown once.
func handleTeamAccess(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		accounts := d.Auth.Accounts()
		org := p.s.User.OrganizationID
		u, err := accounts.User(p.r.Context(), org, p.r.PathValue("id"))
		if err != nil {
			return err
		}
		pw := ""
		if f.Value("access") != "link" {
			pw = platform.GeneratePassword()
			if err := accounts.SetPassword(p.r.Context(), org, u.ID, pw, true); err != nil {
				return err
			}
		}
		shown, err := access(p, d, u, pw)
		if err != nil {
			return err
		}
		return renderTeam(p, d, form{}, shown, http.StatusOK)
	}
}

// handleTeamRemove serves POST /console/team/{id}/remove: the member's
// sessions end at once.
func handleTeamRemove(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		u, err := d.Auth.Accounts().Remove(p.r.Context(), p.s.User.OrganizationID, p.r.PathValue("id"))
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderTeam(p, d, f, nil, http.StatusConflict)
		}
		return p.redirect("/console/team", u.Name+" was removed from the team.")
	}
}

package console

import (
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// open serves h without a session: the sign-in and setup pages. A form
// they post must come from the console's own origin, as every form must;
// it has no session's token to carry yet.
func (c *console) open(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &page{c: c, w: w, r: r}
		err := error(nil)
		if r.Method != http.MethodGet {
			err = c.d.Auth.CheckOrigin(r)
		}
		if err == nil {
			err = h(p)
		}
		if err != nil {
			c.fail(p, err)
		}
	})
}

// signInData is what the sign-in page shows.
type signInData struct {
	Form  form
	Next  string
	Empty bool // the team has no member yet: only a setup link opens the console
}

// handleSignInForm serves GET /console/login.
func handleSignInForm(d *Deps) handler {
	return func(p *page) error {
		if _, err := d.Auth.Session(p.r); err == nil {
			return p.redirect(safeNext(p.r.URL.Query().Get("next")), "")
		}
		found, err := d.Auth.Accounts().Any(p.r.Context())
		if err != nil {
			return err
		}
		return p.render("login", "", "Sign in", signInData{Form: form{}, Next: p.r.URL.Query().Get("next"), Empty: !found})
	}
}

// handleSignIn serves POST /console/login: a right email and password
// start a session; a wrong one shows the form again, and past the limits
// of failed attempts every attempt waits (platform.ConsoleAuth.SignIn).
func handleSignIn(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		_, err := d.Auth.SignIn(p.w, p.r, f.Value("email"), f.Raw("password"))
		var e *platform.Error
		switch {
		case err == nil:
			return p.redirect(safeNext(f.Value("next")), "")
		case errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusTooManyRequests):
			for k, vs := range e.Header {
				p.w.Header()[k] = vs
			}
			f.Problem = e.Message
			return p.renderStatus(e.Status, "login", "", "Sign in", signInData{Form: f, Next: f.Value("next")})
		}
		return err
	}
}

// handleSignOut serves POST /console/logout: the session ends on every
// instance at once.
func handleSignOut(d *Deps) handler {
	return func(p *page) error {
		if err := d.Auth.SignOut(p.w, p.r); err != nil {
			return err
		}
		http.Redirect(p.w, p.r, "/console/login", http.StatusSeeOther)
		return nil
	}
}

// setupData is what the setup page shows: the first admin's form, or a
// member's, whose email the link names.
type setupData struct {
	Form   form
	Token  string
	Member platform.ConsoleUser // zero for the first admin
	Gone   bool                 // the link was used, expired or never was
}

// handleSetupForm serves GET /console/setup?token=…: the page a setup link
// opens.
func handleSetupForm(d *Deps) handler {
	return func(p *page) error {
		token := p.r.URL.Query().Get("token")
		data := setupData{Form: form{}, Token: token}
		if token == "" {
			data.Gone = true
		} else {
			u, err := d.Auth.Accounts().LinkUser(p.r.Context(), token)
			switch {
			case errors.Is(err, platform.ErrLinkUsed):
				data.Gone = true
			case err != nil:
				return err
			}
			data.Member = u
		}
		// The token is in the address: no request from this page may send
		// it on to another site.
		p.w.Header().Set("Referrer-Policy", "no-referrer")
		return p.render("setup", "", "Set up your account", data)
	}
}

// handleSetup serves POST /console/setup: spends the link, sets the
// password (and, for the first admin, creates the account) and signs in.
func handleSetup(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		token := f.Value("token")
		accounts := d.Auth.Accounts()
		member, err := accounts.LinkUser(p.r.Context(), token)
		if errors.Is(err, platform.ErrLinkUsed) {
			return p.renderStatus(http.StatusGone, "setup", "", "Set up your account", setupData{Gone: true})
		}
		if err != nil {
			return err
		}
		data := setupData{Form: f, Token: token, Member: member}
		if f.Raw("password") != f.Raw("confirm") {
			f.fail("confirm", "does not match the password")
			data.Form = f
			return p.renderStatus(http.StatusUnprocessableEntity, "setup", "", "Set up your account", data)
		}
		u, err := accounts.UseLink(p.r.Context(), token, platform.NewConsoleUser{Email: f.Value("email"),
			Name: f.Value("name"), Password: f.Raw("password")})
		if err != nil {
			if !f.refused(err) {
				return err
			}
			data.Form, data.Gone = f, errors.Is(err, platform.ErrLinkUsed)
			return p.renderStatus(http.StatusUnprocessableEntity, "setup", "", "Set up your account", data)
		}
		if err := d.Auth.StartSession(p.w, p.r, u); err != nil {
			return err
		}
		return p.redirect("/console/", "Welcome to Herald, "+u.Name+".")
	}
}

// handleAccount serves GET /console/account: who the member is, and the
// form to change their password.
func handleAccount() handler {
	return func(p *page) error {
		return p.render("account", "", "Your account", struct{ Form form }{form{}})
	}
}

// handlePasswordChange serves POST /console/account: a new password, given
// the current one (unless the member signed in with a one-time password,
// which they must replace). Every other session of theirs ends.
func handlePasswordChange(d *Deps) handler {
	return func(p *page) error {
		f := newForm(p.r)
		u := p.s.User
		accounts := d.Auth.Accounts()
		if !u.MustChangePassword {
			if _, err := accounts.Authenticate(p.r.Context(), u.Email, f.Raw("current")); err != nil {
				f.fail("current", "is not your current password")
			}
		}
		if f.Raw("password") != f.Raw("confirm") {
			f.fail("confirm", "does not match the new password")
		}
		if !f.Invalid() {
			err := accounts.SetPassword(p.r.Context(), u.OrganizationID, u.ID, f.Raw("password"), false)
			if err == nil {
				u.MustChangePassword = false
				if err := d.Auth.StartSession(p.w, p.r, u); err != nil {
					return err
				}
				return p.redirect("/console/account", "Your password is changed; your other sessions are signed out.")
			}
			if !f.refused(err) {
				return err
			}
		}
		return p.renderStatus(http.StatusUnprocessableEntity, "account", "", "Your account", struct{ Form form }{f})
	}
}

// handleHome serves GET /console/: the environment the member saw last, or
// the first.
func handleHome() handler {
	return func(p *page) error {
		to := p.envs[0].ID
		if c, err := p.r.Cookie("herald_env"); err == nil {
			for _, e := range p.envs {
				if e.ID == c.Value {
					to = e.ID
				}
			}
		}
		http.Redirect(p.w, p.r, envURL(to), http.StatusFound)
		return nil
	}
}

// handleSwitch serves GET /console/switch?env=…&section=…: the switcher's
// answer, the same section in the environment chosen.
func handleSwitch() handler {
	return func(p *page) error {
		q := p.r.URL.Query()
		for _, e := range p.envs {
			if e.ID != q.Get("env") {
				continue
			}
			for _, it := range navigation {
				if it.Section == q.Get("section") && !it.Team {
					http.Redirect(p.w, p.r, envURL(e.ID, it.Path), http.StatusSeeOther)
					return nil
				}
			}
			http.Redirect(p.w, p.r, envURL(e.ID), http.StatusSeeOther)
			return nil
		}
		return platform.NotFound("There is no such environment")
	}
}

// handleNotFound serves every other path under /console/.
func handleNotFound() handler {
	return func(p *page) error { return platform.NotFound("There is no page at %s", p.r.URL.Path) }
}

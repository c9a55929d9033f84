package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// page is one request to a console page, as its handler sees it: the
// member's session and the environment the page acts in.
type page struct {
	c    *console
	w    http.ResponseWriter
	r    *http.Request
	s    platform.ConsoleSession
	env  platform.Environment // zero on a page of the whole team
	envs []platform.Environment
}

// handler is a console page's handler. It renders a page, redirects, or
// returns an error, which handle shows as the error page.
type handler func(p *page) error

// tenant is who the page acts for in the domains: the environment, and the
// member as the user.
func (p *page) tenant() platform.Tenant {
	return platform.Tenant{OrganizationID: p.env.OrganizationID, EnvironmentID: p.env.ID, UserID: p.s.User.ID}
}

// render writes the page name, titled title, in the layout, with data.
func (p *page) render(name, section, title string, data any) error {
	return p.renderStatus(http.StatusOK, name, section, title, data)
}

func (p *page) renderStatus(status int, name, section, title string, data any) error {
	v := view{Title: title, Section: section, User: p.s.User, CSRF: p.s.CSRF, Env: p.env, Envs: p.envs,
		Flash: takeFlash(p.w, p.r), Path: p.r.URL.Path, Data: data}
	return p.c.pages.render(p.w, status, name, v)
}

// redirect answers a form with 303 See Other to path, where the next page
// shows message as a flash, so a reload does not post the form again.
func (p *page) redirect(path, message string) error {
	if message != "" {
		setFlash(p.w, flashOK, message)
	}
	http.Redirect(p.w, p.r, path, http.StatusSeeOther)
	return nil
}

// envURL is the path of a page of the page's environment.
func (p *page) envURL(parts ...string) string { return envURL(p.env.ID, parts...) }

// handle serves h to members whose role is at least need, in the
// environment of the path's {env} when it has one: the one place a page's
// session, role, environment and errors are dealt with.
func (c *console) handle(need platform.Role, h handler) http.Handler {
	return c.d.Auth.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := platform.ConsoleSessionFrom(r.Context())
		p := &page{c: c, w: w, r: r, s: s}
		if err := c.serve(p, need, h); err != nil {
			c.fail(p, err)
		}
	}), c.refuse)
}

func (c *console) serve(p *page, need platform.Role, h handler) error {
	ctx := p.r.Context()
	if p.s.User.MustChangePassword && p.r.URL.Path != "/console/account" {
		setFlash(p.w, flashWarn, "Choose your own password to go on: the one you signed in with works only once.")
		http.Redirect(p.w, p.r, "/console/account", http.StatusSeeOther)
		return nil
	}
	envs, err := platform.Environments(ctx, c.d.DB, p.s.User.OrganizationID)
	if err != nil {
		return err
	}
	p.envs = envs
	if id := p.r.PathValue("env"); id != "" {
		found := false
		for _, e := range envs {
			if e.ID == id {
				p.env, found = e, true
			}
		}
		if !found {
			return platform.NotFound("There is no such environment")
		}
		platform.NoteRoute(ctx, p.r.Pattern, id)
		rememberEnv(p.w, id)
	}
	if !p.s.User.Role.Allows(need) {
		return platform.Errorf(http.StatusForbidden, "Your role, %s, cannot do this: it needs %s", p.s.User.Role, need)
	}
	return h(p)
}

// fail shows err as the error page: its message for an error meant for
// the member (a 4xx), an id to quote for anything else, whose cause goes
// to the log only.
func (c *console) fail(p *page, err error) {
	var e *platform.Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, platform.ErrNotFound):
		e = platform.NotFound("This page does not exist")
	default:
		id := platform.NoteFailure(p.r.Context(), err)
		e = &platform.Error{Status: http.StatusInternalServerError,
			Message: "Something went wrong on Herald's side. Its log has the cause under the id " + id + "."}
	}
	for k, vs := range e.Header {
		p.w.Header()[k] = vs
	}
	data := struct {
		Status  int
		Heading string
		Message string
	}{e.Status, http.StatusText(e.Status), e.Message}
	if rerr := p.renderStatus(e.Status, "error", "", http.StatusText(e.Status), data); rerr != nil {
		http.Error(p.w, e.Message, e.Status)
	}
}

// refuse answers a request the platform's guard refused: without a
// session, to the sign-in page (for htmx, by its redirect header); a
// forged one with the error page.
func (c *console) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *platform.Error
	if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
		to := "/console/login"
		if r.Method == http.MethodGet && r.URL.Path != "/console/" {
			to += "?next=" + url.QueryEscape(r.URL.RequestURI())
		}
		if r.Header.Get("HX-Request") == "true" {
			w.Header().Set("HX-Redirect", to)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	c.fail(&page{c: c, w: w, r: r}, err)
}

// safeNext is where to go after signing in: a console path given by the
// sign-in link, never another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/console/"
	}
	return next
}

// rememberEnv keeps the environment last seen, for /console/ to open.
func rememberEnv(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{Name: "herald_env", Value: id, Path: "/console", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// listProblem tells a list's refused query from a failure: for a 4xx, its
// problem and status, which the page shows above an empty list; anything
// else comes back as failed, for the error page.
func listProblem(err error) (problem string, status int, failed error) {
	var e *platform.Error
	switch {
	case err == nil:
		return "", http.StatusOK, nil
	case errors.As(err, &e) && e.Status < 500:
		return problemOf(e), e.Status, nil
	}
	return "", 0, err
}

// withDefaults is q with the parameters of defaults it does not set: the
// query a page hands the domain.
func withDefaults(q url.Values, defaults url.Values) url.Values {
	out := url.Values{}
	for k, vs := range defaults {
		out[k] = vs
	}
	for k, vs := range q {
		out[k] = vs
	}
	return out
}

package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// flash is a one-line message a page shows once, after the redirect that
// answered a form.
type flash struct {
	Kind    string // ok, warn or error
	Message string
}

const (
	flashOK   = "ok"
	flashWarn = "warn"
)

const flashCookie = "herald_flash"

// setFlash leaves a message for the next page. It never carries a secret:
// what is shown once (a new key, a password) is rendered in the answer to
// the form itself.
func setFlash(w http.ResponseWriter, kind, message string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(kind + "|" + message), Path: "/console",
		MaxAge: 60, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// takeFlash reads the message left for this page, and clears it.
func takeFlash(w http.ResponseWriter, r *http.Request) flash {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return flash{}
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Path: "/console", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	v, _ := url.QueryUnescape(c.Value)
	kind, msg, ok := strings.Cut(v, "|")
	if !ok || (kind != flashOK && kind != flashWarn) {
		return flash{}
	}
	return flash{Kind: kind, Message: msg}
}

// form is a submitted form, to show again with what was typed and what is
// wrong with it: each field's problem, by the field's name, which is the
// JSON path the domain names it by, and a problem of the whole.
type form struct {
	Values  url.Values
	Errors  map[string]string
	Problem string
}

// newForm returns the form r posted.
func newForm(r *http.Request) form {
	r.ParseForm()
	return form{Values: r.PostForm, Errors: map[string]string{}}
}

// Value is what the field holds.
func (f form) Value(name string) string { return strings.TrimSpace(f.Values.Get(name)) }

// Raw is what the field holds, spaces and all (a password).
func (f form) Raw(name string) string { return f.Values.Get(name) }

// Checked reports whether the checkbox name was ticked.
func (f form) Checked(name string) bool { return f.Values.Get(name) != "" }

// Has reports whether one of the field's values is value: a box ticked
// among several of the same name.
func (f form) Has(name, value string) bool { return slices.Contains(f.Values[name], value) }

// Error is the field's problem, or "".
func (f form) Error(name string) string { return f.Errors[name] }

// Invalid reports whether anything is wrong with the form.
func (f form) Invalid() bool { return len(f.Errors) > 0 || f.Problem != "" }

// refused takes in err as the form's problems when it is a 4xx the member
// can fix: a 422's fields, or any other client error's message. It
// reports false for anything else, which the error page shows.
func (f *form) refused(err error) bool {
	var e *platform.Error
	if !errors.As(err, &e) || e.Status >= 500 || e.Status == http.StatusForbidden || e.Status == http.StatusTooManyRequests {
		return false
	}
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f.Errors[name] = strings.Join(e.Fields[name].Messages, "; ")
	}
	if len(e.Fields) == 0 {
		f.Problem = e.Message
	}
	return true
}

// fail adds a problem to the field name.
func (f *form) fail(name, problem string) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	f.Errors[name] = problem
}

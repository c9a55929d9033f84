package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// The console's templates: the layout and the shared components, and one
// page each under pages/.
//
//go:embed templates
var templateFS embed.FS

// pages are the parsed templates, one per page, each with the layout and
// the components.
type pages map[string]*template.Template

// mustParsePages parses every page once at start; a broken template stops
// the start rather than a request.
func mustParsePages() pages {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/components.html"))
	files, err := fs.Glob(templateFS, "templates/pages/*.html")
	if err != nil {
		panic(err)
	}
	out := pages{}
	for _, f := range files {
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFS, f))
		out[strings.TrimSuffix(path.Base(f), ".html")] = t
	}
	return out
}

// view is what the layout renders: the page's own data in Data, and what
// every page shows around it.
type view struct {
	Title   string
	Section string // the navigation item the page belongs to
	User    platform.ConsoleUser
	CSRF    string
	Env     platform.Environment // zero on pages of the whole team
	Envs    []platform.Environment
	Flash   flash
	Path    string // the page's path, for the environment switcher
	Data    any
}

// Can reports whether the member may do what needs role: the layout hides
// the controls of what they may not (the server refuses it anyway).
func (v view) Can(role string) bool { return v.User.Role.Allows(platform.Role(role)) }

// EnvURL is the path of a page of the current environment.
func (v view) EnvURL(parts ...string) string { return envURL(v.Env.ID, parts...) }

// Nav is the navigation as the member sees it (nav.go).
func (v view) Nav() []navLink { return navFor(v) }

func envURL(envID string, parts ...string) string {
	p := "/console/env/" + envID + "/"
	if len(parts) > 0 {
		p += strings.Join(parts, "/")
	}
	return p
}

// render writes the page name with v as a complete HTML response. The page
// is executed into a buffer first, so a template error becomes the error
// page instead of half a page.
func (ps pages) render(w http.ResponseWriter, status int, name string, v view) error {
	t, ok := ps[name]
	if !ok {
		return fmt.Errorf("no page template %q", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := buf.WriteTo(w)
	return err
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"asset":     assetURL,
	"icon":      icon,
	"when":      when,
	"lastFour":  lastFour,
	"tone":      tone,
	"channel":   channelName,
	"pretty":    prettyJSON,
	"join":      strings.Join,
	"hasPrefix": strings.HasPrefix,
	"initial":   initial,
	"plural":    plural,
	"dict":      dict,
	"envURL":    envURL,
	"list":      func(v ...string) []string { return v },
	"add":       func(a, b int) int { return a + b },
	"pct":       pct,
	"isTest":    activity.IsTest,

	"subscriberName": subscriberName,
	"fingerprint":    fingerprint,
	"deref":          func(p *string) string { return derefString(p) },
	"has":            func(m map[string]bool, k string) bool { _, ok := m[k]; return ok },
	"capitalize":     capitalize,
}

// capitalize is s with its first letter in upper case: a weekday's name.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// subscriberName is a subscriber's first and last name, as far as it has
// them.
func subscriberName(s subscribers.Subscriber) string {
	var parts []string
	for _, p := range []*string{s.FirstName, s.LastName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	return strings.Join(parts, " ")
}

// pct is n as a whole percentage of total, for a bar's width.
func pct(n, total int) int {
	if total <= 0 {
		return 0
	}
	return n * 100 / total
}

// when is a timestamp as the page shows it: in UTC as written, which the
// console's script turns into the viewer's zone, with how long ago it was
// (docs/console.md, "Times").
func when(ts string) template.HTML {
	t, err := sqldb.ParseTime(ts)
	if ts == "" || err != nil {
		return template.HTML(`<span class="muted">—</span>`)
	}
	utc := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" data-ago title="%s">%s</time>`,
		utc.Format(time.RFC3339Nano), utc.Format("2006-01-02 15:04:05 UTC"), utc.Format("2006-01-02 15:04 UTC")))
}

// lastFour is how a secret shows once saved: its last four characters.
func lastFour(secret string) string {
	if secret == "" {
		return ""
	}
	r := []rune(secret)
	if len(r) <= 8 {
		return "••••"
	}
	return "••••" + string(r[len(r)-4:])
}

// tone is the colour of a status: ok, warn, error, info or muted.
func tone(status string) string {
	switch strings.ToLower(status) {
	case "completed", "success", "succeeded", "sent", "active", "delivered", "read":
		return "ok"
	case "failed", "error", "canceled":
		return "error"
	case "warning", "pending", "queued", "delayed", "running", "inactive":
		return "warn"
	case "merged", "skipped", "readconfirmation":
		return "info"
	}
	return "muted"
}

// channelNames are the channels as people call them.
var channelNames = map[string]string{"in_app": "In-app", "email": "Email", "sms": "SMS", "chat": "Chat", "push": "Push",
	"delay": "Delay", "digest": "Digest", "throttle": "Throttle", "trigger": "Trigger", "custom": "Custom"}

func channelName(c string) string {
	if n, ok := channelNames[c]; ok {
		return n
	}
	return c
}

// prettyJSON indents a JSON document for reading; anything else comes back
// as it is.
func prettyJSON(raw any) string {
	var b []byte
	switch v := raw.(type) {
	case json.RawMessage:
		b = v
	case string:
		b = []byte(v)
	default:
		b, _ = json.Marshal(v)
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// initial is the first letter of a name, for an avatar.
func initial(s string) string {
	for _, r := range strings.TrimSpace(s) {
		return strings.ToUpper(string(r))
	}
	return "?"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// dict makes a map of its key and value arguments, so a template can pass
// several values to a component.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		m[k] = kv[i+1]
	}
	return m
}

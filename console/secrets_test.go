package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

var (
	hrefs   = regexp.MustCompile(`(?:href|src)="(/console/[^"#]*)"`)
	secrets = map[string]string{
		"the Development API key":       platformtest.DevKey,
		"the Production API key":        platformtest.ProdKey,
		"the server's secret":           platformtest.Secret,
		"an integration's API key":      "SG.super-secret-sendgrid-key-7Qx9",
		"an integration's webhook URL":  "https://hooks.example.com/secret-path-Zp4w/email",
		"an integration's password":     "smtp-password-secret-Lm2k",
		"a subscriber's webhook URL":    "https://hooks.slack.com/services/T0/B0/secret-slack-Jh8r",
		"a subscriber's device token":   "device-token-secret-one-Kd3v",
		"another of its device tokens":  "device-token-secret-two-Wq6b",
		"a member's one-time password":  "",
		"a member's setup link's token": "",
		"a key made in the console":     "",
		"a webhook's signing secret":    "",
	}
)

// TestConsole_SecretsNeverShownInFull stores secrets of every kind, then
// reads every page an admin can reach from /console/ and checks that none
// holds one: a secret shows by its last four characters, and what is shown
// once (a new key, a one-time password, a setup link) only in the answer
// that made it.
func TestConsole_SecretsNeverShownInFull(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	seed(t, srv)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/integrations", `{"providerId":"sendgrid","channel":"email","credentials":{"apiKey":"SG.super-secret-sendgrid-key-7Qx9","from":"a@example.com"}}`},
		{"POST", "/v1/integrations", `{"providerId":"email-webhook","channel":"email","credentials":{"webhookUrl":"https://hooks.example.com/secret-path-Zp4w/email"}}`},
		{"POST", "/v1/integrations", `{"providerId":"nodemailer","channel":"email","credentials":{"host":"smtp.example.com","port":"587","from":"a@example.com","password":"smtp-password-secret-Lm2k"}}`},
		{"PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"slack","credentials":{"webhookUrl":"https://hooks.slack.com/services/T0/B0/secret-slack-Jh8r"}}`},
		{"PATCH", "/v1/subscribers/ada/credentials", `{"providerId":"fcm","credentials":{"deviceTokens":["device-token-secret-one-Kd3v","device-token-secret-two-Wq6b"]}}`},
	} {
		res := srv.Dev.Do(t, c.method, c.path, c.body)
		is.True(res.Status < 300) // stored
	}
	admin := member(t, srv, "admin@example.com", platform.RoleAdmin)

	// What is shown once is in the answer that made it, and nowhere after.
	res := admin.post(devURL(srv, "keys"), nil)
	secrets["a key made in the console"] = shownOnce(t, res)
	res = admin.post("/console/team", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "role": {"viewer"}, "access": {"password"}})
	secrets["a member's one-time password"] = shownOnce(t, res)
	res = admin.post("/console/team", url.Values{"name": {"Cy"}, "email": {"cy@example.com"}, "role": {"editor"}, "access": {"link"}})
	link, _ := url.Parse(shownOnce(t, res))
	secrets["a member's setup link's token"] = link.Query().Get("token")
	res = admin.post(devURL(srv, "webhooks"), url.Values{"url": {"https://example.com/hook"}, "allEvents": {"true"}})
	secrets["a webhook's signing secret"] = shownOnce(t, res)
	for what, s := range secrets {
		is.True(len(s) >= 12) // each secret is known, for the scan: what
		_ = what
	}

	seen := map[string]bool{}
	queue := []string{"/console/"}
	for len(queue) > 0 && len(seen) < 400 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		page := admin.get(path)
		for page.status == http.StatusFound || page.status == http.StatusSeeOther {
			page = admin.get(page.location)
		}
		if page.status != http.StatusOK {
			t.Errorf("%s answered %d", path, page.status)
			continue
		}
		body := html.UnescapeString(page.body)
		for what, secret := range secrets {
			for _, form := range []string{secret, url.QueryEscape(secret)} {
				if strings.Contains(body, form) || strings.Contains(page.body, form) {
					t.Errorf("%s shows %s in full", path, what)
				}
			}
		}
		for _, m := range hrefs.FindAllStringSubmatch(page.body, -1) {
			next := html.UnescapeString(m[1])
			if strings.HasPrefix(next, "/console/assets/") || strings.Contains(next, "/logout") {
				continue
			}
			queue = append(queue, next)
		}
	}
	is.True(len(seen) > 15) // the crawl reached the pages
	for _, must := range []string{devURL(srv, "integrations"), devURL(srv, "subscribers", "ada"), devURL(srv, "keys"), "/console/team",
		devURL(srv, "webhooks")} {
		is.True(seen[must]) // among them the ones that hold secrets: must
	}
	accounts := srv.Console.Accounts()
	_, err := accounts.Authenticate(context.Background(), "bob@example.com", secrets["a member's one-time password"])
	is.NoErr(err) // the password shown once was the real one
}

// shownOnce is the secret a page shows once.
func shownOnce(t *testing.T, res response) string {
	t.Helper()
	m := regexp.MustCompile(`<code id="shown-secret">([^<]+)</code>`).FindStringSubmatch(res.body)
	if m == nil {
		t.Fatalf("the answer shows no secret: %d\n%s", res.status, res.body)
	}
	return html.UnescapeString(m[1])
}

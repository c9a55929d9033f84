package provider

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestCatalog_Documented: docs/providers.md has a row for every provider.
func TestCatalog_Documented(t *testing.T) {
	is := is.New(t)
	doc, err := os.ReadFile("../../docs/providers.md")
	is.NoErr(err) // the page exists
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` |"); ok && strings.HasPrefix(line, "| `") {
			rows[id] = line
		}
	}
	for _, ch := range []string{"email", "sms", "push", "chat", "in_app"} {
		for _, id := range Supported(ch) {
			row, ok := rows[id]
			if !ok {
				t.Errorf("docs/providers.md has no row for %s", id)
				continue
			}
			info, _ := Lookup(id)
			if dials := !strings.HasSuffix(row, "| shape |"); dials != info.Dials {
				t.Errorf("docs/providers.md says %s's check dials: %v; it does: %v", id, dials, info.Dials)
			}
		}
	}
}

// TestReason: a refusal's message is the provider's own reason where its
// answer has one.
func TestReason(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"errors":[{"message":"The from address does not match a verified Sender Identity","field":"from"}]}`, "The from address does not match a verified Sender Identity"},
		{`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`, "Requested entity was not found."},
		{`{"code":21211,"message":"The 'To' number is not a valid phone number.","status":400}`, "The 'To' number is not a valid phone number."},
		{`{"reason":"BadDeviceToken"}`, "BadDeviceToken"},
		{`invalid_payload`, "invalid_payload"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			is := is.New(t)
			r := &reply{body: []byte(tc.body)}
			json.Unmarshal(r.body, &r.doc)
			is.Equal(reason(r), tc.want) // the provider's words
		})
	}
}

func TestFields_NameCredentials(t *testing.T) {
	known := map[string]bool{}
	var c Credentials
	for name := range c.pointers() {
		known[name] = true
	}
	for name := range c.switches() {
		known[name] = true
	}
	for id, s := range catalog {
		fields := Fields(id)
		for i, f := range fields {
			if !known[f.Name] {
				t.Errorf("%s: field %q is no credential", id, f.Name)
			}
			if f.Required != slices.Contains(s.required, f.Name) {
				t.Errorf("%s: field %q says required %v", id, f.Name, f.Required)
			}
			if i > 0 && f.Required && !fields[i-1].Required {
				t.Errorf("%s: the required fields do not come first", id)
			}
		}
		for _, r := range s.required {
			if !slices.ContainsFunc(fields, func(f Field) bool { return f.Name == r }) {
				t.Errorf("%s: required %q is not among its fields", id, r)
			}
		}
	}
	if f := Fields("sendgrid"); !slices.ContainsFunc(f, func(f Field) bool { return f.Name == "apiKey" && f.Secret }) {
		t.Errorf("sendgrid's apiKey is not a secret field: %+v", f)
	}
}

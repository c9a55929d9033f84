package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// TestReadme_ListsEveryRoute fails when a route registered on a mux is
// missing from the README's endpoint table, or the table lists a route no
// code registers. A new route needs its `METHOD /path` in the row of its area.
func TestReadme_ListsEveryRoute(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := listedRoutes(string(readme))
	var registered []string
	for pattern := range platformtest.RegisteredRoutes(t) {
		registered = append(registered, pattern)
	}
	if len(registered) == 0 {
		t.Fatal("no registered route found: the scan for mux.Handle calls is broken")
	}
	for _, r := range registered {
		if !slices.Contains(listed, r) {
			t.Errorf("route %q is registered but missing from the README's endpoint table", r)
		}
	}
	for _, r := range listed {
		if !slices.Contains(registered, r) {
			t.Errorf("the README lists %q, which no code registers", r)
		}
	}
}

// listedRoute is one route in the endpoint table: `GET /v1/x`.
var listedRoute = regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /[^`]*)`")

// listedRoutes returns "METHOD /path" for every route the table rows of
// the README's "Endpoints" section name.
func listedRoutes(readme string) []string {
	_, section, _ := strings.Cut(readme, "\n## Endpoints\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range listedRoute.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// TestReadme_FirstNotification runs the commands of the README's "A first
// notification", read from README.md as printed, against a fresh server,
// with the key the server printed and the server's address put in, and
// waits for the notification in the subscriber's feed, as the README says
// it arrives.
func TestReadme_FirstNotification(t *testing.T) {
	is := is.New(t)
	script := readmeBlock(t, "## A first notification")
	base, stderr, _ := startRun(t, map[string]string{"HERALD_DB": ":memory:"})
	printed := printedKey.FindStringSubmatch(stderr.String()) // main_test.go
	is.True(printed != nil && printed[1] == "Development")    // the first start prints the Development key first
	sent, answers := runScript(t, script, base, printed[2])
	is.True(len(sent) >= 2) // the README sends requests, the last one reading the feed
	for i, req := range sent {
		if req.URL.Path == "/v1/events/trigger" {
			is.True(strings.Contains(answers[i], `"status":"processed"`)) // the trigger is processed, not refused as trigger_not_active
		}
	}
	feed := sent[len(sent)-1]
	is.True(strings.HasSuffix(feed.URL.Path, "/notifications/feed")) // the last command reads the feed
	var page struct {
		Data []struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	platformtest.Eventually(t, 5*time.Second, func() bool {
		_, body := send(t, feed)
		return json.Unmarshal([]byte(body), &page) == nil && len(page.Data) > 0
	}, "the notification in the feed")
	is.Equal(len(page.Data), 1)                                   // one message
	is.Equal(page.Data[0].Content, "Hello Ada, order 42 shipped") // rendered as the README says
}

// runScript runs script's commands in order: it keeps its variables, with
// key for KEY, and sends each curl to base; it answers the requests sent
// and the body of each answer, and fails on an answer that is not a
// success.
func runScript(t *testing.T, script, base, key string) (sent []*http.Request, answers []string) {
	t.Helper()
	sh := &shell{src: script, vars: map[string]string{}}
	for {
		words, ok, err := sh.next()
		if err != nil {
			t.Fatalf("the README's commands do not read as sh reads them: %v", err)
		}
		if !ok {
			return sent, answers
		}
		if set, ok := assignments(words); ok {
			for name, value := range set {
				sh.vars[name] = value
			}
			if _, ok := set["KEY"]; ok {
				sh.vars["KEY"] = key
			}
			continue
		}
		req := curlRequest(t, words, base)
		status, body := send(t, req)
		t.Logf("%s %s → %d %.200s", req.Method, req.URL.Path, status, body)
		if status >= 300 {
			t.Fatalf("%s %s answered %d", req.Method, req.URL.Path, status)
		}
		sent, answers = append(sent, req), append(answers, body)
	}
}

// readmeBlock returns the first ```sh block after heading in README.md.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(readme), "\n"+heading+"\n")
	if !found {
		t.Fatalf("README.md has no %q", heading)
	}
	_, block, found := strings.Cut(section, "```sh\n")
	block, _, closed := strings.Cut(block, "\n```")
	if !found || !closed {
		t.Fatalf("no ```sh block under %q", heading)
	}
	return block
}

// curlRequest makes the request a curl command of the README sends
// (-H, -d and -X; -d makes it a POST, as curl does), to base instead of
// the address the README names.
func curlRequest(t *testing.T, words []string, base string) *http.Request {
	t.Helper()
	if words[0] != "curl" {
		t.Fatalf("the README runs %q; the test reads curl commands and assignments only", words)
	}
	method, target, body, header := "GET", "", "", http.Header{}
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			target = w
			continue
		}
		if i+1 == len(words) || !slices.Contains([]string{"-H", "-d", "-X"}, w) {
			t.Fatalf("curl %s: the test reads -H, -d and -X only, each with a value", w)
		}
		i++
		switch w {
		case "-H":
			name, value, _ := strings.Cut(words[i], ":")
			header.Add(name, strings.TrimSpace(value))
		case "-d":
			method, body = "POST", words[i]
		case "-X":
			method = words[i]
		}
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		t.Fatalf("curl %q: no URL", words)
	}
	server, _ := url.Parse(base)
	u.Scheme, u.Host = server.Scheme, server.Host
	req, err := http.NewRequest(method, u.String(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	return req
}

// send sends req, again if need be (its body is rewound), and answers the
// status and the body.
func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// shell reads the few shapes of sh the README's examples are written in:
// NAME=value assignments (export optional) and commands of words, with
// '…' quoted literally, "…" and bare words expanding $NAME, a backslash
// joining a line to the next, ; or a new line ending a command and # a
// comment. Anything else is an error, so an example the test cannot read
// fails instead of being skipped.
type shell struct {
	src  string
	pos  int
	vars map[string]string
}

// next reads the next command's words, expanding variables as they stand
// now (an assignment earlier in the script counts); ok is false at the end.
func (s *shell) next() (words []string, ok bool, err error) {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t':
			s.pos++
		case c == '\n' || c == ';':
			s.pos++
			if len(words) > 0 {
				return words, true, nil
			}
		case c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case strings.HasPrefix(s.src[s.pos:], "\\\n"):
			s.pos += 2
		default:
			w, err := s.word()
			if err != nil {
				return nil, false, err
			}
			words = append(words, w)
		}
	}
	return words, len(words) > 0, nil
}

// word reads one word up to a blank, ; or a new line outside quotes.
func (s *shell) word() (string, error) {
	var b strings.Builder
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case ' ', '\t', '\n', ';':
			return b.String(), nil
		case '\'':
			end := strings.IndexByte(s.src[s.pos+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unclosed ' at %q", s.src[s.pos:])
			}
			b.WriteString(s.src[s.pos+1 : s.pos+1+end])
			s.pos += end + 2
		case '"':
			end := strings.IndexByte(s.src[s.pos+1:], '"')
			if end < 0 {
				return "", fmt.Errorf("unclosed \" at %q", s.src[s.pos:])
			}
			b.WriteString(s.expand(s.src[s.pos+1 : s.pos+1+end]))
			s.pos += end + 2
		case '$':
			n := s.pos + 1 + nameLen(s.src[s.pos+1:])
			b.WriteString(s.expand(s.src[s.pos:n]))
			s.pos = n
		case '\\', '`', '|', '&', '>', '<', '(', ')', '{', '*', '?':
			return "", fmt.Errorf("%.20q… is more shell than the test reads", s.src[s.pos:])
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
	return b.String(), nil
}

// expand replaces each $NAME in text with its value.
func (s *shell) expand(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '$')
		if i < 0 {
			return b.String() + text
		}
		n := nameLen(text[i+1:])
		b.WriteString(text[:i])
		b.WriteString(s.vars[text[i+1:i+1+n]])
		text = text[i+1+n:]
	}
}

// nameLen is the length of the variable name text starts with.
func nameLen(text string) int {
	n := 0
	for n < len(text) && (text[n] == '_' || 'a' <= text[n] && text[n] <= 'z' ||
		'A' <= text[n] && text[n] <= 'Z' || n > 0 && '0' <= text[n] && text[n] <= '9') {
		n++
	}
	return n
}

// assignments returns the NAME=value pairs of a command that only sets
// variables (export in front or not), or false for any other command.
func assignments(words []string) (map[string]string, bool) {
	if len(words) > 0 && words[0] == "export" {
		words = words[1:]
	}
	set := map[string]string{}
	for _, w := range words {
		name, value, found := strings.Cut(w, "=")
		if !found || name == "" || nameLen(name) != len(name) {
			return nil, false
		}
		set[name] = value
	}
	return set, len(set) > 0
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// contentLocales are the recipients' locales in scenario 18, in turn: each
// has its translations, fr_CA through its language's.
var contentLocales = []string{"en_US", "fr_FR", "fr_CA", "de_DE"}

// contentTenants is how many tenant contexts scenario 18's triggers name.
const contentTenants = 100

// contentRun is one side of scenario 18: the workflow, a trigger for
// recipient to and sequence number n, and the pieces every email's html
// holds, so each side is seen to render what it means to.
type contentRun struct {
	name     string
	workflow string
	trigger  func(to, n int) []byte
	want     []string
}

// contentRuns are scenario 18's two sides: the same in-app step and email
// step, plain (no layout, translations off, no context), and with every
// content feature on (the email in the environment's default layout, both
// steps reading {{t.key}} in the recipient's locale and the trigger's
// tenant context's data).
var contentRuns = [2]contentRun{
	{
		name: "plain",
		workflow: `{"name":"Bench content","workflowId":"bench-content","active":true,"isTranslationEnabled":false,"steps":[
			{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"subject":"Order {{payload.n}}","body":"Your order {{payload.n}} has shipped."}},
			{"name":"Mail","stepId":"mail","type":"email","controlValues":{"subject":"Order {{payload.n}}","body":"<p>Your order {{payload.n}} has shipped.</p>","layoutId":null}}]}`,
		trigger: func(to, n int) []byte {
			return fmt.Appendf(nil, `{"name":"bench-content","to":"c%d","payload":{"n":%d}}`, to, n)
		},
		want: []string{"has shipped.</p>"},
	},
	{
		name: "content",
		workflow: `{"name":"Bench content","workflowId":"bench-content","active":true,"isTranslationEnabled":true,"steps":[
			{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"subject":"{{t.subject}}","body":"{{t.shipped}} {{context.tenant.data.name}}"}},
			{"name":"Mail","stepId":"mail","type":"email","controlValues":{"subject":"{{t.subject}}","body":"<p>{{t.shipped}}</p><p>{{context.tenant.data.name}}</p>"}}]}`,
		trigger: func(to, n int) []byte {
			t := n % contentTenants
			return fmt.Appendf(nil, `{"name":"bench-content","to":"c%d","payload":{"n":%d},"context":{"tenant":{"id":"t%d","data":{"name":"Tenant %d"}}}}`, to, n, t, t)
		},
		want: []string{"<!DOCTYPE html>", "has shipped (", "Tenant "},
	},
}

// content runs scenario 18: what a layout, translations and a context
// cost a trigger. Each side runs on a fresh database, A-B-B-A, with its
// emails sent to a receiver in this process; server CPU per trigger counts
// until every email has arrived.
func (b *bench) content(ctx context.Context) error {
	rcv, err := startEmailReceiver()
	if err != nil {
		return err
	}
	defer rcv.srv.Close()
	n := b.sz.triggers / 5
	run := 0
	cpu, err := abba(func(k int) (float64, error) {
		run++
		return b.contentRun(ctx, rcv, contentRuns[k], fmt.Sprintf("content-%d", run), n)
	})
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "18 content", Metric: fmt.Sprintf("server CPU per trigger, in-app and email steps plain (2x%d triggers)", n),
		Value: cpu[0], Unit: "us", Target: "reported"})
	b.rep.add(row{Scenario: "18 content", Metric: "server CPU per trigger, with a layout, translations and a context",
		Value: cpu[1], Unit: "us", Floor: cpu[0], Target: "<= 1.15 of plain", Pass: b.result(cpu[1] <= 1.15*cpu[0])})
	return nil
}

// contentRun sets up one side of scenario 18 on a fresh database and
// returns the server's CPU per trigger over n triggers.
func (b *bench) contentRun(ctx context.Context, rcv *emailReceiver, r contentRun, file string, n int) (float64, error) {
	db, err := b.database(ctx, file)
	if err != nil {
		return 0, err
	}
	srv, c, err := b.serverOn(ctx, db, nil, r.workflow)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	setup := []request{{method: "POST", path: "/v1/integrations", want: 201, body: []byte(`{"providerId":"email-webhook","channel":"email",
		"active":true,"primary":true,"credentials":{"webhookUrl":"` + rcv.url + `","from":"bench@example.com"}}`)}}
	for _, locale := range []string{"en_US", "fr_FR", "de_DE"} {
		setup = append(setup, request{method: "POST", path: "/v2/translations", want: 201, body: []byte(`{"resourceId":"bench-content",
			"resourceType":"workflow","locale":"` + locale + `","content":{"subject":"Order {{payload.n}} (` + locale + `)",
			"shipped":"Your order {{payload.n}} has shipped (` + locale + `)."}}`)})
	}
	for _, req := range setup {
		if status, body, err := c.do(ctx, req); err != nil || status/100 != 2 {
			return 0, fmt.Errorf("scenario 18 setup %s: %d %s %v", req.path, status, body, err)
		}
	}
	made := c.run(ctx, b.sz.clients, b.sz.recipients, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201, body: fmt.Appendf(nil,
			`{"subscriberId":"c%d","firstName":"C%d","email":"c%d@example.com","locale":"%s"}`, i, i, i, contentLocales[i%len(contentLocales)])}
	})
	if made.Errors > 0 {
		return 0, fmt.Errorf("scenario 18 recipients: %s", made)
	}
	// The contexts exist before the clock starts, as a tenant's does
	// after its first notification.
	tenants := c.run(ctx, b.sz.clients, contentTenants, func(i int) request {
		return request{method: "POST", path: "/v2/contexts", want: 201,
			body: fmt.Appendf(nil, `{"type":"tenant","id":"t%d","data":{"name":"Tenant %d"}}`, i, i)}
	})
	if tenants.Errors > 0 {
		return 0, fmt.Errorf("scenario 18 contexts: %s", tenants)
	}

	b.logf("scenario 18: %d triggers, %s", n, r.name)
	rcv.reset()
	cpu0 := srv.cpu()
	sent := c.run(ctx, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/events/trigger", want: 201, body: r.trigger(i%b.sz.recipients, i)}
	})
	if sent.Errors > 0 {
		return 0, fmt.Errorf("scenario 18 %s triggers: %s", r.name, sent)
	}
	if err := rcv.wait(ctx, n); err != nil {
		return 0, fmt.Errorf("scenario 18 %s: %w (%s)", r.name, err, unsentEmail(ctx, c))
	}
	cpu := srv.perRequest(cpu0, sent)
	if _, _, err := waitDelivered(ctx, c, n, 0); err != nil {
		return 0, err
	}
	if bad, html := rcv.lacking(r.want); bad > 0 {
		return 0, fmt.Errorf("scenario 18 %s: %d emails lack %q: %.300s", r.name, bad, r.want, html)
	}
	return cpu, nil
}

// unsentEmail says how many email messages the server stored and why the
// first that was not sent was not, for a run whose emails did not all
// arrive.
func unsentEmail(ctx context.Context, c *loadClient) string {
	total := 0
	for page := 0; ; page++ {
		status, body, err := c.do(ctx, request{method: "GET", path: fmt.Sprintf("/v1/messages?channel=email&limit=1000&page=%d", page)})
		if err != nil || status != 200 {
			return fmt.Sprintf("messages: %d %v", status, err)
		}
		var list struct {
			Data []struct {
				ID        string `json:"_id"`
				Status    string `json:"status"`
				ErrorText string `json:"errorText"`
			} `json:"data"`
			TotalCount int `json:"totalCount"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return err.Error()
		}
		total = list.TotalCount
		for _, m := range list.Data {
			if m.Status != "sent" {
				return fmt.Sprintf("%d email messages stored; %s is %s: %s", total, m.ID, m.Status, m.ErrorText)
			}
		}
		if len(list.Data) < 1000 {
			return fmt.Sprintf("%d email messages stored, every one sent", total)
		}
	}
}

// emailReceiver is the email-webhook integration's endpoint on loopback:
// it counts the emails and keeps the html of the first few, whose content
// a run checks.
type emailReceiver struct {
	srv *http.Server
	url string

	mu     sync.Mutex
	got    int
	htmls  map[string]int // distinct html bodies seen, with counts
	notify chan struct{}
}

func startEmailReceiver() (*emailReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &emailReceiver{url: "http://" + ln.Addr().String(), htmls: map[string]int{}, notify: make(chan struct{}, 1)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *emailReceiver) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var mail struct {
		HTML string `json:"html"`
	}
	json.Unmarshal(b, &mail)
	r.mu.Lock()
	r.got++
	// The html differs by order number only: keep one of each shape.
	if len(r.htmls) < 16 {
		r.htmls[mail.HTML]++
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
}

func (r *emailReceiver) reset() {
	r.mu.Lock()
	r.got, r.htmls = 0, map[string]int{}
	r.mu.Unlock()
}

// wait waits until n emails have arrived, or none for 30 s.
func (r *emailReceiver) wait(ctx context.Context, n int) error {
	last, lastAt := -1, time.Now()
	for {
		r.mu.Lock()
		got := r.got
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		if got != last {
			last, lastAt = got, time.Now()
		}
		if time.Since(lastAt) > 30*time.Second {
			return fmt.Errorf("emails stalled at %d of %d", got, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.notify:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lacking is how many of the sampled emails' html lacks a piece of want,
// and one of them.
func (r *emailReceiver) lacking(want []string) (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	bad, one := 0, ""
	for html, k := range r.htmls {
		for _, w := range want {
			if !strings.Contains(html, w) {
				bad, one = bad+k, html
				break
			}
		}
	}
	return bad, one
}

package activity_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-notify/herald/app/apptest"
)

// BenchmarkTriggerContent measures what a layout, translations and a
// context add to a trigger: the same two-step workflow (in-app, then
// email) sent plain, and with translations on (every control reads a
// {{t.key}} in the subscriber's locale), the email inside the default
// layout, and a tenant context of 100 whose data the templates read.
// cpu-us/op counts the whole process until every email is sent:
//
//	go test -run '^$' -bench TriggerContent -benchtime 2000x ./activity
func BenchmarkTriggerContent(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		benchContent(b, `"isTranslationEnabled":false`,
			`{"body":"Your order {{payload.n}} has shipped."}`,
			`{"subject":"Order {{payload.n}}","body":"<p>Your order {{payload.n}} has shipped.</p>","layoutId":null}`,
			func(i int64) []byte {
				return fmt.Appendf(nil, `{"name":"bench-content","to":"m%d","payload":{"n":%d}}`, i%benchRecipients, i)
			}, `"\u003cp\u003eYour order %has shipped.%`)
	})
	b.Run("content", func(b *testing.B) {
		benchContent(b, `"isTranslationEnabled":true`,
			`{"body":"{{t.shipped}} {{ context.tenant.data.name }}"}`,
			`{"subject":"{{t.subject}}","body":"<p>{{t.shipped}}</p><p>{{ context.tenant.data.name }}</p>"}`,
			func(i int64) []byte {
				return fmt.Appendf(nil, `{"name":"bench-content","to":"m%d","payload":{"n":%d},"context":{"tenant":"t%d"}}`,
					i%benchRecipients, i, i%100)
			}, `%DOCTYPE html%has shipped (%Tenant %`)
	})
}

// benchContent runs one side of BenchmarkTriggerContent: the workflow's
// settings and its two steps' controls, request(i), the i-th trigger, and
// want, a LIKE pattern every email's content matches.
func benchContent(b *testing.B, settings, inApp, email string, request func(i int64) []byte, want string) {
	bench := apptest.StartBench(b)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	b.Cleanup(hook.Close)
	must := func(path, body string) {
		if code := bench.Post(path, []byte(body)); code/100 != 2 {
			b.Fatalf("POST %s: %d", path, code)
		}
	}
	must("/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"`+hook.URL+`","from":"bench@example.com"}}`)
	must("/v2/workflows", `{"name":"Bench content","workflowId":"bench-content","active":true,`+settings+`,"steps":[
		{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":`+inApp+`},
		{"name":"Mail","stepId":"mail","type":"email","controlValues":`+email+`}]}`)
	for _, locale := range []string{"en_US", "fr_FR", "de_DE"} {
		must("/v2/translations", `{"resourceId":"bench-content","resourceType":"workflow","locale":"`+locale+`",
			"content":{"subject":"Order {{payload.n}} (`+locale+`)","shipped":"Your order {{payload.n}} has shipped (`+locale+`)."}}`)
	}
	for i := range 100 {
		must("/v2/contexts", fmt.Sprintf(`{"type":"tenant","id":"t%d","data":{"name":"Tenant %d"}}`, i, i))
	}
	locales := []string{"en_US", "fr_FR", "fr_CA", "de_DE"}
	for i := range benchRecipients {
		must("/v1/subscribers", fmt.Sprintf(`{"subscriberId":"m%d","firstName":"M%d","email":"m%d@example.com","locale":"%s"}`,
			i, i, i, locales[i%len(locales)]))
	}
	var seq atomic.Int64
	b.SetParallelism(32)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if code := bench.Post("/v1/events/trigger", request(seq.Add(1))); code != http.StatusCreated {
				b.Errorf("trigger: %d", code)
				return
			}
		}
	})
	// Every email sent, so that their rendering is in the count.
	deadline := time.Now().Add(5 * time.Minute)
	for bench.Count(b, `SELECT count(*) FROM messages WHERE channel = 'email'`) < seq.Load() {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d emails sent", bench.Count(b, `SELECT count(*) FROM messages WHERE channel = 'email'`), seq.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	if n := bench.Count(b, `SELECT count(*) FROM messages WHERE status <> 'sent'`); n > 0 {
		var channel, status, text string
		bench.Scan(b, `SELECT channel, status, coalesce(error_text, '') FROM messages WHERE status <> 'sent' LIMIT 1`, &channel, &status, &text)
		b.Fatalf("%d messages not sent: %s %s %s", n, channel, status, text)
	}
	// Each side renders what it is meant to: with want, a LIKE pattern of
	// an email's content (the layout, translations and context's data).
	if n := bench.Count(b, `SELECT count(*) FROM messages WHERE channel = 'email' AND content LIKE '`+want+`'`); n != seq.Load() {
		var content string
		bench.Scan(b, `SELECT content FROM messages WHERE channel = 'email' LIMIT 1`, &content)
		b.Fatalf("%d of %d emails are like %s: %.600s", n, seq.Load(), want, content)
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

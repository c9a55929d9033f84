package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// editorVariables is how many payload variables scenario 15's email uses.
const editorVariables = 20

// editorEmail is an email body of about size bytes: paragraphs of text
// that use each of editorVariables payload variables in turn, as an author
// writes a long email.
func editorEmail(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "<p>Line %d of the order mail for {{ payload.v%d }}: the parcel left the warehouse and is on its way to you.</p>\n",
			i, i%editorVariables)
	}
	return b.String()
}

// editor runs scenario 15: the editor's live preview of an email step of
// 50 KB that uses 20 payload variables, sent as the editor sends it while
// the author types (the controls and a payload in each request), by one
// client at a time, so the latency is the server's time.
func (b *bench) editor(ctx context.Context) error {
	srv, err := startServer(ctx, b.bin, filepath.Join(b.dir, "editor.db"))
	if err != nil {
		return err
	}
	defer srv.stop()
	body := editorEmail(50 << 10)
	controls := map[string]any{"subject": "Your order {{ payload.v0 }}", "body": body, "editorType": "html"}
	wf, _ := json.Marshal(map[string]any{"name": "Bench editor", "workflowId": "bench-editor",
		"steps": []any{map[string]any{"name": "Mail", "type": "email", "controlValues": controls}}})
	c := newLoadClient(srv.base, benchKey, 1)
	if status, res, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: wf}); err != nil || status != 201 {
		return fmt.Errorf("create workflow: %d %s %v", status, res, err)
	}
	payload := map[string]any{}
	for i := range editorVariables {
		payload[fmt.Sprintf("v%d", i)] = fmt.Sprintf("value %d", i)
	}
	// Every request a new edit, as each keystroke changes the body: no
	// earlier parse of the whole body can be reused, only those of the
	// parts of it the edit left alone (templates/split.go).
	n := max(b.sz.readRequests/10, 200)
	reqs := make([][]byte, n+1)
	for i := range reqs {
		controls["body"] = body + fmt.Sprintf("<p>edit %d</p>", i)
		reqs[i], _ = json.Marshal(map[string]any{"controlValues": controls, "previewPayload": map[string]any{"payload": payload}})
	}
	// The answer must be the rendered email, not a template error.
	status, res, err := c.do(ctx, request{method: "POST", path: "/v2/workflows/bench-editor/step/mail/preview", body: reqs[n]})
	if err != nil || status != 201 || !strings.Contains(string(res), "value 19") || strings.Contains(string(res), `"error"`) {
		return fmt.Errorf("preview: %d %.300s %v", status, res, err)
	}
	r := c.run(ctx, 1, n, func(i int) request {
		return request{method: "POST", path: "/v2/workflows/bench-editor/step/mail/preview", body: reqs[i], want: 201}
	})
	b.rep.add(row{Scenario: "15 editor", Metric: fmt.Sprintf("preview of a %d KB email step with %d variables, p99 (p50 %s, %d requests, %d errors)",
		len(body)>>10, editorVariables, r.P50.Round(10*time.Microsecond), n, r.Errors),
		Value: ms(r.P99), Unit: "ms", Target: "<= 20 ms", Pass: b.result(r.P99 <= 20*time.Millisecond && r.Errors == 0)})
	return nil
}

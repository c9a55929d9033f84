package messaging_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// wired is a test server with the four domains wired as wire.go wires them,
// so messages embed real subscribers and workflow summaries.
type wired struct {
	srv      *platformtest.Server
	messages *messaging.Store
	flows    *workflows.Store
	subs     *subscribers.Store
}

func newWired(t *testing.T) *wired {
	t.Helper()
	w := &wired{}
	w.srv = platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		ints, err := integrations.NewStore(app.DB, app.Secret)
		if err != nil {
			t.Fatalf("integrations store: %v", err)
		}
		w.flows = workflows.NewStore(app.DB)
		w.subs = subscribers.NewStore(app.DB, ints, app.Clock.Now)
		w.messages = messaging.NewStore(app.DB, messaging.Sources{Subscribers: w.subs, Workflows: w.flows, Integrations: ints}).WithClock(app.Clock.Now)
		for _, env := range []platform.Environment{app.Development, app.Production} {
			if err := ints.SeedEnvironment(t.Context(), env); err != nil {
				t.Fatalf("seed integrations: %v", err)
			}
			if err := w.flows.SeedEnvironment(t.Context(), env); err != nil {
				t.Fatalf("seed workflows: %v", err)
			}
		}
		integrations.AddRoutes(mux, ints)
		subscribers.AddRoutes(mux, w.subs)
		workflows.AddRoutes(mux, w.flows, ints)
		messaging.AddRoutes(mux, w.messages)
	})
	return w
}

// sendStep delivers the step at index of the workflow named workflowID.
func (w *wired) sendStep(t *testing.T, workflowID string, index int, subscriberID, transactionID string, payload any) map[string]any {
	t.Helper()
	return w.send(t, workflowID, index, nil, subscriberID, transactionID, payload)
}

// send is sendStep with the step's controls replaced when controls is not
// nil, for shapes the workflow API does not take (EmailBlock arrays).
func (w *wired) send(t *testing.T, workflowID string, index int, controls map[string]any, subscriberID, transactionID string, payload any) map[string]any {
	t.Helper()
	env := w.srv.App.Development
	raw, err := w.flows.TriggerWorkflowJSON(t.Context(), env.ID, workflowID)
	if err != nil {
		t.Fatalf("workflow %s: %v", workflowID, err)
	}
	var wf struct {
		ID    string `json:"_id"`
		Steps []struct {
			ID       string `json:"_id"`
			StepID   string `json:"stepId"`
			Type     string `json:"type"`
			Controls struct {
				Values map[string]any `json:"values"`
			} `json:"controls"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("decode workflow: %v", err)
	}
	st := wf.Steps[index]
	if controls != nil {
		st.Controls.Values = controls
	}
	sub, err := w.subs.SubscriberJSON(t.Context(), env.ID, subscriberID)
	if err != nil {
		t.Fatalf("subscriber %s: %v", subscriberID, err)
	}
	doc, _ := json.Marshal(map[string]any{
		"jobId": platform.NewID(), "notificationId": platform.NewID(), "environmentId": env.ID,
		"organizationId": env.OrganizationID, "transactionId": transactionID, "channel": st.Type,
		"stepId": st.StepID, "stepDatabaseId": st.ID, "workflowDatabaseId": wf.ID, "workflowId": workflowID,
		"subscriber": json.RawMessage(sub), "controls": st.Controls.Values,
		"variables": map[string]any{"subscriber": json.RawMessage(sub), "payload": payload, "steps": map[string]any{}},
		"payload":   payload, "overrides": map[string]any{}, "tags": []string{"news"},
		"actor": map[string]any{"type": "none", "data": nil},
	})
	res, err := w.messages.DeliverJSON(t.Context(), doc)
	if err != nil {
		t.Fatalf("DeliverJSON: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatalf("outcome %s: %v", res, err)
	}
	return out
}

var (
	channelEnum  = []string{"in_app", "email", "sms", "chat", "push"}
	statusEnum   = []string{"sent", "error", "warning"}
	listedChats  = strings.Fields("slack discord msteams mattermost ryver zulip grafana-on-call getstream rocket-chat whatsapp-business chat-webhook fcm apns expo one-signal pushpad push-webhook pusher-beams")
	allProviders = append(slices.Clone(listedChats), "service-slack", "appio")
)

// conformCTA checks spec §2.11.
func conformCTA(t *testing.T, where string, v any) {
	t.Helper()
	cta := conform(t, where, v, []field{{name: "type", kind: "string", enum: []string{"redirect"}},
		{name: "data", kind: "object"}, {name: "action", kind: "object"}})
	if d, ok := cta["data"]; ok {
		conform(t, where+".data", d, []field{{name: "url", kind: "string"}})
	}
	if a, ok := cta["action"]; ok {
		action := conform(t, where+".action", a, []field{{name: "status", kind: "string", enum: []string{"pending", "done"}},
			{name: "buttons", kind: "array"}, {name: "result", kind: "object"}})
		if bs, ok := action["buttons"]; ok {
			for _, b := range items(t, where+".action.buttons", bs) {
				conform(t, where+".action.buttons", b, []field{
					{name: "type", kind: "string", required: true, enum: []string{"primary", "secondary"}},
					{name: "content", kind: "string", required: true}, {name: "resultContent", kind: "string"}})
			}
		}
	}
}

// conformMessage checks spec §2.10; providers is the channel providerId
// enumeration of the embedded subscriber.
func conformMessage(t *testing.T, where string, v any, providers []string, markAs bool) map[string]any {
	t.Helper()
	m := conform(t, where, v, []field{
		{name: "_id", kind: "id"},
		{name: "_templateId", kind: "string", nullable: true},
		{name: "_messageTemplateId", kind: "string", nullable: true},
		{name: "_environmentId", kind: "id", required: true},
		{name: "_organizationId", kind: "id", required: true},
		{name: "_notificationId", kind: "id", required: true},
		{name: "_subscriberId", kind: "id", required: true},
		{name: "subscriber", kind: "object"},
		{name: "template", kind: "object"},
		{name: "templateIdentifier", kind: "string"},
		{name: "createdAt", kind: "time", required: true},
		{name: "deliveredAt", kind: "array"},
		{name: "lastSeenDate", kind: "time"},
		{name: "lastReadDate", kind: "time"},
		{name: "content", kind: "any"},
		{name: "transactionId", kind: "string", required: true},
		{name: "subject", kind: "string"},
		{name: "channel", kind: "string", required: true, enum: channelEnum},
		{name: "read", kind: "bool", required: true},
		{name: "seen", kind: "bool", required: true},
		{name: "snoozedUntil", kind: "time"},
		{name: "email", kind: "string"}, {name: "phone", kind: "string"}, {name: "directWebhookUrl", kind: "string"},
		{name: "providerId", kind: "string"}, {name: "title", kind: "string"},
		{name: "deviceTokens", kind: "array"},
		{name: "cta", kind: "object", required: true},
		{name: "_feedId", kind: "string", nullable: true},
		{name: "status", kind: "string", required: true, enum: statusEnum},
		{name: "errorId", kind: "string"}, {name: "errorText", kind: "string"},
		{name: "payload", kind: "object"}, {name: "overrides", kind: "object"},
		{name: "contextKeys", kind: "array"},
	})
	if _, ok := m["contextKeys"]; ok && !markAs {
		t.Errorf("%s.contextKeys: only the mark-as response carries it", where)
	}
	switch c := m["content"].(type) {
	case string:
	case []any:
		for _, b := range c {
			conform(t, where+".content", b, []field{{name: "type", kind: "string", required: true, enum: []string{"button", "text"}},
				{name: "content", kind: "string", required: true}, {name: "url", kind: "string"}, {name: "styles", kind: "object"}})
		}
	case nil:
		if _, ok := m["content"]; ok {
			t.Errorf("%s.content: null", where)
		}
	default:
		t.Errorf("%s.content: want a string or EmailBlocks, got %T", where, c)
	}
	for _, d := range items(t, where+".deliveredAt", orEmpty(m["deliveredAt"])) {
		if s, _ := d.(string); !timeFormat.MatchString(s) {
			t.Errorf("%s.deliveredAt: %v", where, d)
		}
	}
	conformCTA(t, where+".cta", m["cta"])
	if sub, ok := m["subscriber"]; ok {
		s := conform(t, where+".subscriber", sub, []field{
			{name: "subscriberId", kind: "string", required: true}, {name: "_organizationId", kind: "id", required: true},
			{name: "_environmentId", kind: "id", required: true}, {name: "deleted", kind: "bool", required: true},
			{name: "createdAt", kind: "time", required: true}, {name: "updatedAt", kind: "time", required: true},
			{name: "channels", kind: "array"}, {name: "data", kind: "object", nullable: true}})
		for _, c := range items(t, "channels", orEmpty(s["channels"])) {
			conform(t, where+".subscriber.channels", c, []field{{name: "providerId", kind: "string", required: true, enum: providers},
				{name: "credentials", kind: "object", required: true}, {name: "_integrationId", kind: "string", required: true}})
		}
	}
	if tpl, ok := m["template"]; ok {
		conform(t, where+".template", tpl, []field{
			{name: "name", kind: "string", required: true}, {name: "description", kind: "string", required: true},
			{name: "active", kind: "bool", required: true}, {name: "draft", kind: "bool", required: true},
			{name: "critical", kind: "bool", required: true}, {name: "deleted", kind: "bool", required: true},
			{name: "_organizationId", kind: "string", required: true}, {name: "_creatorId", kind: "string", required: true},
			{name: "_environmentId", kind: "string", required: true}, {name: "_notificationGroupId", kind: "string", required: true},
			{name: "deletedAt", kind: "string", required: true}, {name: "deletedBy", kind: "string", required: true},
			{name: "preferenceSettings", kind: "object", required: true}, {name: "tags", kind: "array", required: true},
			{name: "steps", kind: "array", required: true}, {name: "triggers", kind: "array", required: true}})
	}
	return m
}

// conformFeedItem checks spec §2.9 plus archived (contract §9).
func conformFeedItem(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	m := conform(t, where, v, []field{
		{name: "_id", kind: "id", required: true}, {name: "_templateId", kind: "string", required: true},
		{name: "_environmentId", kind: "id", required: true}, {name: "_organizationId", kind: "id", required: true},
		{name: "_notificationId", kind: "id", required: true}, {name: "_subscriberId", kind: "id", required: true},
		{name: "_jobId", kind: "string", required: true}, {name: "_messageTemplateId", kind: "string"},
		{name: "_feedId", kind: "string", nullable: true},
		{name: "createdAt", kind: "time", nullable: true}, {name: "updatedAt", kind: "time", nullable: true},
		{name: "actor", kind: "object"}, {name: "subscriber", kind: "object"},
		{name: "transactionId", kind: "string", required: true},
		{name: "templateIdentifier", kind: "string", nullable: true}, {name: "providerId", kind: "string", nullable: true},
		{name: "content", kind: "string", required: true}, {name: "subject", kind: "string", nullable: true},
		{name: "channel", kind: "string", required: true, enum: channelEnum},
		{name: "read", kind: "bool", required: true}, {name: "seen", kind: "bool", required: true},
		{name: "archived", kind: "bool", required: true},
		{name: "deviceTokens", kind: "array", nullable: true},
		{name: "cta", kind: "object", required: true},
		{name: "status", kind: "string", required: true, enum: statusEnum},
		{name: "payload", kind: "object"}, {name: "data", kind: "object", nullable: true},
		{name: "overrides", kind: "object"}, {name: "tags", kind: "array", nullable: true},
	})
	if a, ok := m["actor"]; ok {
		conform(t, where+".actor", a, []field{{name: "data", kind: "string", required: true, nullable: true},
			{name: "type", kind: "string", required: true, enum: []string{"none", "user", "system_icon", "system_custom"}}})
	}
	if s, ok := m["subscriber"]; ok {
		conform(t, where+".subscriber", s, []field{{name: "_id", kind: "string"}, {name: "firstName", kind: "string"},
			{name: "lastName", kind: "string"}, {name: "avatar", kind: "string"}, {name: "subscriberId", kind: "string", required: true}})
	}
	conformCTA(t, where+".cta", m["cta"])
	return m
}

var pageFields = []field{
	{name: "totalCount", kind: "number"}, {name: "hasMore", kind: "bool", required: true},
	{name: "data", kind: "array", required: true}, {name: "pageSize", kind: "number", required: true},
	{name: "page", kind: "number", required: true},
}

func TestConformance_MessageResponses(t *testing.T) {
	is := is.New(t)
	w := newWired(t)
	dev := w.srv.Dev
	mail := newHook(t)
	is.Equal(dev.Do(t, "POST", "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,
		"credentials":{"webhookUrl":"`+mail.URL+`","from":"noreply@example.com","senderName":"Herald"}}`).Status, 201) // email integration
	is.Equal(dev.Do(t, "POST", "/v1/integrations", `{"providerId":"slack","channel":"chat","active":true}`).Status, 201) // chat integration
	is.Equal(dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`).Status, 201)
	is.Equal(dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"bare"}`).Status, 201) // a subscriber with no names
	for _, body := range []string{
		`{"providerId":"appio","credentials":{"deviceTokens":["t"]}}`,
		`{"providerId":"service-slack","credentials":{"webhookUrl":"https://hooks.example.com/s"}}`,
		`{"providerId":"slack","credentials":{"webhookUrl":"` + mail.URL + `/slack"}}`,
	} {
		is.Equal(dev.Do(t, "PATCH", "/v1/subscribers/ada/credentials", body).Status, 200) // channels the messages list must hide or show
	}
	res := dev.Do(t, "POST", "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","steps":[
		{"name":"Inbox","type":"in_app","controlValues":{"subject":"Hi","body":"Hello {{ payload.name }}","primaryAction":{"label":"Open","redirect":{"url":"/open"}},"redirect":{"url":"/x"}}},
		{"name":"Plain","type":"in_app","controlValues":{"body":"Just text"}},
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi {{ payload.name }}","body":"<p>{{ payload.name }}</p>"}},
		{"name":"Chat","type":"chat","controlValues":{"body":"chat {{ payload.name }}"}}]}`)
	if res.Status != 201 {
		t.Fatalf("workflow: %d %s", res.Status, res.Body)
	}

	payload := map[string]any{"name": "Ada"}
	for i := range 4 {
		out := w.sendStep(t, "welcome", i, "ada", "tx-1", payload)
		is.Equal(out["status"], "sent") // delivered
	}
	blocks := map[string]any{"subject": "b", "body": []any{map[string]any{"type": "text", "content": "t {{ payload.name }}"},
		map[string]any{"type": "button", "content": "Go", "url": "https://x.example.com"}}}
	is.Equal(w.send(t, "welcome", 2, blocks, "ada", "tx-1", payload)["status"], "sent")       // EmailBlocks delivered
	is.Equal(w.sendStep(t, "welcome", 1, "bare", "tx-2", map[string]any{})["status"], "sent") // delivered to a bare subscriber

	res = dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
	is.Equal(res.Status, 200) // feed
	feed := conform(t, "feed", decode(t, res), pageFields)
	is.Equal(len(items(t, "feed.data", feed["data"])), 2) // two in_app messages
	for _, it := range items(t, "feed.data", feed["data"]) {
		conformFeedItem(t, "feed.data", it)
	}
	res = dev.Do(t, "GET", "/v1/subscribers/bare/notifications/feed", "")
	is.Equal(res.Status, 200) // feed of a subscriber without names
	for _, it := range items(t, "feed.data", conform(t, "feed bare", decode(t, res), pageFields)["data"]) {
		conformFeedItem(t, "bare feed.data", it)
	}
	res = dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?page=5", "")
	is.Equal(res.Status, 200)                                                                        // a page past the end
	is.Equal(len(items(t, "data", conform(t, "empty feed", decode(t, res), pageFields)["data"])), 0) // [] not null

	res = dev.Do(t, "GET", "/v1/messages?limit=100", "")
	is.Equal(res.Status, 200) // messages list
	list := conform(t, "messages", decode(t, res), pageFields)
	msgs := items(t, "messages.data", list["data"])
	is.Equal(len(msgs), 6) // every channel
	var inApp []string
	for _, m := range msgs {
		msg := conformMessage(t, "messages.data", m, listedChats, false)
		if msg["channel"] == "in_app" && msg["transactionId"] == "tx-1" {
			inApp = append(inApp, msg["_id"].(string))
		}
	}
	res = dev.Do(t, "GET", "/v1/messages?transactionId=nope", "")
	is.Equal(res.Status, 200)                                                                            // no match
	is.Equal(len(items(t, "data", conform(t, "empty messages", decode(t, res), pageFields)["data"])), 0) // [] not null

	for _, mark := range []string{"read", "seen", "unread", "unseen"} {
		ids, _ := json.Marshal(inApp)
		res = dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":`+string(ids)+`,"markAs":"`+mark+`"}`)
		is.Equal(res.Status, 201) // mark-as: 201
		for _, m := range items(t, "mark-as", decode(t, res)) {
			conformMessage(t, "mark-as "+mark, m, allProviders, true)
		}
	}
	res = dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+inApp[0]+`","markAs":"read"}`)
	is.Equal(res.Status, 201) // one id as a string
	is.Equal(len(items(t, "mark-as", decode(t, res))), 1)

	res = dev.Do(t, "DELETE", "/v1/messages/"+inApp[0], "")
	is.Equal(res.Status, 200) // deleting a message: 200
	conform(t, "DELETE message", decode(t, res), []field{{name: "acknowledged", kind: "bool", required: true},
		{name: "status", kind: "string", required: true, enum: []string{"deleted"}}})
	res = dev.Do(t, "DELETE", "/v1/messages/transaction/tx-2", "")
	is.Equal(res.Status, 204)  // deleting a transaction's messages: 204
	is.Equal(len(res.Body), 0) // no body
}

func TestConformance_EmailEscaping(t *testing.T) {
	w := newWired(t)
	dev := w.srv.Dev
	mail := newHook(t)
	if res := dev.Do(t, "POST", "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,
		"credentials":{"webhookUrl":"`+mail.URL+`","from":"noreply@example.com"}}`); res.Status != 201 {
		t.Fatalf("integration: %d %s", res.Status, res.Body)
	}
	if res := dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`); res.Status != 201 {
		t.Fatalf("subscriber: %d %s", res.Status, res.Body)
	}
	res := dev.Do(t, "POST", "/v2/workflows", `{"name":"Esc","workflowId":"esc","steps":[
		{"name":"Safe","type":"email","controlValues":{"subject":"Hi {{ payload.name }}","body":"<p class=\"x\">Hello {{ payload.name }}</p><a href=\"{{ payload.url }}\">go</a>"}},
		{"name":"Raw","type":"email","controlValues":{"subject":"s","body":"<p>{{ payload.name }}</p>","disableOutputSanitization":true}},
		{"name":"Inbox","type":"in_app","controlValues":{"body":"Hello {{ payload.name }}"}},
		{"name":"Text","type":"chat","controlValues":{"body":"Hello {{ payload.name }}"}},
		{"name":"Maily","type":"email","controlValues":{"subject":"s","editorType":"block","body":"{\"type\":\"doc\",\"content\":[{\"type\":\"paragraph\",\"content\":[{\"type\":\"variable\",\"attrs\":{\"id\":\"payload.name\"}}]}]}"}}]}`)
	if res.Status != 201 {
		t.Fatalf("workflow: %d %s", res.Status, res.Body)
	}
	payload := map[string]any{"name": `<script>alert("x")</script>`, "url": `" onmouseover="x`}
	html := func(t *testing.T) string {
		t.Helper()
		got := mail.got()
		var sent struct {
			HTML    string `json:"html"`
			Subject string `json:"subject"`
		}
		if err := json.Unmarshal(got[len(got)-1].body, &sent); err != nil {
			t.Fatalf("webhook body: %v", err)
		}
		return sent.HTML + "\x00" + sent.Subject
	}
	t.Run("OK email HTML escapes values", func(t *testing.T) {
		is := is.New(t)
		is.Equal(w.sendStep(t, "esc", 0, "ada", "tx-safe", payload)["status"], "sent") // delivered
		got, subject, _ := strings.Cut(html(t), "\x00")
		is.True(!strings.Contains(got, "<script>"))                                       // no injected markup
		is.True(strings.Contains(got, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")) // the value, escaped
		is.True(strings.Contains(got, `<p class="x">`))                                   // the template's own markup kept
		is.True(strings.Contains(got, `href="&#34; onmouseover=&#34;x"`))                 // no attribute break-out
		is.Equal(subject, `Hi <script>alert("x")</script>`)                               // the subject is a header, not HTML
	})
	t.Run("OK disableOutputSanitization keeps values raw", func(t *testing.T) {
		is := is.New(t)
		is.Equal(w.sendStep(t, "esc", 1, "ada", "tx-raw", payload)["status"], "sent") // delivered
		got, _, _ := strings.Cut(html(t), "\x00")
		is.True(strings.Contains(got, `<p><script>alert("x")</script></p>`)) // as the step asked
	})
	t.Run("OK EmailBlock text escapes values", func(t *testing.T) {
		is := is.New(t)
		blocks := map[string]any{"subject": "s", "body": []any{map[string]any{"type": "text", "content": "<b>{{ payload.name }}</b>"}}}
		is.Equal(w.send(t, "esc", 0, blocks, "ada", "tx-blocks", payload)["status"], "sent") // delivered
		got, _, _ := strings.Cut(html(t), "\x00")
		is.True(strings.Contains(got, "<b>&lt;script&gt;")) // block markup kept, value escaped
	})
	t.Run("OK block editor escapes values", func(t *testing.T) {
		is := is.New(t)
		is.Equal(w.sendStep(t, "esc", 4, "ada", "tx-maily", payload)["status"], "sent") // delivered
		got, _, _ := strings.Cut(html(t), "\x00")
		is.True(!strings.Contains(got, "<script>"))      // no injected markup
		is.True(strings.Contains(got, "&lt;script&gt;")) // the value, escaped
	})
	t.Run("OK text channels are not escaped", func(t *testing.T) {
		is := is.New(t)
		is.Equal(w.sendStep(t, "esc", 2, "ada", "tx-inbox", payload)["status"], "sent") // in_app delivered
		res := dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
		var feed struct {
			Data []struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		res.Decode(t, &feed)
		is.Equal(feed.Data[0].Content, `Hello <script>alert("x")</script>`) // in_app body is plain text
		res = dev.Do(t, "GET", "/v1/messages?transactionId=tx-inbox", "")
		var list struct {
			Data []struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		res.Decode(t, &list)
		is.Equal(list.Data[0].Content, `Hello <script>alert("x")</script>`) // stored as sent
	})
}

func TestConformance_HostileTemplates(t *testing.T) {
	w := newWired(t)
	dev := w.srv.Dev
	if res := dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada"}`); res.Status != 201 {
		t.Fatalf("subscriber: %d %s", res.Status, res.Body)
	}
	if res := dev.Do(t, "POST", "/v2/workflows", `{"name":"H","workflowId":"h","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"x"}}]}`); res.Status != 201 {
		t.Fatalf("workflow: %d %s", res.Status, res.Body)
	}
	for _, tc := range []struct {
		name, body string
		payload    map[string]any
	}{
		{"Err endless loop", "{% for i in (1..100000000) %}{% for j in (1..100000000) %}{% endfor %}{% endfor %}", nil},
		{"Err loop sized by the payload", "{% for i in (1..payload.n) %}{% for j in (1..payload.n) %}{% endfor %}{% endfor %}", map[string]any{"n": 1e9}},
		{"Err filter panic on payload values", "{{ payload.s | slice: 1, payload.n }}", map[string]any{"s": "abc", "n": -1}},
		{"Err include of a server file", `{% include "/etc/hostname" %}`, nil},
		{"Err doubling capture", `{% assign s = "xxxxxxxx" %}{% for i in (1..60) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			start := time.Now()
			out := w.send(t, "h", 0, map[string]any{"body": tc.body}, "ada", "tx-"+strings.ReplaceAll(tc.name, " ", "-"), tc.payload)
			is.True(time.Since(start) < 10*time.Second) // no hang
			is.Equal(out["status"], "error")            // a Failed step, not a crash or a hang
			is.Equal(out["retryable"], false)           // retrying cannot help
			details := items(t, "details", out["details"])
			last := details[len(details)-1].(map[string]any)
			is.Equal(last["status"], "Failed") // recorded with its reason
			is.True(strings.Contains(last["detail"].(string), "could not be generated"))
		})
	}
}

func TestConformance_MessagingBadInput(t *testing.T) {
	w := newWired(t)
	dev := w.srv.Dev
	if res := dev.Do(t, "POST", "/v1/subscribers", `{"subscriberId":"ada"}`); res.Status != 201 {
		t.Fatalf("subscriber: %d %s", res.Status, res.Body)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"Err feed of an unknown subscriber", "GET", "/v1/subscribers/%F0%9F%98%80/notifications/feed", "", 404},
		{"Err feed limit too big", "GET", "/v1/subscribers/ada/notifications/feed?limit=101", "", 422},
		{"Err feed page huge", "GET", "/v1/subscribers/ada/notifications/feed?page=99999999999999999999", "", 400},
		{"Err feed page large", "GET", "/v1/subscribers/ada/notifications/feed?page=2147483647&limit=100", "", 200},
		{"Err feed read not a bool", "GET", "/v1/subscribers/ada/notifications/feed?read=perhaps", "", 400},
		{"Err feed payload not base64", "GET", "/v1/subscribers/ada/notifications/feed?payload=!!!", "", 422},
		{"Err feed payload an array", "GET", "/v1/subscribers/ada/notifications/feed?payload=W10", "", 422},
		{"Err feed payload with nested nulls", "GET", "/v1/subscribers/ada/notifications/feed?payload=eyJhIjp7ImIiOm51bGx9fQ", "", 200},
		{"Err mark-as malformed id", "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"zz","markAs":"read"}`, 422},
		{"Err mark-as empty array", "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":[],"markAs":"read"}`, 422},
		{"Err mark-as null id", "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":[null],"markAs":"read"}`, 422},
		{"Err mark-as number id", "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":1e400,"markAs":"read"}`, 422},
		{"Err mark-as unknown mark", "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"5f0000000000000000000000","markAs":"archive"}`, 422},
		{"Err mark-as unknown subscriber", "POST", "/v1/subscribers/nobody/messages/mark-as", `{"messageId":"5f0000000000000000000000","markAs":"read"}`, 404},
		{"Err messages bad channel", "GET", "/v1/messages?channel=fax", "", 422},
		{"Err messages limit over 1000", "GET", "/v1/messages?limit=1001", "", 422},
		{"Err messages page negative", "GET", "/v1/messages?page=-1", "", 422},
		{"Err messages page huge", "GET", "/v1/messages?page=2147483647&limit=1000", "", 200},
		{"Err messages unknown subscriber", "GET", "/v1/messages?subscriberId=nobody", "", 404},
		{"Err delete malformed message id", "DELETE", "/v1/messages/zz", "", 404},
		{"Err delete unknown message", "DELETE", "/v1/messages/5f0000000000000000000000", "", 404},
		{"Err delete unknown transaction", "DELETE", "/v1/messages/transaction/%F0%9F%98%80", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := dev.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.want) // a clear answer
			if res.Status < 400 {
				conform(t, tc.name, decode(t, res), pageFields)
				return
			}
			body := conform(t, tc.name, decode(t, res), errorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (contract §9)
			}
		})
	}
}

// errorFields is contract §4's error body.
var errorFields = []field{
	{name: "statusCode", kind: "number", required: true},
	{name: "timestamp", kind: "time", required: true},
	{name: "path", kind: "string", required: true},
	{name: "message", kind: "string", required: true},
}

func orEmpty(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}

// field is one property of a response object as the spec types it.
type field struct {
	name     string
	kind     string // string, id, time, bool, number, object, array, any
	required bool
	nullable bool
	enum     []string
}

var timeFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// conform checks obj against fields as a client validating the spec's schema
// would: required keys present, types and nulls as allowed, enums exact,
// timestamps in contract §3's format, ids 24 lowercase hex.
func conform(t *testing.T, where string, obj any, fields []field) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T %v", where, obj, obj)
	}
	for _, f := range fields {
		v, present := m[f.name]
		at := where + "." + f.name
		if !present {
			if f.required {
				t.Errorf("%s: required, missing", at)
			}
			continue
		}
		if v == nil {
			if !f.nullable {
				t.Errorf("%s: null, spec allows no null", at)
			}
			continue
		}
		bad := false
		switch f.kind {
		case "string":
			_, ok := v.(string)
			bad = !ok
		case "id":
			s, ok := v.(string)
			bad = !ok || !isID(s)
		case "time":
			s, ok := v.(string)
			bad = !ok || !timeFormat.MatchString(s)
		case "bool":
			_, ok := v.(bool)
			bad = !ok
		case "number":
			_, ok := v.(float64)
			bad = !ok
		case "object":
			_, ok := v.(map[string]any)
			bad = !ok
		case "array":
			_, ok := v.([]any)
			bad = !ok
		}
		if bad {
			t.Errorf("%s: want %s, got %T %v", at, f.kind, v, v)
			continue
		}
		if f.enum != nil {
			if s, _ := v.(string); !slices.Contains(f.enum, s) {
				t.Errorf("%s: %v is not one of %v", at, v, f.enum)
			}
		}
	}
	return m
}

func isID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decode unmarshals a response body into generic JSON.
func decode(t *testing.T, res *platformtest.Response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatalf("body %s: %v", res.Body, err)
	}
	return v
}

// items returns v as an array, failing when it is not one (null included).
func items(t *testing.T, where string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T %v", where, v, v)
	}
	return a
}

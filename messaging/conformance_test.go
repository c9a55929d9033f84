package messaging_test

import (
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
)

// wired is the whole application, whose stores a test reaches to deliver
// a step directly, so messages embed real subscribers and workflow
// summaries.
type wired struct {
	srv *apptest.Server
}

func newWired(t *testing.T) *wired {
	t.Helper()
	return &wired{srv: apptest.NewServer(t)}
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
	wf, err := w.srv.Herald.Workflows.TriggerWorkflow(t.Context(), env.ID, workflowID)
	if err != nil {
		t.Fatalf("workflow %s: %v", workflowID, err)
	}
	st := wf.Steps[index]
	values := st.ControlValues
	if controls != nil {
		values = controls
	}
	sub, err := w.srv.Herald.Subscribers.Subscriber(t.Context(), env.ID, subscriberID)
	if err != nil {
		t.Fatalf("subscriber %s: %v", subscriberID, err)
	}
	rawPayload, _ := json.Marshal(payload)
	d := &messaging.Delivery{
		JobID: sqldb.NewID(), NotificationID: sqldb.NewID(), EnvironmentID: env.ID,
		OrganizationID: env.OrganizationID, TransactionID: transactionID, Channel: st.Type,
		StepID: st.StepID, StepDatabaseID: st.ID, WorkflowDatabaseID: wf.ID, WorkflowID: workflowID,
		Subscriber: sub, Controls: values, Payload: rawPayload,
		Overrides: json.RawMessage(`{}`), Tags: []string{"news"}, Actor: json.RawMessage(`{"type":"none","data":null}`),
	}
	res, write, err := messaging.NewDeliverer(w.srv.Herald.Messages, platformtest.Loopback).Deliver(t.Context(), d)
	if err == nil && write != nil {
		err = w.srv.App.DB.Tx(t.Context(), func(tx *sql.Tx) error { return write(t.Context(), tx) })
	}
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	doc, _ := json.Marshal(res)
	var out map[string]any
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatalf("outcome %s: %v", doc, err)
	}
	return out
}

var (
	channelEnum  = []string{"in_app", "email", "sms", "chat", "push"}
	statusEnum   = []string{"sent", "error", "warning"}
	listedChats  = strings.Fields("slack discord msteams mattermost ryver zulip grafana-on-call getstream rocket-chat whatsapp-business chat-webhook fcm apns expo one-signal pushpad push-webhook pusher-beams")
	allProviders = append(slices.Clone(listedChats), "service-slack", "appio")
)

// conformCTA checks against docs/api.md, "Calls to action".
func conformCTA(t *testing.T, where string, v any) {
	t.Helper()
	cta := platformtest.Conform(t, where, v, []platformtest.Field{{Name: "type", Kind: "string", Enum: []string{"redirect"}},
		{Name: "data", Kind: "object"}, {Name: "action", Kind: "object"}})
	if d, ok := cta["data"]; ok {
		platformtest.Conform(t, where+".data", d, []platformtest.Field{{Name: "url", Kind: "string"}})
	}
	if a, ok := cta["action"]; ok {
		action := platformtest.Conform(t, where+".action", a, []platformtest.Field{{Name: "status", Kind: "string", Enum: []string{"pending", "done"}},
			{Name: "buttons", Kind: "array"}, {Name: "result", Kind: "object"}})
		if bs, ok := action["buttons"]; ok {
			for _, b := range platformtest.Items(t, where+".action.buttons", bs) {
				platformtest.Conform(t, where+".action.buttons", b, []platformtest.Field{
					{Name: "type", Kind: "string", Required: true, Enum: []string{"primary", "secondary"}},
					{Name: "content", Kind: "string", Required: true}, {Name: "resultContent", Kind: "string"}})
			}
		}
	}
}

// conformMessage checks against docs/api.md, "Messages"; providers is the
// channel providerId enumeration of the embedded subscriber.
func conformMessage(t *testing.T, where string, v any, providers []string, markAs bool) map[string]any {
	t.Helper()
	m := platformtest.Conform(t, where, v, []platformtest.Field{
		{Name: "_id", Kind: "id"},
		{Name: "_templateId", Kind: "string", Nullable: true},
		{Name: "_messageTemplateId", Kind: "string", Nullable: true},
		{Name: "_environmentId", Kind: "id", Required: true},
		{Name: "_organizationId", Kind: "id", Required: true},
		{Name: "_notificationId", Kind: "id", Required: true},
		{Name: "_subscriberId", Kind: "id", Required: true},
		{Name: "subscriber", Kind: "object"},
		{Name: "template", Kind: "object"},
		{Name: "templateIdentifier", Kind: "string"},
		{Name: "createdAt", Kind: "time", Required: true},
		{Name: "deliveredAt", Kind: "array"},
		{Name: "lastSeenDate", Kind: "time"},
		{Name: "lastReadDate", Kind: "time"},
		{Name: "content", Kind: "any"},
		{Name: "transactionId", Kind: "string", Required: true},
		{Name: "subject", Kind: "string"},
		{Name: "channel", Kind: "string", Required: true, Enum: channelEnum},
		{Name: "read", Kind: "bool", Required: true},
		{Name: "seen", Kind: "bool", Required: true},
		{Name: "snoozedUntil", Kind: "time"},
		{Name: "email", Kind: "string"}, {Name: "phone", Kind: "string"}, {Name: "directWebhookUrl", Kind: "string"},
		{Name: "providerId", Kind: "string"}, {Name: "title", Kind: "string"},
		{Name: "deviceTokens", Kind: "array"},
		{Name: "cta", Kind: "object", Required: true},
		{Name: "_feedId", Kind: "string", Nullable: true},
		{Name: "status", Kind: "string", Required: true, Enum: statusEnum},
		{Name: "errorId", Kind: "string"}, {Name: "errorText", Kind: "string"},
		{Name: "payload", Kind: "object"}, {Name: "overrides", Kind: "object"},
		{Name: "contextKeys", Kind: "array"},
	})
	if _, ok := m["contextKeys"]; ok && !markAs {
		t.Errorf("%s.contextKeys: only the mark-as response carries it", where)
	}
	switch c := m["content"].(type) {
	case string:
	case []any:
		for _, b := range c {
			platformtest.Conform(t, where+".content", b, []platformtest.Field{{Name: "type", Kind: "string", Required: true, Enum: []string{"button", "text"}},
				{Name: "content", Kind: "string", Required: true}, {Name: "url", Kind: "string"}, {Name: "styles", Kind: "object"}})
		}
	case nil:
		if _, ok := m["content"]; ok {
			t.Errorf("%s.content: null", where)
		}
	default:
		t.Errorf("%s.content: want a string or EmailBlocks, got %T", where, c)
	}
	for _, d := range platformtest.Items(t, where+".deliveredAt", orEmpty(m["deliveredAt"])) {
		if s, _ := d.(string); !platformtest.TimeFormat.MatchString(s) {
			t.Errorf("%s.deliveredAt: %v", where, d)
		}
	}
	conformCTA(t, where+".cta", m["cta"])
	if sub, ok := m["subscriber"]; ok {
		s := platformtest.Conform(t, where+".subscriber", sub, []platformtest.Field{
			{Name: "subscriberId", Kind: "string", Required: true}, {Name: "_organizationId", Kind: "id", Required: true},
			{Name: "_environmentId", Kind: "id", Required: true}, {Name: "deleted", Kind: "bool", Required: true},
			{Name: "createdAt", Kind: "time", Required: true}, {Name: "updatedAt", Kind: "time", Required: true},
			{Name: "channels", Kind: "array"}, {Name: "data", Kind: "object", Nullable: true}})
		for _, c := range platformtest.Items(t, "channels", orEmpty(s["channels"])) {
			platformtest.Conform(t, where+".subscriber.channels", c, []platformtest.Field{{Name: "providerId", Kind: "string", Required: true, Enum: providers},
				{Name: "credentials", Kind: "object", Required: true}, {Name: "_integrationId", Kind: "string", Required: true}})
		}
	}
	if tpl, ok := m["template"]; ok {
		platformtest.Conform(t, where+".template", tpl, []platformtest.Field{
			{Name: "name", Kind: "string", Required: true}, {Name: "description", Kind: "string", Required: true},
			{Name: "active", Kind: "bool", Required: true}, {Name: "draft", Kind: "bool", Required: true},
			{Name: "critical", Kind: "bool", Required: true}, {Name: "deleted", Kind: "bool", Required: true},
			{Name: "_organizationId", Kind: "string", Required: true}, {Name: "_creatorId", Kind: "string", Required: true},
			{Name: "_environmentId", Kind: "string", Required: true}, {Name: "_notificationGroupId", Kind: "string", Required: true},
			{Name: "deletedAt", Kind: "string", Required: true}, {Name: "deletedBy", Kind: "string", Required: true},
			{Name: "preferenceSettings", Kind: "object", Required: true}, {Name: "tags", Kind: "array", Required: true},
			{Name: "steps", Kind: "array", Required: true}, {Name: "triggers", Kind: "array", Required: true}})
	}
	return m
}

// conformFeedItem checks against docs/api.md, "The feed" plus archived
// (docs/api.md, "What strict clients check").
func conformFeedItem(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	m := platformtest.Conform(t, where, v, []platformtest.Field{
		{Name: "_id", Kind: "id", Required: true}, {Name: "_templateId", Kind: "string", Required: true},
		{Name: "_environmentId", Kind: "id", Required: true}, {Name: "_organizationId", Kind: "id", Required: true},
		{Name: "_notificationId", Kind: "id", Required: true}, {Name: "_subscriberId", Kind: "id", Required: true},
		{Name: "_jobId", Kind: "string", Required: true}, {Name: "_messageTemplateId", Kind: "string"},
		{Name: "_feedId", Kind: "string", Nullable: true},
		{Name: "createdAt", Kind: "time", Nullable: true}, {Name: "updatedAt", Kind: "time", Nullable: true},
		{Name: "actor", Kind: "object"}, {Name: "subscriber", Kind: "object"},
		{Name: "transactionId", Kind: "string", Required: true},
		{Name: "templateIdentifier", Kind: "string", Nullable: true}, {Name: "providerId", Kind: "string", Nullable: true},
		{Name: "content", Kind: "string", Required: true}, {Name: "subject", Kind: "string", Nullable: true},
		{Name: "channel", Kind: "string", Required: true, Enum: channelEnum},
		{Name: "read", Kind: "bool", Required: true}, {Name: "seen", Kind: "bool", Required: true},
		{Name: "archived", Kind: "bool", Required: true},
		{Name: "deviceTokens", Kind: "array", Nullable: true},
		{Name: "cta", Kind: "object", Required: true},
		{Name: "status", Kind: "string", Required: true, Enum: statusEnum},
		{Name: "payload", Kind: "object"}, {Name: "data", Kind: "object", Nullable: true},
		{Name: "overrides", Kind: "object"}, {Name: "tags", Kind: "array", Nullable: true},
	})
	if a, ok := m["actor"]; ok {
		platformtest.Conform(t, where+".actor", a, []platformtest.Field{{Name: "data", Kind: "string", Required: true, Nullable: true},
			{Name: "type", Kind: "string", Required: true, Enum: []string{"none", "user", "system_icon", "system_custom"}}})
	}
	if s, ok := m["subscriber"]; ok {
		platformtest.Conform(t, where+".subscriber", s, []platformtest.Field{{Name: "_id", Kind: "string"}, {Name: "firstName", Kind: "string"},
			{Name: "lastName", Kind: "string"}, {Name: "avatar", Kind: "string"}, {Name: "subscriberId", Kind: "string", Required: true}})
	}
	conformCTA(t, where+".cta", m["cta"])
	return m
}

var pageFields = []platformtest.Field{
	{Name: "totalCount", Kind: "number"}, {Name: "hasMore", Kind: "bool", Required: true},
	{Name: "data", Kind: "array", Required: true}, {Name: "pageSize", Kind: "number", Required: true},
	{Name: "page", Kind: "number", Required: true},
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
	feed := platformtest.Conform(t, "feed", platformtest.DecodeAny(t, res), pageFields)
	is.Equal(len(platformtest.Items(t, "feed.data", feed["data"])), 2) // two in_app messages
	for _, it := range platformtest.Items(t, "feed.data", feed["data"]) {
		conformFeedItem(t, "feed.data", it)
	}
	res = dev.Do(t, "GET", "/v1/subscribers/bare/notifications/feed", "")
	is.Equal(res.Status, 200) // feed of a subscriber without names
	for _, it := range platformtest.Items(t, "feed.data", platformtest.Conform(t, "feed bare", platformtest.DecodeAny(t, res), pageFields)["data"]) {
		conformFeedItem(t, "bare feed.data", it)
	}
	res = dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed?page=5", "")
	is.Equal(res.Status, 200)                                                                                                                  // a page past the end
	is.Equal(len(platformtest.Items(t, "data", platformtest.Conform(t, "empty feed", platformtest.DecodeAny(t, res), pageFields)["data"])), 0) // [] not null

	res = dev.Do(t, "GET", "/v1/messages?limit=100", "")
	is.Equal(res.Status, 200) // messages list
	list := platformtest.Conform(t, "messages", platformtest.DecodeAny(t, res), pageFields)
	msgs := platformtest.Items(t, "messages.data", list["data"])
	is.Equal(len(msgs), 6) // every channel
	var inApp []string
	for _, m := range msgs {
		msg := conformMessage(t, "messages.data", m, listedChats, false)
		if msg["channel"] == "in_app" && msg["transactionId"] == "tx-1" {
			inApp = append(inApp, msg["_id"].(string))
		}
	}
	res = dev.Do(t, "GET", "/v1/messages?transactionId=nope", "")
	is.Equal(res.Status, 200)                                                                                                                      // no match
	is.Equal(len(platformtest.Items(t, "data", platformtest.Conform(t, "empty messages", platformtest.DecodeAny(t, res), pageFields)["data"])), 0) // [] not null

	for _, mark := range []string{"read", "seen", "unread", "unseen"} {
		ids, _ := json.Marshal(inApp)
		res = dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":`+string(ids)+`,"markAs":"`+mark+`"}`)
		is.Equal(res.Status, 201) // mark-as: 201
		for _, m := range platformtest.Items(t, "mark-as", platformtest.DecodeAny(t, res)) {
			conformMessage(t, "mark-as "+mark, m, allProviders, true)
		}
	}
	res = dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+inApp[0]+`","markAs":"read"}`)
	is.Equal(res.Status, 201) // one id as a string
	is.Equal(len(platformtest.Items(t, "mark-as", platformtest.DecodeAny(t, res))), 1)

	res = dev.Do(t, "DELETE", "/v1/messages/"+inApp[0], "")
	is.Equal(res.Status, 200) // deleting a message: 200
	platformtest.Conform(t, "DELETE message", platformtest.DecodeAny(t, res), []platformtest.Field{{Name: "acknowledged", Kind: "bool", Required: true},
		{Name: "status", Kind: "string", Required: true, Enum: []string{"deleted"}}})
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
	t.Run("OK in-app markup is sanitized", func(t *testing.T) {
		is := is.New(t)
		is.Equal(w.sendStep(t, "esc", 2, "ada", "tx-inbox", payload)["status"], "sent") // in_app delivered
		res := dev.Do(t, "GET", "/v1/subscribers/ada/notifications/feed", "")
		var feed struct {
			Data []struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		res.Decode(t, &feed)
		is.Equal(feed.Data[0].Content, `Hello `) // the payload's script is gone
		res = dev.Do(t, "GET", "/v1/messages?transactionId=tx-inbox", "")
		var list struct {
			Data []struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		res.Decode(t, &list)
		is.Equal(list.Data[0].Content, `Hello `) // stored sanitized
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
			details := platformtest.Items(t, "details", out["details"])
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
		{"Err feed payload not base64", "GET", "/v1/subscribers/ada/notifications/feed?payload=!!!", "", 400},
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
				platformtest.Conform(t, tc.name, platformtest.DecodeAny(t, res), pageFields)
				return
			}
			body := platformtest.Conform(t, tc.name, platformtest.DecodeAny(t, res), platformtest.ErrorFields)
			if res.Status == 422 {
				_, ok := body["errors"].(map[string]any)
				is.True(ok) // every 422 carries errors (docs/api.md, "What strict clients check")
			}
		})
	}
}

// platformtest.ErrorFields is the error body (docs/api.md, "Errors").
func orEmpty(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}

package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/templates"
)

// rendered is a step's controls after Liquid, ready to store and send.
type rendered struct {
	content []byte  // stored content: a JSON string, or an EmailBlock array
	body    string  // the text body of sms, chat, push and in_app
	subject *string // email and in_app subject, push title
	html    string  // email HTML as sent
	text    string  // email plain-text alternative
	avatar  *string
	cta     []byte
	data    []byte // in_app data object, or nil
	payload []byte
}

// message fills the rendered parts of a provider message.
func (r *rendered) message(m Message) Message {
	m.Subject, m.Title = deref(r.subject), deref(r.subject)
	m.HTML, m.Text, m.Content, m.Payload = r.html, r.text, r.body, r.payload
	return m
}

// bindings are the variables templates see: subscriber, payload, steps,
// the actor when the trigger named one, the trigger's contexts (and the
// tenant among them), and the step's render budget.
func bindings(d *Delivery, sc stepContent) (map[string]any, error) {
	vars := map[string]any{"subscriber": templates.Normalize(d.Subscriber.Fields())}
	if sc.contexts != nil {
		vars["context"] = sc.contexts
		if t, ok := sc.contexts["tenant"].(map[string]any); ok {
			// the older tenant.* reads the tenant context
			tenant := map[string]any{"id": t["id"], "identifier": t["id"], "data": t["data"]}
			if data, ok := t["data"].(map[string]any); ok {
				tenant["name"] = data["name"]
			}
			vars["tenant"] = tenant
		}
	}
	if d.ActorSubscriber != nil {
		vars["actor"] = templates.Normalize(d.ActorSubscriber.Fields())
	}
	if len(d.Payload) > 0 {
		p, err := decodeNormalized(d.Payload)
		if err != nil {
			return nil, fmt.Errorf("payload: %v", err)
		}
		vars["payload"] = p
	}
	steps := map[string]any{}
	if d.Steps != nil {
		steps = templates.Normalize(d.Steps).(map[string]any)
	}
	vars["steps"] = steps
	templates.ShareBudget(vars) // every template of the step draws on one budget
	return vars, nil
}

// decodeNormalized decodes JSON as Liquid bindings: whole numbers as ints.
func decodeNormalized(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return templates.Normalize(v), nil
}

// stepContent is what a step renders with besides its controls.
type stepContent struct {
	// layout is the HTML of the email's layout (docs/content.md,
	// "Layouts"), "" for none; builtIn asks for Herald's own wrapper
	// instead, when the environment keeps no layout.
	layout  string
	builtIn bool
	// keys are the workflow's translations in the subscriber's locale
	// (docs/content.md, "Translations"), when translate is on; missing
	// collects the keys a template referenced and no locale had.
	keys      map[string]string
	translate bool
	missing   map[string]bool
	// contexts are the trigger's contexts as templates read them:
	// context.<type>.{id, data} (docs/content.md, "Contexts").
	contexts map[string]any
}

// content resolves the content d renders with: the workflow's
// translations, and, for an email, its layout (the one named, else the
// environment's default) translated with the layout's own.
func (e *Deliverer) content(ctx context.Context, d *Delivery) (c stepContent, err error) {
	src := e.messages.src.Content
	c.missing = map[string]bool{}
	if c.contexts, err = e.contexts(ctx, d); err != nil {
		return c, err
	}
	locale := deref(d.Subscriber.Locale)
	if src != nil {
		if c.keys, c.translate, err = src.Translations(ctx, d.EnvironmentID, "workflow", d.WorkflowID, locale); err != nil {
			return c, err
		}
	}
	if d.Channel != "email" {
		return c, nil
	}
	var overrides map[string]any
	json.Unmarshal(d.Overrides, &overrides)
	id, use := layoutChoice(d.Controls, overrides, d.StepID)
	switch {
	case !use:
		return c, nil
	case src == nil:
		c.builtIn = true
		return c, nil
	}
	l, ok, err := src.EmailLayout(ctx, d.EnvironmentID, id)
	if err == nil && !ok && id != "" {
		l, ok, err = src.EmailLayout(ctx, d.EnvironmentID, "")
	}
	if err != nil || !ok {
		c.builtIn = true
		return c, err
	}
	c.layout = l.HTML
	if l.TranslationEnabled {
		keys, on, err := src.Translations(ctx, d.EnvironmentID, "layout", l.LayoutID, locale)
		if err != nil {
			return c, err
		}
		if on {
			c.layout = templates.Translate(c.layout, keys, c.missing)
		}
	}
	return c, nil
}

// contexts reads the data of the trigger's contexts: a context deleted
// since reads as its id with empty data.
func (e *Deliverer) contexts(ctx context.Context, d *Delivery) (map[string]any, error) {
	if len(d.ContextKeys) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	for _, key := range d.ContextKeys {
		typ, id, _ := strings.Cut(key, ":")
		out[typ] = map[string]any{"id": id, "data": map[string]any{}}
	}
	src := e.messages.src.Contexts
	if src == nil {
		return out, nil
	}
	found, err := src.Contexts(ctx, d.EnvironmentID, d.ContextKeys)
	if err != nil {
		return nil, err
	}
	for _, c := range found {
		data, err := contextData.decode(c.Data)
		if err != nil {
			return nil, fmt.Errorf("context %s: %v", c.Key(), err)
		}
		out[c.Type] = map[string]any{"id": c.ID, "data": data}
	}
	return out, nil
}

// contextData keeps contexts' data decoded, by its JSON text: every step
// sent on behalf of a tenant reads the same few objects, and the same text
// always decodes to the same value, so nothing ever needs forgetting. The
// values are shared by the deliveries that read them, which only read
// them (templates render from them; bindings wraps them in maps of its
// own).
var contextData = decodedCache{limit: 1024, maxText: 8 << 10}

// decodedCache is a bounded map from JSON text to its decoded value; past
// limit entries it starts over. Texts over maxText bytes are decoded each
// time, so that a few large contexts cannot hold much memory.
type decodedCache struct {
	limit, maxText int

	mu      sync.Mutex
	entries map[string]any
}

func (c *decodedCache) decode(raw []byte) (any, error) {
	if len(raw) > c.maxText {
		return decodeNormalized(raw)
	}
	c.mu.Lock()
	v, ok := c.entries[string(raw)]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := decodeNormalized(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= c.limit {
		c.entries = map[string]any{}
	}
	c.entries[string(raw)] = v
	c.mu.Unlock()
	return v, nil
}

// missingDetail is the warning an execution detail records for the
// translation keys a step's templates referenced and no locale had: the
// message went out with the keys in their place.
func (c stepContent) missingDetail(providerID string) []Detail {
	if len(c.missing) == 0 {
		return nil
	}
	return []Detail{{Status: "Warning", Source: "Internal", ProviderID: providerID,
		Detail: "Translation missing for " + strings.Join(templates.SortedKeys(c.missing), ", ")}}
}

// renderStep renders the step's controls for its channel (docs/api.md,
// "Step controls") with the content resolved for it.
func renderStep(d *Delivery, sc stepContent) (*rendered, error) {
	vars, err := bindings(d, sc)
	if err != nil {
		return nil, err
	}
	c := d.Controls
	if c == nil {
		c = map[string]any{}
	}
	if sc.translate {
		c = templates.TranslateValue(c, sc.keys, sc.missing).(map[string]any)
	}
	r := &rendered{cta: []byte("{}"), payload: orEmpty(d.Payload, "{}")}
	text := func(key string) (string, error) {
		v, ok := c[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s must be a string", key)
		}
		out, err := templates.RenderText(s, vars)
		if err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return out, nil
	}
	optional := func(key string) (*string, error) {
		if _, ok := c[key].(string); !ok {
			return nil, nil
		}
		s, err := text(key)
		return &s, err
	}

	switch d.Channel {
	case "in_app":
		if r.body, err = text("body"); err != nil {
			return nil, err
		}
		if r.subject, err = optional("subject"); err != nil {
			return nil, err
		}
		// Every rendered output but data is sanitized unless the step opts
		// out, as the reference platform's in-app renderer does.
		clean := templates.SanitizeInApp
		if raw, _ := c["disableOutputSanitization"].(bool); raw {
			clean = func(s string) string { return s }
		}
		r.body = clean(r.body)
		if r.subject != nil {
			*r.subject = clean(*r.subject)
		}
		if r.avatar, err = optional("avatar"); err != nil {
			return nil, err
		}
		if r.avatar != nil {
			*r.avatar = clean(*r.avatar)
		}
		if r.cta, err = inAppCTA(c, vars, clean); err != nil {
			return nil, err
		}
		if data, ok := c["data"].(map[string]any); ok {
			out, err := templates.RenderValue(data, vars)
			if err != nil {
				return nil, fmt.Errorf("data: %w", err)
			}
			r.data, _ = json.Marshal(out)
		}
	case "email":
		subject, err := text("subject")
		if err != nil {
			return nil, err
		}
		r.subject = &subject
		editor, _ := c["editorType"].(string)
		// Values are escaped in the HTML unless the step opts out.
		raw, _ := c["disableOutputSanitization"].(bool)
		var blocks []templates.EmailBlock
		if r.html, blocks, err = templates.RenderEmail(c["body"], editor, vars, raw); err != nil {
			return nil, err
		}
		switch {
		case sc.layout != "":
			if r.html, err = templates.ApplyLayout(sc.layout, r.html, vars, raw); err != nil {
				return nil, fmt.Errorf("layout: %w", err)
			}
		case sc.builtIn:
			r.html = templates.WithLayout(subject, r.html)
		}
		r.text = templates.PlainText(r.html)
		if blocks != nil {
			r.content, _ = json.Marshal(blocks)
		} else {
			r.content, _ = json.Marshal(r.html)
		}
		return r, nil
	case "push":
		if r.subject, err = optional("subject"); err != nil {
			return nil, err
		}
		fallthrough
	default: // sms, chat, push
		if r.body, err = text("body"); err != nil {
			return nil, err
		}
	}
	r.content, _ = json.Marshal(r.body)
	return r, nil
}

// inAppCTA builds the MessageCTA (docs/api.md, "Calls to action") from the
// in_app controls: redirect.url is the redirect, primaryAction and
// secondaryAction the buttons. Each rendered string passes through clean.
func inAppCTA(c map[string]any, vars map[string]any, clean func(string) string) ([]byte, error) {
	render := func(tmpl string) (string, error) {
		out, err := templates.RenderText(tmpl, vars)
		return clean(out), err
	}
	cta := map[string]any{"type": "redirect", "data": map[string]any{}}
	if redirect := obj(c, "redirect"); str(redirect, "url") != "" {
		url, err := render(str(redirect, "url"))
		if err != nil {
			return nil, fmt.Errorf("redirect.url: %w", err)
		}
		data := map[string]any{"url": url}
		if t := str(redirect, "target"); t != "" {
			data["target"] = t
		}
		cta["data"] = data
	}
	var buttons []any
	for _, b := range []struct{ key, kind string }{{"primaryAction", "primary"}, {"secondaryAction", "secondary"}} {
		action := obj(c, b.key)
		if str(action, "label") == "" {
			continue
		}
		label, err := render(str(action, "label"))
		if err != nil {
			return nil, fmt.Errorf("%s.label: %w", b.key, err)
		}
		button := map[string]any{"type": b.kind, "content": label}
		if url := str(obj(action, "redirect"), "url"); url != "" {
			if button["url"], err = render(url); err != nil {
				return nil, fmt.Errorf("%s.redirect.url: %w", b.key, err)
			}
		}
		buttons = append(buttons, button)
	}
	if len(buttons) > 0 {
		cta["action"] = map[string]any{"status": "pending", "buttons": buttons}
	}
	return json.Marshal(cta)
}

// newMessage is the row for a delivery about to be sent. withSummary keeps
// the subscriber's feed summary in it, for a feed read without a
// subscriber source; with one, the feed embeds the subscriber as it is
// now, and the copy would only add to an in-app notification's bytes on
// disk (TestFootprint_InAppNotification).
func newMessage(d *Delivery, r *rendered, targets []target, now time.Time, withSummary bool) *message {
	at := sqldb.FormatTime(now)
	sum := []byte("{}")
	if withSummary {
		sum, _ = json.Marshal(summaryOf(d.Subscriber))
	}
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	tagsJSON, _ := json.Marshal(tags)
	m := &message{
		ID: sqldb.NewIDAt(now), EnvironmentID: d.EnvironmentID, OrganizationID: d.OrganizationID,
		JobID: d.JobID, NotificationID: d.NotificationID, SubscriberID: d.Subscriber.ID,
		ExternalSubscriber: d.Subscriber.SubscriberID, TemplateID: d.WorkflowDatabaseID,
		MessageTemplateID: d.StepDatabaseID, TemplateIdentifier: d.WorkflowID, StepID: d.StepID,
		TransactionID: d.TransactionID, Channel: d.Channel, ProviderID: targets[0].in.ProviderID,
		Content: r.content, Subject: r.subject, Avatar: r.avatar, CTA: r.cta,
		Payload: r.payload, Overrides: orEmpty(d.Overrides, "{}"), Data: r.data, Tags: tagsJSON,
		Actor: actorJSON(d.Actor), SubscriberSummary: sum, Status: "sent",
		DeliveredAt: []byte("[]"), Outcome: []byte("{}"), CreatedAt: at, UpdatedAt: at,
		ContextKeys: contextColumn(d.ContextKeys),
	}
	switch d.Channel {
	case "email":
		m.Email = d.Subscriber.Email
	case "sms":
		m.Phone = d.Subscriber.Phone
	case "chat":
		m.DirectWebhookURL = &targets[0].msg.WebhookURL
	case "push":
		m.Title = r.subject
		var tokens []string
		for _, t := range targets {
			tokens = append(tokens, t.msg.DeviceTokens...)
		}
		m.DeviceTokens, _ = json.Marshal(tokens)
	}
	return m
}

// actorJSON is the actor (docs/api.md, "The feed"): {type, data}, "none"
// when not given.
func actorJSON(raw json.RawMessage) []byte {
	var a struct {
		Type string  `json:"type"`
		Data *string `json:"data"`
	}
	known := map[string]bool{"none": true, "user": true, "system_icon": true, "system_custom": true}
	if json.Unmarshal(raw, &a) != nil || !known[a.Type] {
		return []byte(noActor)
	}
	b, _ := json.Marshal(a)
	return b
}

// orEmpty returns raw, or def when raw is absent or null.
func orEmpty(raw json.RawMessage, def string) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte(def)
	}
	return raw
}

package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/platform"
)

// webhooksData is what the Webhooks page shows.
type webhooksData struct {
	Page       webhooks.Page[webhooks.Endpoint]
	Problem    string
	Prev, Next string
	Types      []webhooks.EventType
	Form       form // the new endpoint's
}

// handleWebhooks serves GET /console/env/{env}/webhooks: the environment's
// outbound webhook endpoints, newest first, and the form to add one.
func handleWebhooks(wh Webhooks) handler {
	return func(p *page) error { return renderWebhooks(p, wh, newEndpointForm(), http.StatusOK) }
}

// newEndpointForm is the empty form of a new endpoint: every event type,
// active.
func newEndpointForm() form {
	return form{Values: url.Values{"allEvents": {"true"}, "active": {"true"}}, Errors: map[string]string{}}
}

func renderWebhooks(p *page, wh Webhooks, f form, status int) error {
	data := webhooksData{Types: webhooks.EventTypes, Form: f}
	q := keep(p.r.URL.Query(), []string{"after", "before"})
	c, problem := cursorOf(q, 20)
	if problem == "" {
		var err error
		data.Page, err = wh.Endpoints(p.r.Context(), p.env.ID, c)
		if err != nil {
			return err
		}
		data.Prev, data.Next = cursorLinks(p.r.URL.Path, q, derefString(data.Page.Previous), derefString(data.Page.Next))
	}
	data.Problem = problem
	return p.renderStatus(status, "webhooks", "webhooks", "Webhooks", data)
}

// cursorOf reads a webhooks list's page from the query: its problem,
// shown above an empty list, for a cursor no page gave.
func cursorOf(q url.Values, limit int) (webhooks.Cursor, string) {
	c := webhooks.Cursor{Limit: limit}
	for _, side := range []struct {
		name string
		dst  *string
	}{{"after", &c.After}, {"before", &c.Before}} {
		if v := q.Get(side.name); v != "" {
			id, ok := webhooks.DecodeCursor(v)
			if !ok {
				return webhooks.Cursor{}, side.name + " is not a cursor this list gave."
			}
			*side.dst = id
		}
	}
	if c.After != "" && c.Before != "" {
		return webhooks.Cursor{}, "before cannot be combined with after."
	}
	return c, ""
}

// refusedEndpoint is form.refused for an endpoint's form: a problem with
// one of the event types (eventTypes.3) shows on the event types' boxes.
func refusedEndpoint(f *form, err error) bool {
	if !f.refused(err) {
		return false
	}
	for name, problem := range f.Errors {
		if strings.HasPrefix(name, "eventTypes.") {
			delete(f.Errors, name)
			f.Errors["eventTypes"] = problem
		}
	}
	return true
}

// endpointInput reads an endpoint's form: URL, description, active, and
// the event types ticked, or every one.
func endpointInput(f form) webhooks.EndpointInput {
	u, desc, active := f.Value("url"), f.Value("description"), f.Checked("active")
	in := webhooks.EndpointInput{URL: &u, Description: &desc, Active: &active}
	if f.Checked("allEvents") {
		in.AllEvents = true
		return in
	}
	in.EventTypes = append([]string{}, f.Values["eventTypes"]...)
	return in
}

// handleWebhookCreate serves POST /console/env/{env}/webhooks: a new
// endpoint, under the rules of POST /v2/webhooks/endpoints, opened with
// its signing secret shown this once.
func handleWebhookCreate(wh Webhooks) handler {
	return func(p *page) error {
		f := newForm(p.r)
		in := endpointInput(f)
		if !in.AllEvents && len(in.EventTypes) == 0 {
			f.fail("eventTypes", "tick at least one event type, or every one")
			return renderWebhooks(p, wh, f, http.StatusUnprocessableEntity)
		}
		e, err := wh.CreateEndpoint(p.r.Context(), p.tenant(), in)
		if err != nil {
			if !refusedEndpoint(&f, err) {
				return err
			}
			return renderWebhooks(p, wh, f, statusOf(err))
		}
		return renderWebhook(p, wh, webhookData{Shown: &shownOnce{What: "secret", Value: e.Secret}}, http.StatusCreated, e.ID)
	}
}

// webhookData is what an endpoint's page shows.
type webhookData struct {
	E          webhooks.Endpoint
	Rows       []deliveryRow // a page of its delivery log
	Problem    string        // of the log's page
	Prev, Next string
	Types      []webhooks.EventType
	Form       form // the endpoint's own
	Test       form // the test event's
	Replay     form // the replay's
	Shown      *shownOnce
}

// handleWebhook serves GET /console/env/{env}/webhooks/{id}: the endpoint's
// form, its delivery log a page at a time, a test event and a replay.
func handleWebhook(wh Webhooks) handler {
	return func(p *page) error { return renderWebhook(p, wh, webhookData{}, http.StatusOK, p.r.PathValue("id")) }
}

func renderWebhook(p *page, wh Webhooks, data webhookData, status int, id string) error {
	ctx := p.r.Context()
	e, err := wh.Endpoint(ctx, p.env.ID, id)
	if err != nil {
		return endpointMissing(err)
	}
	data.E, data.Types = e, webhooks.EventTypes
	if data.Form.Values == nil {
		data.Form = endpointForm(e)
	}
	q := keep(p.r.URL.Query(), []string{"after", "before"})
	c, problem := cursorOf(q, 25)
	if data.Problem = problem; problem == "" {
		log, err := wh.Deliveries(ctx, p.env.ID, e.ID, c)
		if err != nil {
			return endpointMissing(err)
		}
		for _, d := range log.Data {
			data.Rows = append(data.Rows, deliveryRow{Delivery: d, Last: lastAttempt(d.Attempts)})
		}
		data.Prev, data.Next = cursorLinks(p.envURL("webhooks", e.ID), q, derefString(log.Previous), derefString(log.Next))
	}
	return p.renderStatus(status, "webhook", "webhooks", e.URL, data)
}

// deliveryRow is a delivery as the log shows it, with its latest attempt.
type deliveryRow struct {
	webhooks.Delivery
	Last *webhooks.Attempt // nil before the first
}

func lastAttempt(as []webhooks.Attempt) *webhooks.Attempt {
	if len(as) == 0 {
		return nil
	}
	return &as[len(as)-1]
}

// endpointForm is the endpoint's form as saved.
func endpointForm(e webhooks.Endpoint) form {
	f := form{Values: url.Values{"url": {e.URL}, "description": {e.Description}, "eventTypes": e.EventTypes},
		Errors: map[string]string{}}
	if e.Active {
		f.Values.Set("active", "true")
	}
	if e.EventTypes == nil {
		f.Values.Set("allEvents", "true")
	}
	return f
}

// endpointMissing is the 404 of an endpoint the environment lacks.
func endpointMissing(err error) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("There is no such webhook endpoint in this environment")
	}
	return err
}

// handleWebhookUpdate serves POST /console/env/{env}/webhooks/{id}: the
// form's changes, under the rules of PATCH /v2/webhooks/endpoints/{endpointId}.
// Unticking active disables the endpoint; ticking it again enables it.
func handleWebhookUpdate(wh Webhooks) handler {
	return func(p *page) error {
		f := newForm(p.r)
		id := p.r.PathValue("id")
		in := endpointInput(f)
		if !in.AllEvents && len(in.EventTypes) == 0 {
			f.fail("eventTypes", "tick at least one event type, or every one")
			return renderWebhook(p, wh, webhookData{Form: f}, http.StatusUnprocessableEntity, id)
		}
		if _, err := wh.UpdateEndpoint(p.r.Context(), p.env.ID, id, in); err != nil {
			if !refusedEndpoint(&f, err) {
				return endpointMissing(err)
			}
			return renderWebhook(p, wh, webhookData{Form: f}, statusOf(err), id)
		}
		return p.redirect(p.envURL("webhooks", id), "The endpoint is saved.")
	}
}

// handleWebhookDelete serves POST /console/env/{env}/webhooks/{id}/delete:
// the endpoint and its delivery log go.
func handleWebhookDelete(wh Webhooks) handler {
	return func(p *page) error {
		if err := wh.DeleteEndpoint(p.r.Context(), p.env.ID, p.r.PathValue("id")); err != nil {
			return endpointMissing(err)
		}
		return p.redirect(p.envURL("webhooks"), "The endpoint is deleted.")
	}
}

// handleWebhookSecret serves POST /console/env/{env}/webhooks/{id}/secret:
// a new signing secret, shown this once; the old one keeps signing beside
// it for 24 hours. Herald keeps the secret sealed and shows it at no other
// time, as its API does.
func handleWebhookSecret(wh Webhooks) handler {
	return func(p *page) error {
		id := p.r.PathValue("id")
		secret, err := wh.RotateSecret(p.r.Context(), p.env.ID, id)
		if err != nil {
			return endpointMissing(err)
		}
		return renderWebhook(p, wh, webhookData{Shown: &shownOnce{What: "rotated", Value: secret}}, http.StatusOK, id)
	}
}

// handleWebhookTest serves POST /console/env/{env}/webhooks/{id}/test: a
// sample event of the type chosen, for this endpoint alone.
func handleWebhookTest(wh Webhooks) handler {
	return func(p *page) error {
		f := newForm(p.r)
		id := p.r.PathValue("id")
		d, err := wh.SendTest(p.r.Context(), p.env.ID, id, f.Value("eventType"))
		if err != nil {
			if !f.refused(err) {
				return endpointMissing(err)
			}
			return renderWebhook(p, wh, webhookData{Test: f}, statusOf(err), id)
		}
		return p.redirect(p.envURL("webhooks", id), "A test "+d.EventType+" event is queued; its delivery is below.")
	}
}

// handleWebhookReplay serves POST /console/env/{env}/webhooks/{id}/replay:
// every delivery to the endpoint since the time given is sent again, each
// under the webhook-id it was first sent with. The time is UTC, as RFC
// 3339 or as the browser's date and time field gives it (the page's script
// converts the member's local time).
func handleWebhookReplay(wh Webhooks) handler {
	return func(p *page) error {
		f := newForm(p.r)
		id := p.r.PathValue("id")
		raw := f.Value("since")
		if raw == "" {
			raw = f.Value("sinceLocal") // no script ran to convert it
		}
		since, ok := parseSince(raw)
		if !ok {
			f.fail("since", "must be a date and time, as 2026-01-02T15:04 (UTC) or 2026-01-02T15:04:05Z")
			return renderWebhook(p, wh, webhookData{Replay: f}, http.StatusUnprocessableEntity, id)
		}
		n, err := wh.ReplaySince(p.r.Context(), p.env.ID, id, since)
		if err != nil {
			return endpointMissing(err)
		}
		return p.redirect(p.envURL("webhooks", id), plural(int(n), "delivery", "deliveries")+" will be sent again.")
	}
}

// parseSince reads a replay's time: RFC 3339, or a date and time field's
// value, taken as UTC.
func parseSince(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// handleDeliveryReplay serves POST
// /console/env/{env}/webhooks/{id}/deliveries/{deliveryId}/replay: one
// delivery sent again under its webhook-id.
func handleDeliveryReplay(wh Webhooks) handler {
	return func(p *page) error {
		id := p.r.PathValue("id")
		if _, err := wh.Replay(p.r.Context(), p.env.ID, id, p.r.PathValue("deliveryId")); err != nil {
			if errors.Is(err, platform.ErrNotFound) {
				return platform.NotFound("There is no such delivery to this endpoint")
			}
			return err
		}
		return p.redirect(p.envURL("webhooks", id), "The delivery will be sent again.")
	}
}

package workflows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/templates"
)

// This file serves the editor's live preview (docs/editor.md, "Preview"):
// a step's controls rendered as a delivery renders them, against a sample
// subscriber, actor, payload and digest events that the caller may replace
// in part. Nothing is stored and nothing is sent.

// previewRequest is the body of POST
// /v2/workflows/{workflowId}/step/{stepId}/preview: the control values to
// render (the step's own when absent) and what the templates see.
type previewRequest struct {
	ControlValues  map[string]any `json:"controlValues"`
	PreviewPayload previewPayload `json:"previewPayload"`
}

// previewPayload is what a step's templates see: each part the caller
// gives replaces or extends the sample one.
type previewPayload struct {
	Subscriber map[string]any `json:"subscriber,omitempty"`
	Actor      map[string]any `json:"actor,omitempty"`
	Payload    map[string]any `json:"payload,omitempty"`
	Steps      map[string]any `json:"steps,omitempty"`
	Context    map[string]any `json:"context,omitempty"`
	Env        map[string]any `json:"env,omitempty"`
}

// previewResponse is the answer: the variables the render used, their
// schema, and the rendered step or the template error that stopped it.
type previewResponse struct {
	PreviewPayloadExample previewPayload `json:"previewPayloadExample"`
	Schema                schema         `json:"schema"`
	Result                previewResult  `json:"result"`
}

type previewResult struct {
	Type    string        `json:"type"`
	Preview any           `json:"preview,omitempty"`
	Error   *previewError `json:"error,omitempty"`
}

// previewError is a control that does not render: which one, why, and
// where in it (line and column from 1; 0 when the template names no place).
type previewError struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
	Control string `json:"control"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

// previewFailed carries a previewError out of a render.
type previewFailed struct{ e previewError }

func (p *previewFailed) Error() string { return p.e.Message }

// handleStepPreview serves POST /v2/workflows/{workflowId}/step/{stepId}/preview.
// A template error is part of a 201 answer, with its place: the editor
// shows it beside the control while the author types.
func handleStepPreview(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeOptional[previewRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.get(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		i, err := stepIndex(wf, r.PathValue("stepId"))
		if err != nil {
			return err
		}
		controls := req.ControlValues
		if controls == nil {
			controls = wf.Steps[i].ControlValues
		} else {
			fields := map[string]platform.FieldError{}
			validateControls(wf.Steps[i].Type, controls, "controlValues", fields)
			if len(fields) > 0 {
				return platform.Invalid(fields)
			}
		}
		controls, layout, err := store.previewContent(r.Context(), wf, wf.Steps[i].Type, controls, req.PreviewPayload.Subscriber)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, preview(wf, i, controls, req.PreviewPayload, layout))
	})
}

// stepIndex finds the step of w whose stepId or _id is key.
func stepIndex(w *workflow, key string) (int, error) {
	for i, st := range w.Steps {
		if st.StepID == key || st.ID == key {
			return i, nil
		}
	}
	e := platform.NotFound("Step cannot be found")
	e.Extra = map[string]any{"stepId": key, "workflowId": w.WorkflowID}
	return 0, e
}

// previewContent is what a step of kind renders with for a subscriber
// (the sample one, overridden by subscriber), as a delivery's content is:
// controls translated into its locale, and an email's layout.
func (s *Store) previewContent(ctx context.Context, w *workflow, kind string, controls, subscriber map[string]any) (map[string]any, string, error) {
	locale, _ := mergeMaps(sampleSubscriber(), subscriber)["locale"].(string)
	layout, err := s.previewLayout(ctx, w.EnvironmentID, kind, controls, locale)
	if err != nil {
		return nil, "", err
	}
	controls, err = s.translateControls(ctx, w, controls, locale)
	return controls, layout, err
}

// translateControls resolves the {{t.key}} of controls in locale, as a
// delivery to a subscriber of that locale does, when w has translations
// on; a missing key stays as its name.
func (s *Store) translateControls(ctx context.Context, w *workflow, controls map[string]any, locale string) (map[string]any, error) {
	keys, on, err := s.Translations(ctx, w.EnvironmentID, "workflow", w.WorkflowID, locale)
	if err != nil || !on || controls == nil {
		return controls, err
	}
	return templates.TranslateValue(controls, keys, map[string]bool{}).(map[string]any), nil
}

// previewLayout is the HTML source of the layout an email step with
// controls c is sent inside, found as a delivery finds it: the layout its
// layoutId names, else the environment's default, translated into locale
// when the layout has translations on; "" for Herald's built-in wrapper,
// when neither has a body, and for any other step.
func (s *Store) previewLayout(ctx context.Context, envID, kind string, c map[string]any, locale string) (string, error) {
	if kind != "email" {
		return "", nil
	}
	id, _ := c["layoutId"].(string)
	l, ok, err := s.EmailLayout(ctx, envID, id)
	if err == nil && !ok && id != "" {
		l, ok, err = s.EmailLayout(ctx, envID, "")
	}
	if err != nil || !ok {
		return "", err
	}
	if !l.TranslationEnabled {
		return l.HTML, nil
	}
	keys, on, err := s.Translations(ctx, envID, "layout", l.LayoutID, locale)
	if err != nil || !on {
		return l.HTML, err
	}
	return templates.Translate(l.HTML, keys, map[string]bool{}), nil
}

// preview renders step i of w with controls against the sample variables,
// overridden by given; an email inside layout (previewLayout).
func preview(w *workflow, i int, controls map[string]any, given previewPayload, layout string) previewResponse {
	st := w.Steps[i]
	if controls == nil {
		controls = map[string]any{}
	}
	example := sampleVariables(w, i, controls, given)
	res := previewResponse{PreviewPayloadExample: example, Schema: variablesFor(w, i), Result: previewResult{Type: st.Type}}
	vars := map[string]any{
		"subscriber": templates.Normalize(deepCopy(example.Subscriber)),
		"actor":      templates.Normalize(deepCopy(example.Actor)),
		"payload":    templates.Normalize(deepCopy(example.Payload)),
		"steps":      templates.Normalize(deepCopy(example.Steps)),
	}
	templates.ShareBudget(vars) // the step's templates share one render budget, as a delivery's do
	out, err := renderPreview(st.Type, controls, vars, example.Payload, layout)
	var failed *previewFailed
	switch {
	case errors.As(err, &failed):
		res.Result.Error = &failed.e
	case err != nil:
		res.Result.Error = &previewError{Title: "The step cannot be rendered", Message: err.Error(),
			Hint: "Correct the control values"}
	default:
		res.Result.Preview = out
	}
	return res
}

// renderPreview renders a step of kind as a delivery of it would look, or
// for a step that sends nothing (delay, digest, throttle) what it will do.
func renderPreview(kind string, c map[string]any, vars, payload map[string]any, layout string) (any, error) {
	text := func(key string) (string, error) {
		s, _ := c[key].(string)
		return renderControl(key, s, vars, templates.RenderText)
	}
	switch kind {
	case "email":
		return emailPreview(c, vars, text, layout)
	case "in_app":
		return inAppPreview(c, vars)
	case "sms":
		body, err := text("body")
		if err != nil {
			return nil, err
		}
		encoding, segments := smsSegments(body)
		return map[string]any{"body": body, "length": utf8.RuneCountInString(body), "segments": segments, "encoding": encoding}, nil
	case "push":
		subject, err := text("subject")
		if err != nil {
			return nil, err
		}
		body, err := text("body")
		return map[string]any{"subject": subject, "body": body}, err
	case "chat":
		body, err := text("body")
		return map[string]any{"body": body}, err
	case "delay":
		return timing(c, "regular", "seconds", "type", "amount", "unit", "cron"), nil
	case "digest":
		out := timing(c, "regular", "seconds", "type", "amount", "unit", "cron", "digestKey", "lookBackWindow")
		events := sampleEvents(payload)
		out["events"], out["eventCount"] = events, len(events)
		return out, nil
	case "throttle":
		return timing(c, "fixed", "minutes", "type", "amount", "unit", "threshold", "throttleKey", "dynamicKey"), nil
	default: // custom: the values its code receives, rendered
		out, err := templates.RenderValue(c, vars)
		if err != nil {
			return nil, &previewFailed{previewError{Title: "Template error", Message: templates.Message(err),
				Hint: "Correct the Liquid in the step's control values"}}
		}
		return out, nil
	}
}

// renderControl renders the template src of control key; a failure is a
// previewFailed that says where in src it is.
func renderControl(key, src string, vars map[string]any, render func(string, map[string]any) (string, error)) (string, error) {
	out, err := render(src, vars)
	if err != nil {
		return "", controlError(key, src, err)
	}
	return out, nil
}

// controlError describes err, the failure to render control key's
// template src.
func controlError(key, src string, err error) error {
	pos, msg, ok := templates.Locate(src, err)
	e := previewError{Title: "Template error in " + key, Message: msg, Control: key,
		Hint: "Correct the Liquid of " + key}
	if ok {
		e.Line, e.Column = pos.Line, pos.Column
		e.Hint = fmt.Sprintf("Correct the Liquid of %s at line %d, column %d", key, pos.Line, pos.Column)
	}
	return &previewFailed{e}
}

// emailPreview is the subject and the HTML a subscriber receives: the body
// inside layout (Herald's built-in wrapper when ""), unless the step turns
// layouts off (layoutId null).
func emailPreview(c map[string]any, vars map[string]any, text func(string) (string, error), layout string) (any, error) {
	subject, err := text("subject")
	if err != nil {
		return nil, err
	}
	editor, _ := c["editorType"].(string)
	raw, _ := c["disableOutputSanitization"].(bool)
	body, _, err := templates.RenderEmail(c["body"], editor, vars, raw)
	if err != nil {
		src, _ := c["body"].(string)
		if inner := errors.Unwrap(err); inner != nil && src != "" {
			err = inner
		}
		return nil, controlError("body", src, err)
	}
	use := true
	if v, ok := c["layoutId"]; ok && v == nil {
		use = false
	}
	switch {
	case !use:
	case layout != "":
		if body, err = templates.ApplyLayout(layout, body, vars, raw); err != nil {
			return nil, &previewFailed{previewError{Title: "Template error in the layout", Message: templates.Message(err),
				Control: "layoutId", Hint: "Correct the Liquid of the layout, or choose another"}}
		}
	default:
		body = templates.WithLayout(subject, body)
	}
	return map[string]any{"subject": subject, "body": body, "layout": use}, nil
}

// inAppPreview is the in-app card: subject, body, avatar, buttons, redirect
// and data, sanitized as a delivery sanitizes them.
func inAppPreview(c map[string]any, vars map[string]any) (any, error) {
	clean := templates.SanitizeInApp
	if raw, _ := c["disableOutputSanitization"].(bool); raw {
		clean = func(s string) string { return s }
	}
	out := map[string]any{}
	field := func(key string, src string) (string, error) {
		s, err := renderControl(key, src, vars, templates.RenderText)
		return clean(s), err
	}
	for _, key := range []string{"subject", "body", "avatar"} {
		src, ok := c[key].(string)
		if !ok && key != "body" {
			continue
		}
		s, err := field(key, src)
		if err != nil {
			return nil, err
		}
		out[key] = s
	}
	redirect := func(path string, m map[string]any) (map[string]any, error) {
		u, _ := m["url"].(string)
		if u == "" {
			return nil, nil
		}
		url, err := field(path+".url", u)
		if err != nil {
			return nil, err
		}
		r := map[string]any{"url": url}
		if t, _ := m["target"].(string); t != "" {
			r["target"] = t
		}
		return r, nil
	}
	for _, key := range []string{"primaryAction", "secondaryAction"} {
		action, _ := c[key].(map[string]any)
		label, _ := action["label"].(string)
		if label == "" {
			continue
		}
		l, err := field(key+".label", label)
		if err != nil {
			return nil, err
		}
		a := map[string]any{"label": l}
		rd, _ := action["redirect"].(map[string]any)
		if r, err := redirect(key+".redirect", rd); err != nil {
			return nil, err
		} else if r != nil {
			a["redirect"] = r
		}
		out[key] = a
	}
	rd, _ := c["redirect"].(map[string]any)
	if r, err := redirect("redirect", rd); err != nil {
		return nil, err
	} else if r != nil {
		out["redirect"] = r
	}
	if data, ok := c["data"].(map[string]any); ok {
		d, err := templates.RenderValue(data, vars)
		if err != nil {
			return nil, &previewFailed{previewError{Title: "Template error in data", Message: templates.Message(err),
				Control: "data", Hint: "Correct the Liquid of data"}}
		}
		out["data"] = d
	}
	return out, nil
}

// timing is what a delay, digest or throttle step will do: its control
// values named in keys, with the type and unit it defaults to.
func timing(c map[string]any, defType, defUnit string, keys ...string) map[string]any {
	out := map[string]any{"type": defType, "unit": defUnit}
	for _, k := range keys {
		if v, ok := c[k]; ok && v != nil {
			out[k] = v
		}
	}
	if _, ok := out["amount"]; !ok && out["cron"] == nil {
		out["amount"] = 1
	}
	return out
}

// gsm7 holds the characters of the GSM 03.38 basic set and its extension
// (which count twice): a message of only these is sent in 7-bit segments.
const (
	gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsm7Ext   = "^{}\\[~]|€\f"
)

// smsSegments is how an SMS body is encoded and how many messages it is
// sent as: 160 GSM-7 units in one, 153 each when split; 70 UCS-2
// characters in one, 67 each when split.
func smsSegments(body string) (encoding string, segments int) {
	units, gsm := 0, true
	for _, r := range body {
		switch {
		case strings.ContainsRune(gsm7Basic, r):
			units++
		case strings.ContainsRune(gsm7Ext, r):
			units += 2
		default:
			gsm = false
		}
	}
	single, multi := 160, 153
	if !gsm {
		encoding, units, single, multi = "UCS-2", 0, 70, 67
		for _, r := range body {
			units += utf16.RuneLen(r)
		}
	} else {
		encoding = "GSM-7"
	}
	switch {
	case units == 0:
		return encoding, 0
	case units <= single:
		return encoding, 1
	}
	return encoding, (units + multi - 1) / multi
}

package console

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// editorData is what a workflow's editor page shows: the workflow as
// stored or as the form holds it, each step's preview, and its versions.
type editorData struct {
	W         workflows.Editable
	Form      form
	Previews  []workflows.StepPreview // by step, as the steps are
	Payload   string                  // the test payload, JSON
	PreviewAs string                  // the subscriberId previews render for; "" for the sample subscriber
	Picks     []string                // subscriberIds to offer for it
	Versions  []workflows.Version
	Types     []string
	Targets   []platform.Environment
	Compare   *syncCompare
	Diff      *versionDiff // two versions side by side (?diff=N&from=M)
	Test      *testRun     // a test send followed live (?test=<transactionId>)
	Unsaved   bool         // the page shows a draft that differs from what is saved
	CanTest   bool         // a test send is offered
	Channels  []string
}

// syncCompare is what syncing to an environment would change there.
type syncCompare struct {
	Env     platform.Environment
	Exists  bool
	Changes []string
}

// versionDiff is two versions side by side: what changed from one to the
// other, or why they cannot be compared.
type versionDiff struct {
	From, To int
	Changes  []workflows.Change
	Problem  string
}

// DiffPair is the two versions the compare form shows chosen: the pair
// compared, else the one before the newest and the newest.
func (d editorData) DiffPair() [2]int {
	switch {
	case d.Diff != nil:
		return [2]int{d.Diff.From, d.Diff.To}
	case len(d.Versions) > 1:
		return [2]int{d.Versions[1].Number, d.Versions[0].Number}
	case len(d.Versions) == 1:
		return [2]int{0, d.Versions[0].Number}
	}
	return [2]int{}
}

// Value is the control name of step i as the form shows it.
func (d editorData) Value(i int, f workflows.ControlField) string {
	c := d.W.Steps[i].Controls
	if f.Name == "values" && d.W.Steps[i].Type == "custom" {
		return prettyJSON(c)
	}
	v, ok := c[f.Name]
	if !ok || v == nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return prettyJSON(v)
}

// FieldError is the problem the save found with control name of step i.
func (d editorData) FieldError(i int, name string) string {
	if name == "values" {
		name = ""
	}
	key := "steps." + strconv.Itoa(i) + ".controlValues"
	if name != "" {
		key += "." + name
	}
	if e := d.Form.Error(key); e != "" {
		return e
	}
	return strings.Join(d.W.Steps[i].Issues[name], "; ")
}

// Preview is step i's preview, or nil.
func (d editorData) Preview(i int) *workflows.StepPreview {
	if i < len(d.Previews) {
		return &d.Previews[i]
	}
	return nil
}

// handleWorkflowEditor serves GET
// /console/env/{env}/workflows/{workflowId}/edit: the workflow's editor,
// each step previewed, its versions; ?compare=<environment> adds what a
// sync there would change. A viewer sees it read-only.
func handleWorkflowEditor(w Workflows, a Activity) handler {
	return func(p *page) error {
		key := p.r.PathValue("workflowId")
		e, err := w.Editable(p.r.Context(), p.env.ID, key)
		if err != nil {
			return err
		}
		d := editorData{W: e, Form: form{Errors: map[string]string{}}, Payload: "{}"}
		if id := p.r.URL.Query().Get("compare"); id != "" {
			d.Compare = &syncCompare{}
			for _, env := range p.envs {
				if env.ID == id {
					d.Compare.Env = env
				}
			}
			if d.Compare.Changes, d.Compare.Exists, err = w.SyncChanges(p.r.Context(), p.tenant(), key, id); err != nil {
				return err
			}
		}
		q := p.r.URL.Query()
		if q.Has("diff") {
			if d.Diff, err = compareVersions(p, w, key, q); err != nil {
				return err
			}
		}
		if tx := q.Get("test"); tx != "" {
			if d.Test, err = followTest(p, a, e.WorkflowID, tx); err != nil {
				return err
			}
		}
		return renderEditor(p, w, d, http.StatusOK)
	}
}

// compareVersions is version ?diff=N of the workflow named by key beside
// version ?from=M (the one before N unless given; 0 is nothing).
func compareVersions(p *page, w Workflows, key string, q url.Values) (*versionDiff, error) {
	to, err := strconv.Atoi(q.Get("diff"))
	from := to - 1
	if err == nil && q.Get("from") != "" {
		from, err = strconv.Atoi(q.Get("from"))
	}
	if err != nil || to < 1 || from < 0 {
		return &versionDiff{Problem: "Choose two versions to compare."}, nil
	}
	d := &versionDiff{From: from, To: to}
	d.Changes, err = w.VersionChanges(p.r.Context(), p.env.ID, key, from, to)
	var e *platform.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		d.Problem, err = e.Message+".", nil
	}
	return d, err
}

// renderEditor previews every step of d's workflow and renders the page.
func renderEditor(p *page, w Workflows, d editorData, status int) error {
	ctx := p.r.Context()
	key := d.W.WorkflowID
	if d.W.ID != "" {
		key = d.W.ID
	}
	var with workflows.PreviewWith
	if err := json.Unmarshal([]byte(d.Payload), &with.Payload); err != nil {
		d.Form.fail("payload", "must be a JSON object")
	}
	var err error
	if with.Subscriber, err = previewSubscriber(p, &d); err != nil {
		return err
	}
	draft := draftOf(d.W)
	for i := range d.W.Steps {
		pv, err := w.PreviewDraft(ctx, p.env.ID, key, draft, i, with)
		if err != nil && !d.Form.refused(err) {
			return err
		}
		if body, ok := pv.Preview["body"].(string); ok && pv.Type == "email" {
			pv.Preview["frame"] = p.envURL("previews", keepPreviewEmail(p.env.ID, body), "email")
		}
		d.Previews = append(d.Previews, pv)
	}
	if d.Versions, err = w.Versions(ctx, p.env.ID, key, 20); err != nil {
		return err
	}
	d.Types = workflows.StepTypes
	d.CanTest = p.c.d.Tests != nil
	d.Channels = workflows.Channels()
	for _, env := range p.envs {
		if env.ID != p.env.ID {
			d.Targets = append(d.Targets, env)
		}
	}
	p.w.Header().Set("Content-Security-Policy", editorPolicy)
	return p.renderStatus(status, "workflow", "workflows", d.W.Name, d)
}

// previewSubscriber is the subscriber d's previews render for, as its
// templates see it, or nil for the sample one; it also lists a few
// subscribers of the environment to pick from. An unknown subscriberId is
// said beside its field, and the sample stands in.
func previewSubscriber(p *page, d *editorData) (map[string]any, error) {
	subs := p.c.d.Subscribers
	if subs == nil {
		return nil, nil
	}
	list, err := subs.Search(p.r.Context(), p.env.ID, url.Values{"limit": {"20"}})
	if err != nil {
		return nil, err
	}
	for _, s := range list.Subscribers {
		d.Picks = append(d.Picks, s.SubscriberID)
	}
	if d.PreviewAs == "" {
		return nil, nil
	}
	s, err := subs.Subscriber(p.r.Context(), p.env.ID, d.PreviewAs)
	if errors.Is(err, platform.ErrNotFound) {
		d.Form.fail("previewSubscriber", "No subscriber has this subscriberId here; the sample subscriber stands in")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

func draftOf(e workflows.Editable) workflows.Draft {
	return workflows.Draft{Name: e.Name, WorkflowID: e.WorkflowID, Description: e.Description, Tags: e.Tags,
		Active: e.Active, Critical: e.Critical, Channels: e.Channels, Steps: e.Steps}
}

// readDraft reads the editor's form into the stored workflow e: its
// fields, and its steps in the form's order (s.<i>.…).
func readDraft(f *form, e workflows.Editable) workflows.Editable {
	e.Name, e.WorkflowID, e.Description = f.Value("name"), f.Value("workflowId"), f.Raw("description")
	e.Tags = nil
	for _, t := range strings.FieldsFunc(f.Value("tags"), func(r rune) bool { return r == ',' || r == '\n' }) {
		if t = strings.TrimSpace(t); t != "" {
			e.Tags = append(e.Tags, t)
		}
	}
	e.Active, e.Critical = f.Checked("active"), f.Checked("critical")
	if f.Value("prefs") != "" { // the form has the channel switches; one unticked is off
		e.Channels = map[string]bool{}
		for _, c := range workflows.Channels() {
			e.Channels[c] = f.Checked("pref." + c)
		}
	}
	e.Steps = nil
	for i := 0; i < 50; i++ {
		prefix := "s." + strconv.Itoa(i) + "."
		kind := f.Value(prefix + "type")
		if kind == "" {
			break
		}
		st := workflows.DraftStep{ID: f.Value(prefix + "id"), StepID: f.Value(prefix + "stepId"), Name: f.Value(prefix + "name"),
			Type: kind, Controls: map[string]any{}, Fields: workflows.ControlFields(kind), Issues: map[string][]string{}}
		for _, field := range st.Fields {
			raw := f.Raw(prefix + "c." + field.Name)
			path := "steps." + strconv.Itoa(i) + ".controlValues." + field.Name
			switch field.Kind {
			case "boolean":
				if f.Checked(prefix + "c." + field.Name) {
					st.Controls[field.Name] = true
				}
			case "number":
				if raw = strings.TrimSpace(raw); raw != "" {
					if n, err := strconv.ParseFloat(raw, 64); err == nil {
						st.Controls[field.Name] = n
					} else {
						st.Controls[field.Name] = raw // the save names it: must be a number
					}
				}
			case "json":
				if raw = strings.TrimSpace(raw); raw == "" {
					continue
				}
				var v any
				if err := json.Unmarshal([]byte(raw), &v); err != nil {
					f.fail(strings.TrimSuffix(path, ".values"), "is not JSON: "+err.Error())
					continue
				}
				if field.Name == "values" {
					if m, ok := v.(map[string]any); ok {
						st.Controls = m
					}
					continue
				}
				st.Controls[field.Name] = v
			default:
				if raw != "" {
					st.Controls[field.Name] = raw
				}
			}
		}
		e.Steps = append(e.Steps, st)
	}
	return e
}

// handleWorkflowEdit serves POST
// /console/env/{env}/workflows/{workflowId}/edit: op "save" saves the
// form as PUT /v2/workflows/{workflowId} saves its body, as a new
// version; "add", "up.<i>", "down.<i>" and "remove.<i>" change the steps
// on the page, which the next save keeps.
func handleWorkflowEdit(w Workflows) handler {
	return func(p *page) error {
		key := p.r.PathValue("workflowId")
		stored, err := w.Editable(p.r.Context(), p.env.ID, key)
		if err != nil {
			return err
		}
		f := newForm(p.r)
		d := editorData{W: readDraft(&f, stored), Form: f, Payload: orJSON(f.Raw("payload")), PreviewAs: f.Value("previewSubscriber")}
		d.W.ID, d.W.Status, d.W.UpdatedAt = stored.ID, stored.Status, stored.UpdatedAt
		op, arg, _ := strings.Cut(f.Value("op"), ".")
		i, _ := strconv.Atoi(arg)
		steps := d.W.Steps
		switch {
		case op == "add" && slices.Contains(workflows.StepTypes, f.Value("addType")):
			kind := f.Value("addType")
			steps = append(steps, workflows.DraftStep{Name: fmt.Sprintf("%s %d", channelName(kind), len(steps)+1), Type: kind,
				Controls: map[string]any{}, Fields: workflows.ControlFields(kind), Issues: map[string][]string{}})
		case op == "up" && i > 0 && i < len(steps):
			steps[i-1], steps[i] = steps[i], steps[i-1]
		case op == "down" && i >= 0 && i+1 < len(steps):
			steps[i], steps[i+1] = steps[i+1], steps[i]
		case op == "remove" && i >= 0 && i < len(steps):
			steps = slices.Delete(steps, i, i+1)
		case op == "save" && !d.Form.Invalid():
			draft := draftOf(d.W)
			draft.Note = f.Value("note")
			saved, err := w.SaveDraft(p.r.Context(), p.tenant(), key, draft)
			if err == nil {
				return p.redirect(p.envURL("workflows", saved.WorkflowID, "edit"), saved.Name+" is saved as a new version.")
			}
			if !d.Form.refused(err) {
				return err
			}
			return renderEditor(p, w, d, http.StatusUnprocessableEntity)
		}
		d.W.Steps, d.Unsaved = steps, true
		status := http.StatusOK
		if d.Form.Invalid() {
			status = http.StatusUnprocessableEntity
		}
		return renderEditor(p, w, d, status)
	}
}

// handleWorkflowPreview serves POST
// /console/env/{env}/workflows/{workflowId}/preview: the editor's page for
// the form as it is, every step previewed with the test payload; nothing
// is saved. The page asks for it as the author types.
func handleWorkflowPreview(w Workflows) handler {
	return func(p *page) error {
		stored, err := w.Editable(p.r.Context(), p.env.ID, p.r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		f := newForm(p.r)
		d := editorData{W: readDraft(&f, stored), Form: f, Payload: orJSON(f.Raw("payload")), PreviewAs: f.Value("previewSubscriber"),
			Unsaved: true}
		d.W.ID, d.W.Status, d.W.UpdatedAt = stored.ID, stored.Status, stored.UpdatedAt
		if len(d.W.Steps) == 0 {
			d.W.Steps = stored.Steps
		}
		return renderEditor(p, w, d, http.StatusOK)
	}
}

// handleWorkflowRestore serves POST
// /console/env/{env}/workflows/{workflowId}/versions/{version}/restore:
// the workflow as it was in that version, saved as a new version.
func handleWorkflowRestore(w Workflows) handler {
	return func(p *page) error {
		key := p.r.PathValue("workflowId")
		n, err := strconv.Atoi(p.r.PathValue("version"))
		if err != nil || n < 1 {
			return platform.NotFound("There is no such version")
		}
		if err := w.Restore(p.r.Context(), p.tenant(), key, n); err != nil {
			return err
		}
		e, err := w.Editable(p.r.Context(), p.env.ID, key)
		if err != nil {
			return err
		}
		return p.redirect(p.envURL("workflows", e.WorkflowID, "edit"), fmt.Sprintf("Version %d is restored, as a new version.", n))
	}
}

// orJSON is s, or {} when it is blank.
func orJSON(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// previewEmails keeps the emails the editor's previews rendered, briefly,
// so that its frame can load one from the console's own address under the
// email's policy (inline styles and remote images allowed, nothing run);
// an inline srcdoc frame would inherit the page's stricter policy. Keyed
// by environment and the email's hash; the oldest go past maxPreviewEmails.
var previewEmails = struct {
	sync.Mutex
	html  map[string]string
	order []string
}{html: map[string]string{}}

const maxPreviewEmails = 256

// keepPreviewEmail stores an email preview and returns its id.
func keepPreviewEmail(envID, html string) string {
	sum := sha256.Sum256([]byte(envID + "\x00" + html))
	id := hex.EncodeToString(sum[:16])
	previewEmails.Lock()
	defer previewEmails.Unlock()
	if _, ok := previewEmails.html[envID+"/"+id]; !ok {
		previewEmails.html[envID+"/"+id] = html
		previewEmails.order = append(previewEmails.order, envID+"/"+id)
		if len(previewEmails.order) > maxPreviewEmails {
			delete(previewEmails.html, previewEmails.order[0])
			previewEmails.order = previewEmails.order[1:]
		}
	}
	return id
}

// handlePreviewEmail serves GET /console/env/{env}/previews/{id}/email: an
// email the editor's preview rendered, as its frame shows it.
func handlePreviewEmail() handler {
	return func(p *page) error {
		previewEmails.Lock()
		html, ok := previewEmails.html[p.env.ID+"/"+p.r.PathValue("id")]
		previewEmails.Unlock()
		if !ok {
			return platform.NotFound("This preview has expired; change the step to render it again")
		}
		frameable(p.w)
		p.w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, err := p.w.Write([]byte(html))
		return err
	}
}

// handleWorkflowTest serves POST
// /console/env/{env}/workflows/{workflowId}/test: the saved workflow
// triggered for the subscriber named with the test payload, as a test
// (Activity marks it), and the member sent back to the editor, which
// follows the test's notification live (?test=<transactionId>).
func handleWorkflowTest(w Workflows, tests Tests) handler {
	return func(p *page) error {
		if tests == nil {
			return platform.NotFound("Test sends are not available")
		}
		e, err := w.Editable(p.r.Context(), p.env.ID, p.r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		f := newForm(p.r)
		subscriber := f.Value("testSubscriber")
		var payload map[string]any
		if err := json.Unmarshal([]byte(orJSON(f.Raw("payload"))), &payload); err != nil {
			f.fail("payload", "must be a JSON object")
		}
		if subscriber == "" {
			f.fail("testSubscriber", "Name the subscriber to send the test to")
		}
		if !f.Invalid() {
			tx, status, err := tests.SendTest(p.r.Context(), p.tenant(), e.WorkflowID, subscriber, payload)
			if err == nil {
				msg := "Test sent to " + subscriber + "."
				if status != "processed" {
					msg = "Test to " + subscriber + ": " + status + "."
				}
				return p.redirect(p.envURL("workflows", e.WorkflowID, "edit")+"?test="+url.QueryEscape(tx)+"#test-run", msg)
			}
			if !f.refused(err) {
				return err
			}
		}
		return renderEditor(p, w, editorData{W: e, Form: f, Payload: orJSON(f.Raw("payload"))}, http.StatusUnprocessableEntity)
	}
}

// VariablesJSON is the list of variables the page's Liquid fields offer,
// as JSON for editor.js.
func (d editorData) VariablesJSON() string {
	b, _ := json.Marshal(d.W.Variables)
	return string(b)
}

// testRun is a test send as it runs: the notifications of its
// transaction, each step with what it did so far. Done once none is
// pending; until then the page asks for it again every second (Poll).
type testRun struct {
	TransactionID string
	Notifications []activity.Notification
	Done          bool
	Poll          string // the card's own address
	ActivityURL   string // the transaction in Activity
	env           string
}

// Link is the address of notification id in Activity.
func (t testRun) Link(id string) string { return envURL(t.env, "activity", id) }

// followTest reads the test send whose transaction is tx: the
// notifications it made so far, with their steps.
func followTest(p *page, a Activity, workflowID, tx string) (*testRun, error) {
	run := &testRun{TransactionID: tx, Poll: p.envURL("workflows", workflowID, "test", tx),
		ActivityURL: p.envURL("activity") + "?transactionId=" + url.QueryEscape(tx), env: p.env.ID}
	list, err := a.Notifications(p.r.Context(), p.env.ID, url.Values{"transactionId": {tx}, "limit": {"10"}})
	if err != nil {
		return nil, err
	}
	run.Done = len(list.Notifications) > 0
	for _, listed := range list.Notifications {
		n, err := a.Notification(p.r.Context(), p.env.ID, listed.ID)
		if err != nil {
			return nil, err
		}
		if n.Status() == activity.NotificationPending {
			run.Done = false
		}
		run.Notifications = append(run.Notifications, n)
	}
	return run, nil
}

// handleWorkflowTestRun serves GET
// /console/env/{env}/workflows/{workflowId}/test/{transactionId}: the
// editor's card of a test send, which the page polls while it runs.
func handleWorkflowTestRun(w Workflows, a Activity) handler {
	return func(p *page) error {
		e, err := w.Editable(p.r.Context(), p.env.ID, p.r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		run, err := followTest(p, a, e.WorkflowID, p.r.PathValue("transactionId"))
		if err != nil {
			return err
		}
		return p.render("test_run", "workflows", "Test of "+e.Name, run)
	}
}

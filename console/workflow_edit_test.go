package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform"
)

// editorForm is the editor's form for the seeded "welcome" workflow with
// the given in-app body, as a browser posts it.
func editorForm(body string) url.Values {
	return url.Values{
		"name": {"Welcome"}, "workflowId": {"welcome"}, "description": {""}, "tags": {"onboarding, new"}, "active": {"1"},
		"s.0.type": {"in_app"}, "s.0.stepId": {"inbox"}, "s.0.name": {"Inbox"}, "s.0.c.subject": {"Welcome!"}, "s.0.c.body": {body},
		"s.1.type": {"email"}, "s.1.stepId": {"email"}, "s.1.name": {"Email"}, "s.1.c.subject": {"Order {{ payload.order }}"},
		"s.1.c.body": {"<p>Hi {{ subscriber.firstName }}</p>"},
		"payload":    {`{"order":"A-17"}`},
	}
}

func TestConsole_WorkflowEditor(t *testing.T) {
	srv := apptest.NewServer(t)
	seed(t, srv)
	ed := member(t, srv, "editor@example.com", platform.RoleEditor)
	edit := devURL(srv, "workflows", "welcome", "edit")

	t.Run("OK the page and its previews", func(t *testing.T) {
		is := is.New(t)
		res := ed.get(edit)
		is.Equal(res.status, http.StatusOK) // the editor
		page := html.UnescapeString(res.body)
		is.True(strings.Contains(page, `name="s.0.c.body"`))                                         // the in-app body's control, from its schema
		is.True(strings.Contains(page, `name="s.1.c.editorType"`))                                   // the email's too
		is.True(strings.Contains(page, "Hello Ada"))                                                 // the in-app step previewed with the sample subscriber
		is.True(strings.Contains(page, "Save workflow"))                                             // an editor may save
		is.True(strings.Contains(ed.get(devURL(srv, "workflows")).body, `/workflows/welcome/edit"`)) // the list links to it
	})

	t.Run("OK live preview with the test payload, and a Liquid error", func(t *testing.T) {
		is := is.New(t)
		res := ed.post(devURL(srv, "workflows", "welcome", "preview"), editorForm("Order {{ payload.order }} is in"))
		is.Equal(res.status, http.StatusOK)                     // previewed
		is.True(strings.Contains(res.body, "Order A-17 is in")) // with the test payload's value
		is.True(strings.Contains(res.body, "Order A-17"))       // the email's subject too
		frame := regexp.MustCompile(`/console/env/[0-9a-f]+/previews/[0-9a-f]+/email`).FindString(res.body)
		is.True(frame != "") // the email's frame
		email := ed.get(frame)
		is.Equal(email.status, http.StatusOK)                                                                                  // loads
		is.True(strings.Contains(email.body, "background-color:#f4f4f5"))                                                      // the email inside its layout
		is.True(strings.HasPrefix(email.header.Get("Content-Security-Policy"), "sandbox;"))                                    // where nothing runs
		is.Equal(ed.get(strings.Replace(frame, srv.App.Development.ID, srv.App.Production.ID, 1)).status, http.StatusNotFound) // nor from another environment

		res = ed.post(devURL(srv, "workflows", "welcome", "preview"), editorForm("line one\nOrder {{ payload.order | bogus }}"))
		is.True(strings.Contains(res.body, "preview-error"))       // the error is marked
		is.True(strings.Contains(res.body, "at line 2, column 7")) // where it is
		is.True(strings.Contains(res.body, "line one"))            // and what the author typed stays in the form
		res = ed.get(devURL(srv, "workflows", "welcome", "edit"))
		is.True(strings.Contains(res.body, "Hello {{ subscriber.firstName }}")) // nothing was saved
	})

	t.Run("OK steps added, moved, removed, then saved as a version and restored", func(t *testing.T) {
		is := is.New(t)
		f := editorForm("Changed {{ payload.order }}")
		f.Set("op", "add")
		f.Set("addType", "sms")
		res := ed.post(edit, f)
		is.Equal(res.status, http.StatusOK)                                // the page again
		is.True(strings.Contains(res.body, `name="s.2.type" value="sms"`)) // with an SMS step
		is.True(strings.Contains(res.body, "Not saved yet"))               // not saved

		f.Set("s.2.type", "sms")
		f.Set("s.2.name", "Text")
		f.Set("s.2.c.body", "Order {{ payload.order }}")
		f.Set("op", "up.2")
		res = ed.post(edit, f)
		is.True(strings.Index(res.body, `value="sms"`) < strings.Index(res.body, `value="email"`)) // the SMS step moved up

		// The browser posts the page it shows: in-app, SMS, email.
		f.Set("s.1.type", "sms")
		f.Set("s.1.stepId", "")
		f.Set("s.1.name", "Text")
		f.Set("s.1.c.body", "Order {{ payload.order }}")
		f.Del("s.1.c.subject")
		f.Set("s.2.type", "email")
		f.Set("s.2.stepId", "email")
		f.Set("s.2.name", "Email")
		f.Set("s.2.c.subject", "Order {{ payload.order }}")
		f.Set("s.2.c.body", "<p>Hi</p>")
		f.Set("op", "remove.2") // the email step
		res = ed.post(edit, f)
		is.True(!strings.Contains(res.body, `name="s.2.type"`)) // two steps left

		f.Del("s.2.type")
		f.Set("prefs", "1")
		f.Set("pref.in_app", "1")
		f.Set("pref.sms", "1") // email, chat and push off by default
		f.Set("op", "save")
		f.Set("note", "friendlier")
		res = ed.post(edit, f)
		is.Equal(res.status, http.StatusSeeOther) // saved
		api := srv.Dev.Do(t, "GET", "/v2/workflows/welcome", "")
		var w struct {
			Tags        []string `json:"tags"`
			Preferences struct {
				Default struct {
					Channels map[string]struct {
						Enabled bool `json:"enabled"`
					} `json:"channels"`
				} `json:"default"`
			} `json:"preferences"`
			Steps []struct {
				Type          string         `json:"type"`
				ControlValues map[string]any `json:"controlValues"`
			} `json:"steps"`
		}
		api.Decode(t, &w)
		is.Equal(len(w.Steps), 2)                                                 // in-app and SMS
		is.Equal(w.Steps[1].Type, "sms")                                          // in the order shown
		is.Equal(w.Steps[0].ControlValues["body"], "Changed {{ payload.order }}") // the body as typed
		is.Equal(w.Tags, []string{"onboarding", "new"})                           // the tags
		ch := w.Preferences.Default.Channels
		is.True(ch["in_app"].Enabled && ch["sms"].Enabled && !ch["email"].Enabled && !ch["push"].Enabled) // the defaults per channel
		page := ed.get(edit).body
		is.True(strings.Contains(page, "friendlier")) // the version with its note

		res = ed.post(devURL(srv, "workflows", "welcome", "versions", "1", "restore"), nil)
		is.Equal(res.status, http.StatusSeeOther) // restored
		api = srv.Dev.Do(t, "GET", "/v2/workflows/welcome", "")
		api.Decode(t, &w)
		is.Equal(w.Steps[0].ControlValues["body"], "Hello {{ subscriber.firstName }}") // the first version's body
		is.True(strings.Contains(ed.get(edit).body, "Restored version 1"))             // as a new version
	})

	t.Run("OK a bad save is shown beside its field", func(t *testing.T) {
		is := is.New(t)
		f := editorForm("x")
		f.Set("s.1.c.editorType", "wysiwyg")
		f.Set("op", "save")
		res := ed.post(edit, f)
		is.Equal(res.status, http.StatusUnprocessableEntity)  // refused
		is.True(strings.Contains(res.body, "must be one of")) // the reason, beside the control
	})

	t.Run("OK sync shows the difference first", func(t *testing.T) {
		is := is.New(t)
		res := ed.get(edit + "?compare=" + srv.App.Production.ID)
		is.Equal(res.status, http.StatusOK)                       // compared
		is.True(strings.Contains(res.body, "has no copy yet"))    // Production has none
		is.True(strings.Contains(res.body, "Sync to Production")) // and the sync is offered
	})

	t.Run("OK a test send, marked in Activity", func(t *testing.T) {
		is := is.New(t)
		res := ed.post(devURL(srv, "workflows", "welcome", "test"), url.Values{"testSubscriber": {"ada"}, "payload": {`{"order":"T-1"}`}})
		is.Equal(res.status, http.StatusSeeOther) // sent
		loc := res.header.Get("Location")
		is.True(strings.Contains(loc, "/workflows/welcome/edit?test=test-")) // back to the editor, on the test's transaction
		tx := regexp.MustCompile(`test-[0-9a-f]+`).FindString(loc)
		page := ed.get(loc)
		is.Equal(page.status, http.StatusOK)                                // the editor
		is.True(strings.Contains(page.body, `id="test-run"`))               // follows the test
		is.True(strings.Contains(page.body, `/activity?transactionId=`+tx)) // and links it in Activity
		run := devURL(srv, "workflows", "welcome", "test", tx)
		deadline := time.Now().Add(10 * time.Second)
		card := ed.get(run)
		for strings.Contains(card.body, `hx-trigger="every 1s"`) && time.Now().Before(deadline) { // polled while it runs
			time.Sleep(50 * time.Millisecond)
			card = ed.get(run)
		}
		is.Equal(card.status, http.StatusOK)                            // the card
		is.True(strings.Contains(card.body, `data-done="true"`))        // finished: no more polling
		is.True(strings.Contains(card.body, ">ada</a>"))                // for ada
		is.True(strings.Contains(card.body, `data-step-type="in_app"`)) // each step
		is.True(strings.Contains(card.body, "completed"))               // with its status

		waiting := ed.get(devURL(srv, "workflows", "welcome", "test", "no-such-transaction"))
		is.Equal(waiting.status, http.StatusOK)                            // a run not recorded yet
		is.True(strings.Contains(waiting.body, "Waiting for the trigger")) // is awaited
		is.True(strings.Contains(waiting.body, `hx-trigger="every 1s"`))   // polling

		list := ed.get(devURL(srv, "activity") + "?transactionId=" + tx)
		is.Equal(list.status, http.StatusOK)                                              // the list
		is.True(strings.Contains(list.body, `<span class="badge tone-info">test</span>`)) // marks the test

		res = ed.post(devURL(srv, "workflows", "welcome", "test"), url.Values{"testSubscriber": {""}})
		is.Equal(res.status, http.StatusUnprocessableEntity)       // no subscriber named
		is.True(strings.Contains(res.body, "Name the subscriber")) // said beside the field
	})

	t.Run("OK a viewer reads it and cannot save", func(t *testing.T) {
		is := is.New(t)
		v := member(t, srv, "viewer@example.com", platform.RoleViewer)
		res := v.get(edit)
		is.Equal(res.status, http.StatusOK)                   // the page
		is.True(!strings.Contains(res.body, "Save workflow")) // no save
		is.True(!strings.Contains(res.body, "Add step"))      // nor steps to add
		is.True(strings.Contains(res.body, "Read-only"))      // said so
		f := editorForm("x")
		f.Set("op", "save")
		is.Equal(v.post(edit, f).status, http.StatusForbidden) // a crafted save is refused
	})
}

package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// An email step is sent inside its layout: the one it names, the
// environment's default when it names none, and none when the trigger
// says null; the layout reads the same variables as the step.
func TestContent_EmailInsideItsLayout(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	box := apptest.NewMailbox(t)
	box.UseFor(t, srv.Dev)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","firstName":"Ada","email":"ada@example.com"}`)
	apptest.MustCreate(t, srv.Dev, "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`)
	page, _ := json.Marshal(`<html><body><h1>{{ payload.brand }} for {{ subscriber.firstName }}</h1>{{ content }}<footer>bye</footer></body></html>`)
	apptest.MustStatus(t, srv.Dev, "PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"body":`+string(page)+`,"editorType":"html"}}}`, 200)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","active":true,"steps":[
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"<p>Hello {{ payload.name }}</p>","layoutId":"brand"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Plain","workflowId":"plain","active":true,"steps":[
		{"name":"Mail","type":"email","controlValues":{"subject":"Hi","body":"<p>Plain</p>"}}]}`)

	apptest.TriggerTo(t, srv, "welcome", "ada", `{"name":"<Bea>","brand":"Acme"}`)
	html := box.WaitHTML(t, 1)
	is.Equal(html, `<html><body><h1>Acme for Ada</h1><p>Hello &lt;Bea&gt;</p><footer>bye</footer></body></html>`) // the step's body in the brand layout

	apptest.TriggerTo(t, srv, "plain", "ada", `{}`)
	html = box.WaitHTML(t, 2)
	is.True(strings.HasPrefix(html, "<!DOCTYPE html>"))          // the environment's default layout
	is.True(strings.Contains(html, "<p>Plain</p></div></body>")) // around the body

	apptest.Trigger(t, srv, `{"name":"welcome","to":"ada","payload":{"name":"Cy"},"overrides":{"steps":{"mail":{"layoutId":null}}}}`)
	is.Equal(box.WaitHTML(t, 3), `<p>Hello Cy</p>`) // the trigger turned the layout off
}

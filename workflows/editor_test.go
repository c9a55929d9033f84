package workflows_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// previewAnswer is the answer of the step preview, declared here so a
// renamed field fails the tests.
type previewAnswer struct {
	PreviewPayloadExample struct {
		Subscriber map[string]any `json:"subscriber"`
		Actor      map[string]any `json:"actor"`
		Payload    map[string]any `json:"payload"`
		Steps      map[string]any `json:"steps"`
	} `json:"previewPayloadExample"`
	Schema map[string]any `json:"schema"`
	Result struct {
		Type    string         `json:"type"`
		Preview map[string]any `json:"preview"`
		Error   *struct {
			Title   string `json:"title"`
			Message string `json:"message"`
			Hint    string `json:"hint"`
			Control string `json:"control"`
			Line    int    `json:"line"`
			Column  int    `json:"column"`
		} `json:"error"`
	} `json:"result"`
}

func TestEditor_Preview(t *testing.T) {
	srv, _ := newServer(t, nil)
	mustCreate(t, srv.Dev, `{"name":"Orders","workflowId":"orders","steps":[
	 {"name":"Inbox","type":"in_app","controlValues":{"subject":"Order {{payload.order}}","body":"Hi {{subscriber.firstName}}, <b>{{payload.order}}</b><script>x</script>","avatar":"{{actor.avatar}}","primaryAction":{"label":"Open {{payload.order}}","redirect":{"url":"/orders/{{payload.order}}","target":"_blank"}},"redirect":{"url":"https://x.test/{{payload.order}}"},"data":{"order":"{{payload.order}}"}}},
	 {"name":"Mail","type":"email","controlValues":{"subject":"Your order {{payload.order}}","body":"<p>{{payload.order}} for {{subscriber.email}}</p>","editorType":"html"}},
	 {"name":"Bare mail","type":"email","controlValues":{"subject":"S","body":"<p>b</p>","layoutId":null}},
	 {"name":"Text","type":"sms","controlValues":{"body":"Order {{payload.order}} shipped"}},
	 {"name":"Buzz","type":"push","controlValues":{"subject":"{{payload.order}}","body":"from {{actor.firstName}}"}},
	 {"name":"Talk","type":"chat","controlValues":{"body":"chat {{payload.order}}"}},
	 {"name":"Wait","type":"delay","controlValues":{"type":"regular","amount":2,"unit":"minutes"}},
	 {"name":"Bundle","type":"digest","controlValues":{"amount":5,"unit":"minutes","digestKey":"payload.thread"}},
	 {"name":"After digest","type":"in_app","controlValues":{"body":"{{steps.bundle.eventCount}} orders: {% for e in steps.bundle.events %}{{e.payload.order}};{% endfor %}"}},
	 {"name":"Slow","type":"throttle","controlValues":{"type":"fixed","amount":1,"unit":"hours","threshold":3}},
	 {"name":"Code","type":"custom","controlValues":{"text":"for {{payload.order}}","n":[1]}}]}`)
	preview := func(step, body string) (int, previewAnswer) {
		t.Helper()
		res := srv.Dev.Do(t, "POST", "/v2/workflows/orders/step/"+step+"/preview", body)
		var a previewAnswer
		if res.Status == 201 {
			res.Decode(t, &a)
		}
		return res.Status, a
	}
	withOrder := `{"previewPayload":{"payload":{"order":"A-17"}}}`

	t.Run("OK in_app", func(t *testing.T) {
		is := is.New(t)
		status, a := preview("inbox", withOrder)
		is.Equal(status, 201)             // rendered
		is.Equal(a.Result.Type, "in_app") // its type
		p := a.Result.Preview
		is.Equal(p["subject"], "Order A-17")                       // the subject rendered with the given payload
		is.True(strings.HasPrefix(p["body"].(string), "Hi Ada, ")) // the sample subscriber
		is.True(!strings.Contains(p["body"].(string), "<script"))  // sanitized as a delivery is
		is.Equal(p["avatar"], "https://example.com/actor.png")     // the sample actor
		action := p["primaryAction"].(map[string]any)
		is.Equal(action["label"], "Open A-17")                                 // a button label
		is.Equal(action["redirect"].(map[string]any)["url"], "/orders/A-17")   // and its URL
		is.Equal(action["redirect"].(map[string]any)["target"], "_blank")      // and target
		is.Equal(p["redirect"].(map[string]any)["url"], "https://x.test/A-17") // the redirect
		is.Equal(p["data"].(map[string]any)["order"], "A-17")                  // data rendered
		is.Equal(a.PreviewPayloadExample.Payload["order"], "A-17")             // the payload used is answered
		is.Equal(a.PreviewPayloadExample.Subscriber["firstName"], "Ada")       // and the subscriber
		is.True(a.Schema["properties"] != nil)                                 // with the variables' schema
	})

	t.Run("OK email in its layout", func(t *testing.T) {
		is := is.New(t)
		status, a := preview("mail", withOrder)
		is.Equal(status, 201)                                    // rendered
		is.Equal(a.Result.Preview["subject"], "Your order A-17") // the subject
		body := a.Result.Preview["body"].(string)
		is.True(strings.HasPrefix(body, "<!DOCTYPE html>"))                // inside the layout
		is.True(strings.Contains(body, "<p>A-17 for ada@example.com</p>")) // the body rendered
		is.True(strings.Contains(body, "background-color:#f4f4f5"))        // the environment's default layout, as a delivery sends it

		status, a = preview("bare-mail", ``)
		is.Equal(status, 201)                          // rendered
		is.Equal(a.Result.Preview["body"], "<p>b</p>") // layoutId null: no layout
	})

	t.Run("OK email in the layout it names", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`).Status, 201) // a layout
		is.Equal(srv.Dev.Do(t, "PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"editorType":"html",
			"body":"<html><body><header>ACME for {{ subscriber.firstName }}</header>{{content}}</body></html>"}}}`).Status, 200) // its body
		status, a := preview("mail", `{"controlValues":{"subject":"S","body":"<p>{{payload.order}}</p>","layoutId":"brand"},`+
			`"previewPayload":{"payload":{"order":"A-17"}}}`)
		is.Equal(status, 201)                                                                                    // rendered
		is.Equal(a.Result.Preview["body"], "<html><body><header>ACME for Ada</header><p>A-17</p></body></html>") // inside the layout named

		status, a = preview("mail", `{"controlValues":{"subject":"S","body":"<p>x</p>","layoutId":"gone"}}`)
		is.Equal(status, 201)                                                                    // rendered
		is.True(strings.Contains(a.Result.Preview["body"].(string), "background-color:#f4f4f5")) // a layout that is gone: the default, as a delivery does

		is.Equal(srv.Dev.Do(t, "PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"editorType":"html",
			"body":"<html><body>{{ subscriber.firstName | bogus }}{{content}}</body></html>"}}}`).Status, 200) // a layout that fails
		status, a = preview("mail", `{"controlValues":{"subject":"S","body":"<p>x</p>","layoutId":"brand"}}`)
		is.Equal(status, 201)                        // still an answer
		is.True(a.Result.Error != nil)               // with the error
		is.Equal(a.Result.Error.Control, "layoutId") // named as the layout's
	})

	t.Run("OK the author's unsaved controls", func(t *testing.T) {
		is := is.New(t)
		status, a := preview("mail", `{"controlValues":{"subject":"New {{payload.order}}","body":"<i>{{payload.order | upcase}}</i>","layoutId":null},"previewPayload":{"payload":{"order":"b-2"}}}`)
		is.Equal(status, 201)                            // rendered
		is.Equal(a.Result.Preview["subject"], "New b-2") // the given subject, not the stored one
		is.Equal(a.Result.Preview["body"], "<i>B-2</i>") // the given body
	})

	t.Run("OK sample payload from the templates", func(t *testing.T) {
		is := is.New(t)
		status, a := preview("text", `{}`)
		is.Equal(status, 201)                                                   // rendered
		is.Equal(a.PreviewPayloadExample.Payload["order"], "{{payload.order}}") // a placeholder naming the variable
		is.Equal(a.Result.Preview["body"], "Order {{payload.order}} shipped")   // rendered with it
	})

	t.Run("OK sms length and segments", func(t *testing.T) {
		is := is.New(t)
		_, a := preview("text", withOrder)
		is.Equal(a.Result.Preview["body"], "Order A-17 shipped") // rendered
		is.Equal(a.Result.Preview["length"], 18.0)               // its length
		is.Equal(a.Result.Preview["segments"], 1.0)              // one message
		is.Equal(a.Result.Preview["encoding"], "GSM-7")          // in 7 bits
		long := strings.Repeat("€", 81)
		_, a = preview("text", `{"controlValues":{"body":"`+long+`"}}`)
		is.Equal(a.Result.Preview["segments"], 2.0) // 81 euro signs count 162 units: two
		_, a = preview("text", `{"controlValues":{"body":"`+strings.Repeat("ж", 71)+`"}}`)
		is.Equal(a.Result.Preview["encoding"], "UCS-2") // Cyrillic needs UCS-2
		is.Equal(a.Result.Preview["segments"], 2.0)     // 71 over 70: two
	})

	t.Run("OK push and chat", func(t *testing.T) {
		is := is.New(t)
		_, a := preview("buzz", withOrder)
		is.Equal(a.Result.Preview["subject"], "A-17")    // push title
		is.Equal(a.Result.Preview["body"], "from Grace") // push body, with the sample actor
		_, a = preview("talk", withOrder)
		is.Equal(a.Result.Preview["body"], "chat A-17") // chat text
	})

	t.Run("OK delay, digest, throttle, custom", func(t *testing.T) {
		is := is.New(t)
		_, a := preview("wait", `{}`)
		is.Equal(a.Result.Type, "delay")              // its type
		is.Equal(a.Result.Preview["amount"], 2.0)     // its amount
		is.Equal(a.Result.Preview["unit"], "minutes") // and unit
		_, a = preview("bundle", withOrder)
		is.Equal(a.Result.Preview["digestKey"], "payload.thread") // the digest key
		is.Equal(a.Result.Preview["eventCount"], 3.0)             // sample events
		events := a.Result.Preview["events"].([]any)
		is.Equal(events[0].(map[string]any)["payload"].(map[string]any)["order"], "A-17") // with the payload
		_, a = preview("after-digest", withOrder)
		is.Equal(a.Result.Preview["body"], "3 orders: A-17;A-17;A-17;") // a later step sees the digest's events
		is.True(a.PreviewPayloadExample.Steps["bundle"] != nil)         // and they are answered
		_, a = preview("slow", `{}`)
		is.Equal(a.Result.Preview["threshold"], 3.0) // the throttle's threshold
		_, a = preview("code", withOrder)
		is.Equal(a.Result.Type, "custom")              // its type
		is.Equal(a.Result.Preview["text"], "for A-17") // its values rendered
	})

	t.Run("OK a Liquid error and where it is", func(t *testing.T) {
		is := is.New(t)
		status, a := preview("mail", `{"controlValues":{"subject":"S","body":"<p>fine</p>\n<p>{{ payload.order | bogus }}</p>"}}`)
		is.Equal(status, 201)                                                    // not a failure of the request
		is.True(a.Result.Error != nil)                                           // but of the template
		is.Equal(a.Result.Error.Control, "body")                                 // in the body
		is.Equal([]int{a.Result.Error.Line, a.Result.Error.Column}, []int{2, 4}) // at line 2, column 4
		is.True(strings.Contains(a.Result.Error.Message, "bogus"))               // naming the filter
		is.True(a.Result.Preview == nil)                                         // no preview

		_, a = preview("inbox", `{"controlValues":{"body":"ok","subject":"{{ payload.order"}}`)
		is.Equal(a.Result.Error.Control, "subject")                              // an unclosed output in the subject
		is.Equal([]int{a.Result.Error.Line, a.Result.Error.Column}, []int{1, 1}) // where it opens
		is.True(a.Result.Error.Title != "" && a.Result.Error.Hint != "")         // titled, with a hint

		_, a = preview("text", `{"controlValues":{"body":"{% for x in (1..5000000) %}{{ x }}{% endfor %}"}}`)
		is.True(a.Result.Error != nil) // the render limits hold in a preview too
	})

	t.Run("ErrBadControls", func(t *testing.T) {
		is := is.New(t)
		status, _ := preview("mail", `{"controlValues":{"subject":5}}`)
		is.Equal(status, 422) // a control of the wrong type
		status, _ = preview("mail", `{"previewPayload":{"payload":[1]}}`)
		is.True(status == 400 || status == 422) // a payload that is no object
	})

	t.Run("ErrUnknown", func(t *testing.T) {
		is := is.New(t)
		status, _ := preview("nope", `{}`)
		is.Equal(status, 404) // unknown step
		res := srv.Dev.Do(t, "POST", "/v2/workflows/nope/step/inbox/preview", `{}`)
		is.Equal(res.Status, 404) // unknown workflow
		res = srv.Prod.Do(t, "POST", "/v2/workflows/orders/step/inbox/preview", `{}`)
		is.Equal(res.Status, 404) // another environment's workflow
	})
}

func TestEditor_StepGet(t *testing.T) {
	srv, _ := newServer(t, nil)
	w := mustCreate(t, srv.Dev, allKinds)
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		for i, key := range []string{w.Steps[1].StepID, w.Steps[1].ID} {
			res := srv.Dev.Do(t, "GET", "/v2/workflows/every-kind/steps/"+key, "")
			is.Equal(res.Status, 200) // found by stepId and by _id
			var st wfStep
			res.Decode(t, &st)
			is.Equal(st.ID, w.Steps[1].ID)                       // the step
			is.Equal(st.Type, "email")                           // its type
			is.Equal(st.WorkflowDatabaseID, w.ID)                // its workflow
			is.Equal(st.Controls.UISchema.Group, "EMAIL")        // its controls' UI schema
			is.True(st.Controls.DataSchema["properties"] != nil) // and data schema
			is.Equal(st.ControlValues["subject"], "S")           // its values
			is.True(st.Variables["properties"] != nil)           // and variables
			_ = i
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/every-kind/steps/nope", "").Status, 404)                // unknown step
		is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/every-kind/steps/"+w.Steps[0].StepID, "").Status, 404) // another environment's
	})
}

func TestEditor_TestData(t *testing.T) {
	srv, _ := newServer(t, nil)
	mustCreate(t, srv.Dev, allKinds)
	mustCreate(t, srv.Dev, `{"name":"Typed","workflowId":"typed","payloadSchema":{"type":"object","properties":{"n":{"type":"number","default":4}}},"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{payload.n}}"}}]}`)
	mustCreate(t, srv.Dev, `{"name":"Loose","workflowId":"loose","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{payload.user.name}} {{payload.order}}"}}]}`)
	type testData struct {
		To struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		} `json:"to"`
		Payload map[string]any `json:"payload"`
	}
	get := func(key string) testData {
		t.Helper()
		res := srv.Dev.Do(t, "GET", "/v2/workflows/"+key+"/test-data", "")
		if res.Status != 200 {
			t.Fatalf("test-data of %s: %d %s", key, res.Status, res.Body)
		}
		var d testData
		res.Decode(t, &d)
		return d
	}
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		d := get("every-kind")
		is.Equal(d.To.Type, "object")                                       // a schema of the recipient
		is.Equal(d.To.Required, []string{"subscriberId", "email", "phone"}) // email and phone for its channels
		is.Equal(d.To.Properties["email"]["format"], "email")               // email is an address
		d = get("typed")
		is.Equal(d.To.Required, []string{"subscriberId"})                                        // in-app only
		is.Equal(d.Payload["properties"].(map[string]any)["n"].(map[string]any)["default"], 4.0) // the payload schema itself
		d = get("loose")
		props := d.Payload["properties"].(map[string]any)
		is.Equal(props["order"].(map[string]any)["default"], "{{payload.order}}")                                                            // built from the templates
		is.Equal(props["user"].(map[string]any)["properties"].(map[string]any)["name"].(map[string]any)["default"], "{{payload.user.name}}") // nested
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/nope/test-data", "").Status, 404)   // unknown
		is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/loose/test-data", "").Status, 404) // another environment's
	})
}

func TestEditor_Duplicate(t *testing.T) {
	srv, _ := newServer(t, nil)
	src := mustCreate(t, srv.Dev, `{"name":"Original","workflowId":"original","active":true,"description":"d","tags":["a"],"severity":"high",
		"payloadSchema":{"type":"object"},"validatePayload":true,"preferences":{"workflow":{"all":{"readOnly":true}}},
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"hi"}},{"name":"Wait","type":"delay","controlValues":{"amount":1,"unit":"hours"}}]}`)
	t.Run("OK defaults", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v2/workflows/original/duplicate", ``) // no body: every default
		is.Equal(res.Status, 201)                                            // created
		var w wfResponse
		res.Decode(t, &w)
		is.True(w.ID != src.ID)                                      // a new workflow
		is.Equal(w.Name, "Original (Copy)")                          // named as a copy
		is.True(w.WorkflowID != "original")                          // with its own workflowId
		is.True(!w.Active)                                           // inactive
		is.Equal(w.Description, "d")                                 // the description copied
		is.Equal(w.Tags, []string{"a"})                              // and tags
		is.Equal(w.Severity, "high")                                 // and severity
		is.True(w.ValidatePayload)                                   // and validation
		is.Equal(string(w.PayloadSchema), string(src.PayloadSchema)) // and schema
		is.True(w.Preferences.Default.All.ReadOnly)                  // and preferences
		is.Equal(len(w.Steps), 2)                                    // the steps
		is.Equal(w.Steps[0].StepID, src.Steps[0].StepID)             // with their stepIds
		is.True(w.Steps[0].ID != src.Steps[0].ID)                    // and new _ids
		is.Equal(w.Steps[0].ControlValues["body"], "hi")             // and values
	})
	t.Run("OK overrides", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v2/workflows/"+src.ID+"/duplicate", `{"name":"Second","workflowId":"second","tags":["b"],"description":"e","isTranslationEnabled":true}`)
		is.Equal(res.Status, 201) // created
		var w wfResponse
		res.Decode(t, &w)
		is.Equal(w.Name, "Second")       // the given name
		is.Equal(w.WorkflowID, "second") // workflowId
		is.Equal(w.Tags, []string{"b"})  // tags
		is.Equal(w.Description, "e")     // description
		is.True(w.IsTranslationEnabled)  // and translation flag
	})
	t.Run("Err", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Dev.Do(t, "POST", "/v2/workflows/original/duplicate", `{"workflowId":"second"}`).Status, 409)    // a taken workflowId
		is.Equal(srv.Dev.Do(t, "POST", "/v2/workflows/original/duplicate", `{"workflowId":"no spaces"}`).Status, 422) // a bad one
		is.Equal(srv.Prod.Do(t, "POST", "/v2/workflows/original/duplicate", `{}`).Status, 404)                        // another environment's
		is.Equal(srv.Dev.Do(t, "POST", "/v2/workflows/nope/duplicate", `{}`).Status, 404)                             // unknown
	})
}

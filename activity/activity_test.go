package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
)

func TestTrigger_ThreeSubscribers(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	env := h.App.Development.ID
	wfID := h.wf.add(t, env, "welcome", nil,
		step("inbox", "in_app", map[string]any{"body": "Hi {{payload.name}}"}),
		step("mail", "email", map[string]any{"subject": "Hi", "body": "Hello"}))

	res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"welcome","payload":{"name":"Ada"},
		"to":["ada",{"subscriberId":"bob","email":"bob@example.com"},"cy"]}`)
	is.Equal(res.Status, http.StatusCreated) // trigger accepted
	var ack triggerAck
	res.Decode(t, &ack)
	is.True(ack.Acknowledged)               // acknowledged
	is.Equal(ack.Status, "processed")       // processed
	_, err := uuid.Parse(ack.TransactionID) // a generated transactionId…
	is.NoErr(err)                           // …is a UUID

	got := h.waitStatuses(t, ack.TransactionID, "trigger:completed", "in_app:completed", "email:completed")
	is.Equal(len(got), 3) // one notification per subscriber
	subs := map[string]bool{}
	for _, n := range got {
		subs[n.Subscriber.SubscriberID] = true
		is.Equal(n.TemplateID, wfID)                                                              // _templateId is the workflow
		is.Equal(n.Template.Triggers[0].Identifier, "welcome")                                    // template trigger identifier
		is.Equal(strings.Join(n.Channels, ","), "in_app,email")                                   // channels are the step types
		is.Equal(n.details("trigger"), []string{"Step queued"})                                   // trigger job detail
		is.Equal(n.details("in_app"), []string{"Step queued", "Message created", "Message sent"}) // in_app details in order
		is.Equal(n.Jobs[1].ProviderID, "service")                                                 // in_app provider
		is.Equal(n.Jobs[2].ProviderID, "nodemailer")                                              // the provider messaging reported
		is.Equal(n.Jobs[0].Step.ParentID, nil)                                                    // the trigger step has no parent
		is.True(n.Jobs[2].Step.ParentID == n.Jobs[1].Step.ID)                                     // steps chained by _parentId
		is.True(n.Severity != nil && *n.Severity == "none")                                       // list carries severity
	}
	is.True(subs["ada"] && subs["bob"] && subs["cy"]) // every recipient

	sent := h.msg.sent()
	is.Equal(len(sent), 6) // two messages per subscriber
	for _, d := range sent {
		is.Equal(d.Variables.Payload["name"], "Ada")                                // payload variables
		is.Equal(d.Variables.Subscriber["subscriberId"], d.Subscriber.SubscriberID) // subscriber variables
		is.Equal(d.WorkflowID, "welcome")                                           // workflowId handed on
	}

	// The single event: same shape, severity left out.
	one := h.Dev.Do(t, "GET", "/v1/notifications/"+got[0].ID, "")
	is.Equal(one.Status, http.StatusOK) // single event found
	var single apiNotification
	one.Decode(t, &single)
	is.Equal(single.ID, got[0].ID)                                      // same notification
	is.Equal(len(single.Jobs), 3)                                       // with its jobs
	is.Equal(single.Severity, nil)                                      // severity is list-only
	is.True(strings.Contains(string(one.Body), `"executionDetails":[`)) // details inline
}

// TestTrigger_GeneratedTransactionIDs: a transactionId Herald made up is
// not claimed, as no other trigger can have it, yet a client sending it
// back is refused as for any used one.
func TestTrigger_GeneratedTransactionIDs(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "on", nil, step("inbox", "in_app", nil))
	made := h.trigger(t, `{"name":"on","to":"ada"}`)
	h.trigger(t, `{"name":"on","to":"ada","transactionId":"given"}`)
	var claims []string
	rows, err := h.App.DB.QueryContext(context.Background(), `SELECT transaction_id FROM activity_transactions`)
	is.NoErr(err)
	defer rows.Close()
	for rows.Next() {
		var id string
		is.NoErr(rows.Scan(&id))
		claims = append(claims, id)
	}
	is.Equal(claims, []string{"given"}) // only the client's is claimed

	res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"on","to":"ada","transactionId":"`+made+`"}`)
	is.Equal(res.Status, http.StatusConflict)                   // the made-up one, sent back, is refused
	is.Equal(len(h.notifications(t, "transactionId="+made)), 1) // and nothing more is written with it
}

func TestTrigger_Errors(t *testing.T) {
	h := newHarness(t)
	env := h.App.Development.ID
	h.wf.add(t, env, "on", nil, step("inbox", "in_app", nil))
	h.wf.add(t, env, "off", map[string]any{"active": false}, step("inbox", "in_app", nil))
	h.wf.add(t, env, "empty", nil)
	h.wf.add(t, env, "typed", map[string]any{"validatePayload": true, "payloadSchema": map[string]any{
		"type": "object", "required": []string{"name"},
		"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer", "minimum": 0}}}},
		step("inbox", "in_app", nil))
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprint("s", i))
	}
	h.trigger(t, `{"name":"on","to":"ada","transactionId":"used-once"}`)

	for _, tc := range []struct {
		name, body string
		status     int
		contains   []string
	}{
		{"ErrUnknownWorkflow", `{"name":"nope","to":"ada"}`, 422, []string{`"message":"workflow_not_found"`, `"errors":{"name"`}},
		{"OKInactive", `{"name":"off","to":"ada"}`, 201, []string{`"status":"trigger_not_active"`}},
		{"OKNoActiveSteps", `{"name":"empty","to":"ada"}`, 201, []string{`"status":"no_workflow_active_steps_defined"`}},
		{"ErrReusedTransaction", `{"name":"on","to":"ada","transactionId":"used-once"}`, 409, []string{"used-once"}},
		{"ErrMissingName", `{"to":"ada"}`, 422, []string{`"name"`}},
		{"ErrMissingTo", `{"name":"on"}`, 422, []string{`"to"`}},
		{"ErrEmptyTo", `{"name":"on","to":[]}`, 422, []string{`"to"`}},
		{"ErrTooManyRecipients", `{"name":"on","to":[` + strings.Join(many, ",") + `]}`, 422, []string{"at most 100"}},
		{"ErrRecipientWithoutID", `{"name":"on","to":[{"email":"a@b.c"}]}`, 422, []string{"subscriberId"}},
		{"ErrInvalidRecipient", `{"name":"on","to":[{"subscriberId":"x","email":"invalid"}]}`, 422, []string{`"to.0.email"`}},
		{"ErrPayloadNotObject", `{"name":"on","to":"ada","payload":[1]}`, 422, []string{`"payload"`}},
		{"ErrContextNotObject", `{"name":"on","to":"ada","context":"x"}`, 422, []string{`"context"`}},
		{"ErrContextEntry", `{"name":"on","to":"ada","context":{"tenant":{"data":{}}}}`, 422, []string{`"context"`}},
		{"ErrContextTooMany", `{"name":"on","to":"ada","context":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6"}}`, 422, []string{"at most 5"}},
		{"ErrReusedTransactionUpsertsNothing", `{"name":"on","to":{"subscriberId":"ghost"},"transactionId":"used-once"}`, 409, []string{"used-once"}},
		{"ErrMalformedJSON", `{"name":`, 400, []string{`"type":"PAYLOAD_VALIDATION_ERROR"`, `"errors":[`}},
		{"ErrPayloadSchema", `{"name":"typed","to":"ada","payload":{"age":-1}}`, 400, []string{
			`"type":"PAYLOAD_VALIDATION_ERROR"`, `"field":"/age"`, `"value":-1`, `"schemaPath":"#/properties/age/minimum"`,
			`"schema":{`, `"statusCode":400`, `"path":"/v1/events/trigger"`}},
		{"OKPayloadSchema", `{"name":"typed","to":"ada","payload":{"name":"Ada","age":3}}`, 201, []string{`"processed"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.Dev.Do(t, "POST", "/v1/events/trigger", tc.body)
			is.Equal(res.Status, tc.status) // status
			for _, c := range tc.contains {
				if !strings.Contains(string(res.Body), c) {
					t.Fatalf("body %s lacks %s", res.Body, c)
				}
			}
		})
	}
	t.Run("OKRefusedTriggerCreatedNoSubscriber", func(t *testing.T) {
		is := is.New(t)
		_, err := h.subs.Subscriber(context.Background(), env, "ghost")
		is.True(errors.Is(err, platform.ErrNotFound)) // the 409 came before the upsert
	})
	t.Run("OKInactiveQueuesNothing", func(t *testing.T) {
		is := is.New(t)
		is.Equal(len(h.notifications(t, "templates=")), 2) // only the two processed triggers wrote records
	})
}

// TestTrigger_InvalidPayloadSchema: a workflow stored with a schema that
// does not compile (written before workflows refused such schemas) answers a
// clear 400 on every trigger, naming no server path and loading no $ref.
func TestTrigger_InvalidPayloadSchema(t *testing.T) {
	h := newHarness(t)
	env := h.App.Development.ID
	refs := platformtest.NewSchemaRefs(t)
	for _, tc := range []struct {
		name   string
		schema map[string]any
	}{
		{"ErrTypeNumber", map[string]any{"type": 12}},
		{"ErrPattern", map[string]any{"properties": map[string]any{"a": map[string]any{"pattern": "("}}}},
		{"ErrMissingPointer", map[string]any{"$ref": "#/$defs/nope"}},
		{"ErrRefCycle", map[string]any{"$ref": "#"}},
		{"ErrRelativeRef", map[string]any{"$ref": "schema.json"}},
		{"ErrFileRef", map[string]any{"$ref": "file://" + refs.File}},
		{"ErrRemoteRef", map[string]any{"$ref": refs.URL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id := strings.ToLower(tc.name)
			// The workflow API refuses these schemas; one stored before it
			// checked them is still refused at the trigger.
			h.wf.inject(t, id, map[string]any{"validatePayload": true, "payloadSchema": tc.schema}, step("inbox", "in_app", nil))
			res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"`+id+`","to":"ada","payload":{}}`)
			is.Equal(res.Status, 400) // the stored schema cannot be used
			var e struct {
				Type    string `json:"type"`
				Message string `json:"message"`
				Errors  []struct {
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"errors"`
			}
			res.Decode(t, &e)
			is.Equal(e.Type, "PAYLOAD_VALIDATION_ERROR")                                   // type (docs/api.md, "What strict clients check")
			is.Equal(e.Message, "The workflow's payloadSchema is not a valid JSON Schema") // says what is wrong
			is.Equal(len(e.Errors), 1)                                                     // one entry
			is.Equal(e.Errors[0].Field, "payloadSchema")                                   // names the schema
			is.True(e.Errors[0].Message != "")                                             // and why
			wrote, _ := json.Marshal(tc.schema)
			is.True(strings.Count(e.Errors[0].Message, "file://") <= strings.Count(string(wrote), "file://")) // no file URL but the client's own
			is.True(!strings.Contains(e.Errors[0].Message, refs.Dir))                                         // nor the server's directory
			is.True(!strings.Contains(e.Errors[0].Message, "herald.invalid"))                                 // nor the name it compiles under
		})
	}
	is.New(t).Equal(refs.Fetched.Load(), int32(0)) // no $ref was fetched

	t.Run("ErrRefCycleOnlySomePayloadsReach", func(t *testing.T) {
		is := is.New(t)
		h.wf.add(t, env, "deep-cycle", map[string]any{"validatePayload": true, "payloadSchema": map[string]any{
			"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/x"}},
			"$defs":      map[string]any{"x": map[string]any{"$ref": "#/$defs/x"}}}}, step("inbox", "in_app", nil))
		res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"deep-cycle","to":"ada","payload":{"a":1}}`)
		is.Equal(res.Status, 400)                                      // the payload cannot be validated
		is.True(strings.Contains(string(res.Body), "reference cycle")) // says why
		is.True(!strings.Contains(string(res.Body), "herald.invalid")) // in the client's terms
	})
}

func TestTrigger_IdempotencyKey(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "once", nil, step("inbox", "in_app", nil))
	body := `{"name":"once","to":"ada"}`
	first := h.Dev.Do(t, "POST", "/v1/events/trigger", body, "Idempotency-Key", "k-1")
	second := h.Dev.Do(t, "POST", "/v1/events/trigger", body, "Idempotency-Key", "k-1")
	is.Equal(first.Status, 201)                               // first runs
	is.Equal(second.Status, 201)                              // replayed
	is.Equal(second.Header.Get("Idempotency-Replay"), "true") // marked as a replay
	is.Equal(string(first.Body), string(second.Body))         // same transactionId
	var ack struct{ TransactionID string }
	first.Decode(t, &ack)
	h.waitStatuses(t, ack.TransactionID, "trigger:completed", "in_app:completed")
	is.Equal(len(h.notifications(t, "")), 1) // one notification
	is.Equal(h.msg.callCount(), 1)           // one delivery
}

func TestNotifications_Query(t *testing.T) {
	h := newHarness(t)
	env := h.App.Development.ID
	wfA := h.wf.add(t, env, "a", nil, step("inbox", "in_app", nil))
	h.wf.add(t, env, "b", map[string]any{"severity": "high"}, step("mail", "email", map[string]any{"subject": "s", "body": "b"}))
	txA := h.trigger(t, `{"name":"a","to":[{"subscriberId":"ada","email":"ada@example.com"}],"context":{"tenant":"acme","team":{"id":"ops","data":{}}}}`)
	h.trigger(t, `{"name":"b","to":["bob"]}`)
	otherEnv := h.Prod.Do(t, "GET", "/v1/notifications", "")

	for _, tc := range []struct {
		name, query string
		status, n   int
	}{
		{"OKAll", "", 200, 2},
		{"OKChannels", "channels=email", 200, 1},
		{"OKChannelsArray", "channels[]=email&channels[]=in_app", 200, 2},
		{"OKChannelsRepeated", strings.Repeat("channels=email&", 998), 200, 1}, // each a term of the query: was a 500
		{"OKTemplates", "templates=" + wfA, 200, 1},
		{"OKEmails", "emails=ada@example.com", 200, 1},
		{"OKSubscriberIds", "subscriberIds=bob", 200, 1},
		{"OKSeverity", "severity=high", 200, 1},
		{"OKSeverityNone", "severity=none", 200, 1},
		{"OKSeverityEither", "severity=none&severity=high", 200, 2},
		{"OKTransaction", "transactionId=" + txA, 200, 1},
		{"OKTopicKey", "topicKey=none", 200, 0},
		{"OKContextKeys", "contextKeys=team:ops", 200, 1},
		{"OKContextKeysOther", "contextKeys=tenant:other", 200, 0},
		{"OKContextKeysEither", "contextKeys=tenant:other&contextKeys=team:ops", 200, 1},
		{"OKContextKeyAndWorkflow", "contextKeys=tenant:acme&templates=" + wfA, 200, 1},
		{"OKAfterFuture", "after=2999-01-01T00:00:00Z", 200, 0},
		{"OKBeforePast", "before=2000-01-01T00:00:00.000Z", 200, 0},
		{"OKPageTwo", "limit=1&page=1", 200, 1},
		{"ErrLimitHigh", "limit=51", 422, 0},
		{"ErrLimitZero", "limit=0", 422, 0},
		{"ErrPageNegative", "page=-1", 422, 0},
		{"ErrLimitNotNumber", "limit=ten", 400, 0},
		{"ErrSeverity", "severity=urgent", 422, 0},
		{"ErrChannel", "channels=email&channels=carrier-pigeon", 422, 0},
		{"ErrTemplate", "templates=" + wfA + "&templates=not-an-id", 422, 0},
		{"OKContextKeyRepeated", strings.Repeat("contextKeys=team:ops&", 1000), 200, 1},
		{"ErrTooManyContextKeys", manyValues("contextKeys", 101), 422, 0},
		{"ErrTooManyTransactions", manyValues("transactionId", 101), 422, 0},
		{"ErrAfterTwice", "after=2026-01-01T00:00:00Z&after=2027-01-01T00:00:00Z", 422, 0},
		{"ErrAfter", "after=yesterday", 400, 0},
		{"ErrRange", "after=2026-01-02T00:00:00Z&before=2026-01-01T00:00:00Z", 400, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.Dev.Do(t, "GET", "/v1/notifications?"+tc.query, "")
			is.Equal(res.Status, tc.status) // status
			if tc.status != 200 {
				return
			}
			var out struct {
				HasMore  bool              `json:"hasMore"`
				Data     []apiNotification `json:"data"`
				PageSize int               `json:"pageSize"`
				Page     int               `json:"page"`
			}
			res.Decode(t, &out)
			is.Equal(len(out.Data), tc.n) // matches
			is.Equal(out.PageSize, tc.n)  // pageSize counts this page
		})
	}
	t.Run("OKHasMore", func(t *testing.T) {
		is := is.New(t)
		var out struct{ HasMore bool }
		h.Dev.Do(t, "GET", "/v1/notifications?limit=1", "").Decode(t, &out)
		is.True(out.HasMore) // a second page exists
		h.Dev.Do(t, "GET", "/v1/notifications?limit=1&page=1", "").Decode(t, &out)
		is.True(!out.HasMore) // and no third
	})
	t.Run("OKOtherEnvironmentEmpty", func(t *testing.T) {
		is := is.New(t)
		is.Equal(otherEnv.Status, 200)                                // production answers
		is.True(strings.Contains(string(otherEnv.Body), `"data":[]`)) // and sees nothing of development
	})
}

func TestNotificationGet_NotFound(t *testing.T) {
	h := newHarness(t)
	h.wf.add(t, h.App.Development.ID, "a", nil, step("inbox", "in_app", nil))
	tx := h.trigger(t, `{"name":"a","to":"ada"}`)
	id := h.waitStatuses(t, tx, "trigger:completed", "in_app:completed")[0].ID
	for _, tc := range []struct {
		name   string
		client platformtest.Client
		id     string
	}{
		{"ErrMalformed", h.Dev, "not-an-id"},
		{"ErrUnknown", h.Dev, "0123456789abcdef01234567"},
		{"ErrOtherEnvironment", h.Prod, id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := tc.client.Do(t, "GET", "/v1/notifications/"+tc.id, "")
			is.Equal(res.Status, 404)                                             // not found
			is.True(strings.Contains(string(res.Body), "Notification not found")) // reference message
		})
	}
}

func TestTrigger_RecipientsAndActor(t *testing.T) {
	is := is.New(t)
	h := newHarness(t)
	env := h.App.Development.ID
	h.wf.add(t, env, "hi", nil, step("inbox", "in_app", nil))

	tx := h.trigger(t, `{"name":"hi","to":["ada",{"subscriberId":"ada","email":"ada@example.com"},"bob"],
		"actor":{"subscriberId":"boss","firstName":"Bo"}}`)
	got := h.waitStatuses(t, tx, "trigger:completed", "in_app:completed")
	is.Equal(len(got), 2) // a subscriber named twice gets one notification
	_, err := h.subs.Subscriber(context.Background(), env, "boss")
	is.NoErr(err) // the actor was upserted as a subscriber
	bob, err := h.subs.Subscriber(context.Background(), env, "bob")
	is.NoErr(err)                     // an unknown subscriberId is created…
	is.Equal(bob.SubscriberID, "bob") // …under that id

	res := h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hi","to":"ada","actor":{"subscriberId":"x","email":"invalid"}}`)
	is.Equal(res.Status, 422)                                    // a bad actor is refused
	is.True(strings.Contains(string(res.Body), `"actor.email"`)) // named by its path
	res = h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hi","to":"ada","actor":5}`)
	is.Equal(res.Status, 422) // an actor must be a subscriberId or an object
	for _, tenant := range []string{`12345`, `[1,2]`, `true`} {
		res = h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hi","to":"ada","tenant":`+tenant+`}`)
		is.Equal(res.Status, 422) // a tenant is an identifier or an object
	}
	for _, tenant := range []string{`"acme"`, `{"identifier":"acme","name":"Acme"}`, `null`} {
		is.Equal(h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hi","to":"ada","tenant":`+tenant+`}`).Status, 201) // both shapes accepted
	}
	res = h.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hi","to":{"type":"Topic","topicKey":"t"}}`)
	is.Equal(res.Status, 201)                                    // a topic no one created is ignored, as the reference ignores it
	is.True(strings.Contains(string(res.Body), `was not found`)) // and named in the answer
}

// manyValues is a query of n distinct values of the parameter name.
func manyValues(name string, n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("%s=v%d", name, i)
	}
	return strings.Join(q, "&")
}

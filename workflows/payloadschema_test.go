package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// TestWorkflow_PayloadSchemaInvalid: a payloadSchema the trigger could not
// compile is refused when it is written, not on every later trigger, and a
// $ref outside the schema is never loaded.
func TestWorkflow_PayloadSchemaInvalid(t *testing.T) {
	srv, _ := newServer(t, nil)
	refs := platformtest.NewSchemaRefs(t)
	mustCreate(t, srv.Dev, `{"name":"Kept","workflowId":"kept","payloadSchema":{"type":"object"},"steps":[]}`)
	if res := srv.Dev.Do(t, "PUT", "/v2/workflows/kept/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`); res.Status != 200 {
		t.Fatalf("sync: %d %s", res.Status, res.Body)
	}

	refused := func(t *testing.T, res *platformtest.Response, schema string) {
		t.Helper()
		is := is.New(t)
		is.Equal(res.Status, 422) // refused
		var e struct {
			Errors map[string]struct {
				Messages []string        `json:"messages"`
				Value    json.RawMessage `json:"value"`
			} `json:"errors"`
		}
		res.Decode(t, &e)
		f := e.Errors["payloadSchema"]
		is.True(len(f.Messages) > 0) // keyed by payloadSchema, with a message
		var got, want any
		json.Unmarshal(f.Value, &got)
		json.Unmarshal([]byte(schema), &want)
		is.Equal(got, want) // the value is the schema sent
		msg := strings.Join(f.Messages, " ")
		is.True(strings.Count(msg, "file://") <= strings.Count(schema, "file://")) // no file URL but the client's own
		is.True(!strings.Contains(msg, refs.Dir))                                  // nor the server's directory
	}
	for _, tc := range []struct{ name, schema string }{
		{"ErrTypeNumber", `{"type":12}`},
		{"ErrTypeUnknown", `{"type":"notatype"}`},
		{"ErrPattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`},
		{"ErrRemoteRef", `{"$ref":"` + refs.URL + `"}`},
		{"ErrFileRef", `{"$ref":"file://` + refs.File + `"}`},
		{"ErrRelativeRef", `{"$ref":"schema.json"}`},
		{"ErrMissingPointer", `{"properties":{"a":{"$ref":"#/$defs/nope"}}}`},
		{"ErrRefCycle", `{"$ref":"#"}`},
		{"ErrRefCycleThroughDefs", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id := strings.ToLower(tc.name)
			res := srv.Dev.Do(t, "POST", "/v2/workflows", fmt.Sprintf(`{"name":"R","workflowId":%q,"active":true,"validatePayload":true,"payloadSchema":%s,
				"steps":[{"name":"I","type":"in_app","controlValues":{"body":"x"}}]}`, id, tc.schema))
			refused(t, res, tc.schema)
			is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/"+id, "").Status, 404) // nothing created

			res = srv.Dev.Do(t, "PUT", "/v2/workflows/kept", `{"name":"Kept","payloadSchema":`+tc.schema+`,"steps":[]}`)
			refused(t, res, tc.schema)
			var kept wfResponse
			srv.Dev.Do(t, "GET", "/v2/workflows/kept", "").Decode(t, &kept)
			is.Equal(string(kept.PayloadSchema), `{"type":"object"}`) // update changed nothing
			is.Equal(kept.Name, "Kept")                               // not even the name
		})
	}
	is.New(t).Equal(refs.Fetched.Load(), int32(0)) // no $ref was fetched

	t.Run("ErrSyncStoredSchema", func(t *testing.T) {
		is := is.New(t)
		// A schema stored before writes were checked: sync refuses to copy it.
		_, err := srv.App.DB.ExecContext(context.Background(),
			`UPDATE workflows SET payload_schema = '{"type":12}' WHERE workflow_id = 'kept' AND environment_id = ?`, srv.App.Development.ID)
		is.NoErr(err) // stored the old way
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/kept/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
		refused(t, res, `{"type":12}`)
		var tgt wfResponse
		srv.Prod.Do(t, "GET", "/v2/workflows/kept", "").Decode(t, &tgt)
		is.Equal(string(tgt.PayloadSchema), `{"type":"object"}`) // the target is unchanged
	})

	t.Run("OKValidSchemas", func(t *testing.T) {
		for _, schema := range []string{
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/a"}},"definitions":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"b":{"type":"string","pattern":"^[a-z]+$"}},"$defs":{"a":{"type":["string","null"]}}}`,
		} {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", "/v2/workflows", `{"name":"Fine","payloadSchema":`+schema+`,"steps":[]}`)
			is.Equal(res.Status, 201) // a valid schema with internal $refs is accepted
		}
	})
}

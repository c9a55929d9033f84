package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// createdEnv is an environment as POST /v1/environments answers it.
type createdEnv struct {
	ID             string  `json:"_id"`
	Name           string  `json:"name"`
	Identifier     string  `json:"identifier"`
	OrganizationID string  `json:"_organizationId"`
	ParentID       *string `json:"_parentId"`
	APIKeys        []struct {
		Key    string `json:"key"`
		UserID string `json:"_userId"`
	} `json:"apiKeys"`
}

// mustCreateEnv creates an environment named name through the API and
// returns it with a client that sends its key.
func mustCreateEnv(t *testing.T, srv *apptest.Server, name string) (createdEnv, platformtest.Client) {
	t.Helper()
	var env createdEnv
	apptest.MustCreate(t, srv.Dev, "/v1/environments", `{"name":"`+name+`","color":"#3366ff"}`).Decode(t, &env)
	if len(env.APIKeys) != 1 {
		t.Fatalf("created %s with keys %+v", name, env.APIKeys)
	}
	return env, srv.Dev.WithKey(env.APIKeys[0].Key)
}

// envByID is the environment of list whose _id is id (a zero one when none is).
func envByID(list []createdEnv, id string) createdEnv {
	for _, e := range list {
		if e.ID == id {
			return e
		}
	}
	return createdEnv{}
}

// openSession starts an inbox session in the environment whose public
// identifier is identifier, and returns its status and the client.
func openSession(t *testing.T, srv *apptest.Server, identifier, subscriberID string) (int, *apptest.Inbox) {
	t.Helper()
	c := apptest.NewInbox(t, srv, "")
	status, body, _ := c.Do("POST", "/v1/inbox/session", `{"applicationIdentifier":"`+identifier+`","subscriber":{"subscriberId":"`+subscriberID+`"}}`)
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	json.Unmarshal(body, &out)
	c.Token = out.Data.Token
	return status, c
}

func TestEnvironments_Create(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, staging := mustCreateEnv(t, srv, "Staging")
		is.Equal(env.Name, "Staging")                                                     // the name is kept
		is.Equal(env.OrganizationID, srv.App.Development.OrganizationID)                  // in the caller's organization
		is.True(env.Identifier != "" && env.Identifier != srv.App.Development.Identifier) // its own identifier
		is.Equal(env.ParentID, nil)                                                       // no parent unless given one
		is.Equal(len(env.APIKeys[0].Key), 32)                                             // the new key, in full, this once
		is.True(env.APIKeys[0].UserID != "")                                              // the key's user is named

		var list []createdEnv
		res := srv.Dev.Do(t, "GET", "/v1/environments", "")
		res.Decode(t, &list)
		is.Equal(len(list), 3) // listed beside Development and Production
		listed := envByID(list, env.ID)
		is.True(strings.HasPrefix(listed.APIKeys[0].Key, "•")) // listed keys show only their end
		is.True(strings.HasSuffix(listed.APIKeys[0].Key, env.APIKeys[0].Key[28:]))

		var integrations []struct {
			EnvironmentID string `json:"_environmentId"`
			Channel       string `json:"channel"`
		}
		staging.Do(t, "GET", "/v1/integrations", "").Decode(t, &integrations)
		seeded := 0
		for _, in := range integrations {
			if in.EnvironmentID == env.ID && in.Channel == "in_app" {
				seeded++
			}
		}
		is.Equal(seeded, 1) // seeded with its in-app integration, as Development and Production are

		var child createdEnv
		apptest.MustCreate(t, srv.Dev, "/v1/environments", `{"name":"QA","color":"#000","parentId":"`+env.ID+`"}`).Decode(t, &child)
		is.True(child.ParentID != nil && *child.ParentID == env.ID) // the parent given is kept
	})
	t.Run("TriggerAndInbox", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, staging := mustCreateEnv(t, srv, "Staging")
		apptest.MustCreate(t, staging, "/v2/workflows", `{"name":"Hello","workflowId":"hello","active":true,
			"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi {{payload.name}}"}}]}`)
		apptest.MustCreate(t, staging, "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"name":"Ada"}}`)

		status, inbox := openSession(t, srv, env.Identifier, "ada")
		is.Equal(status, 201) // the inbox opens with the new environment's identifier
		got := inbox.Wait(1)
		is.Equal(got[0].Body, "Hi Ada") // the trigger in the new environment reached its inbox

		res := srv.Dev.Do(t, "GET", "/v1/subscribers/ada", "")
		is.Equal(res.Status, 404) // Development holds none of it
	})
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"ErrNoName", `{"color":"#fff"}`, 422},
		{"ErrBlankName", `{"name":"  ","color":"#fff"}`, 422},
		{"ErrNoColor", `{"name":"Staging"}`, 422},
		{"ErrNameNotString", `{"name":7,"color":"#fff"}`, 422},
		{"ErrLongName", `{"name":"` + strings.Repeat("n", 101) + `","color":"#fff"}`, 422},
		{"ErrParentNotID", `{"name":"Staging","color":"#fff","parentId":"nope"}`, 422},
		{"ErrParentUnknown", `{"name":"Staging","color":"#fff","parentId":"0123456789abcdef01234567"}`, 404},
		{"ErrDuplicateName", `{"name":"Development","color":"#fff"}`, 422},
		{"ErrDuplicateNameOtherCase", `{"name":"production","color":"#fff"}`, 422},
		{"ErrNotJSON", `{"name":`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv := apptest.NewServer(t)
			res := srv.Dev.Do(t, "POST", "/v1/environments", tc.body)
			is.Equal(res.Status, tc.status) // refused
			var list []createdEnv
			srv.Dev.Do(t, "GET", "/v1/environments", "").Decode(t, &list)
			is.Equal(len(list), 2) // nothing was created
		})
	}
	t.Run("ErrNoKey", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		res := srv.Dev.WithKey("").Do(t, "POST", "/v1/environments", `{"name":"Staging","color":"#fff"}`)
		is.Equal(res.Status, 401) // only a key's holder creates environments
	})
}

func TestEnvironments_Update(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, _ := mustCreateEnv(t, srv, "Staging")
		var got createdEnv
		res := srv.Dev.Do(t, "PUT", "/v1/environments/"+env.ID,
			`{"name":"QA","identifier":"qa-inbox","parentId":"`+srv.App.Development.ID+`","color":"#111","dns":{},"bridge":{}}`)
		is.Equal(res.Status, 200) // changed
		res.Decode(t, &got)
		is.Equal(got.Name, "QA")                                                     // renamed
		is.Equal(got.Identifier, "qa-inbox")                                         // new identifier
		is.True(got.ParentID != nil && *got.ParentID == srv.App.Development.ID)      // new parent
		is.True(len(got.APIKeys) == 1 && strings.HasPrefix(got.APIKeys[0].Key, "•")) // its key, masked

		status, _ := openSession(t, srv, "qa-inbox", "ada")
		is.Equal(status, 201) // the inbox opens with the new identifier
		status, _ = openSession(t, srv, env.Identifier, "ada")
		is.True(status >= 400 && status < 500) // and no longer with the old one

		res = srv.Dev.Do(t, "PUT", "/v1/environments/"+srv.App.Production.ID, `{"name":"Production","identifier":"prod-app"}`)
		is.Equal(res.Status, 200) // Production's identifier may change, its name given unchanged
	})
	for _, tc := range []struct {
		name, target, body string
		status             int
	}{
		{"ErrUnknown", "0123456789abcdef01234567", `{"name":"QA"}`, 404},
		{"ErrNotAnID", "nope", `{"name":"QA"}`, 404},
		{"ErrBlankName", "staging", `{"name":" "}`, 422},
		{"ErrRenameDevelopment", "dev", `{"name":"Dev"}`, 422},
		{"ErrRenameProduction", "prod", `{"name":"Live"}`, 422},
		{"ErrDuplicateName", "staging", `{"name":"PRODUCTION"}`, 422},
		{"ErrDuplicateIdentifier", "staging", `{"identifier":"{dev}"}`, 422},
		{"ErrBadIdentifier", "staging", `{"identifier":"a b"}`, 422},
		{"ErrEmptyIdentifier", "staging", `{"identifier":""}`, 422},
		{"ErrOwnParent", "staging", `{"parentId":"{staging}"}`, 422},
		{"ErrUnknownParent", "staging", `{"parentId":"0123456789abcdef01234567"}`, 404},
		{"ErrInboundDomain", "staging", `{"dns":{"inboundParseDomain":"mail.example.com"}}`, 422},
		{"ErrBridge", "staging", `{"bridge":{"url":"https://bridge.example.com"}}`, 422},
		{"ErrNotJSON", "staging", `[`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv := apptest.NewServer(t)
			env, _ := mustCreateEnv(t, srv, "Staging")
			ids := map[string]string{"staging": env.ID, "dev": srv.App.Development.ID, "prod": srv.App.Production.ID}
			target := tc.target
			if id, ok := ids[target]; ok {
				target = id
			}
			body := strings.NewReplacer("{dev}", srv.App.Development.Identifier, "{staging}", env.ID).Replace(tc.body)
			res := srv.Dev.Do(t, "PUT", "/v1/environments/"+target, body)
			is.Equal(res.Status, tc.status) // refused
			var list []createdEnv
			srv.Dev.Do(t, "GET", "/v1/environments", "").Decode(t, &list)
			is.Equal(envByID(list, env.ID).Name, "Staging")                                          // unchanged
			is.Equal(envByID(list, env.ID).Identifier, env.Identifier)                               // unchanged
			is.Equal(envByID(list, srv.App.Development.ID).Name, "Development")                      // unchanged
			is.Equal(envByID(list, srv.App.Production.ID).Identifier, srv.App.Production.Identifier) // unchanged
		})
	}
	t.Run("ErrOtherOrganization", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		other := otherOrganizationEnv(t, srv)
		res := srv.Dev.Do(t, "PUT", "/v1/environments/"+other, `{"name":"Mine"}`)
		is.Equal(res.Status, 404) // another organization's environment is not found
		res = srv.Dev.Do(t, "POST", "/v1/environments", `{"name":"Mine","color":"#fff","parentId":"`+other+`"}`)
		is.Equal(res.Status, 404) // nor taken as a parent
	})
}

// otherOrganizationEnv stores a second organization with one environment,
// which no API creates, and returns the environment's _id.
func otherOrganizationEnv(t *testing.T, srv *apptest.Server) string {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO organizations (id, name, created_at) VALUES ('0000000000000000000000a1', 'Other', '2024-01-01T00:00:00.000Z')`,
		`INSERT INTO environments (id, organization_id, name, identifier, created_at)
		 VALUES ('0000000000000000000000a2', '0000000000000000000000a1', 'Other', 'other-org-env', '2024-01-01T00:00:00.000Z')`,
	} {
		if _, err := srv.App.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return "0000000000000000000000a2"
}

func TestEnvironments_Delete(t *testing.T) {
	t.Run("OKEmpty", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, _ := mustCreateEnv(t, srv, "Staging")
		res := srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID, "")
		is.Equal(res.Status, 200) // an environment holding nothing goes without confirmation
		var list []createdEnv
		srv.Dev.Do(t, "GET", "/v1/environments", "").Decode(t, &list)
		is.Equal(len(list), 2)                                                        // gone from the list
		is.Equal(srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID, "").Status, 404) // and gone for good
	})
	t.Run("OKWithData", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, staging := mustCreateEnv(t, srv, "Staging")
		inbox := fillEnvironment(t, srv, staging, env.Identifier)
		socket := openSocket(t, srv, inbox.Token)
		platformtest.Eventually(t, 5*time.Second, func() bool { return countRows(t, srv, "subscriber_sockets") == 1 },
			"the inbox socket to be recorded")

		res := srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID, "")
		is.Equal(res.Status, 422) // data needs confirming
		for _, held := range []string{"1 workflows", "1 subscribers", "1 messages", "1 notifications", "1 topics", "1 webhook endpoints"} {
			is.True(strings.Contains(string(res.Body), held)) // the answer names what it holds
		}
		is.True(strings.Contains(string(res.Body), "confirm=true"))                                    // and how to confirm
		is.Equal(srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID+"?confirm=false", "").Status, 422) // false confirms nothing
		is.Equal(srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID+"?confirm=maybe", "").Status, 400) // nor does a non-boolean
		is.Equal(staging.Do(t, "GET", "/v1/subscribers/ada", "").Status, 200)                          // nothing was removed

		res = srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID+"?confirm=true", "")
		is.Equal(res.Status, 200)                                                           // deleted with everything in it
		is.Equal(staging.Do(t, "GET", "/v2/workflows", "").Status, http.StatusUnauthorized) // its key is refused at once
		status, _ := openSession(t, srv, env.Identifier, "ada")
		is.True(status >= 400 && status < 500) // its inbox no longer opens
		status, _, _ = inbox.Do("GET", "/v1/inbox/notifications", "")
		is.Equal(status, http.StatusUnauthorized) // and a session opened before is over
		for table, n := range rowsOf(t, srv, env.ID) {
			if n != 0 {
				t.Errorf("%s keeps %d rows of the deleted environment", table, n)
			}
		}
		is.Equal(countRows(t, srv, "message_payloads"), 0)   // its messages' payloads went with them
		is.Equal(countRows(t, srv, "execution_details"), 0)  // and its notifications' execution details
		is.Equal(countRows(t, srv, "subscriber_sockets"), 0) // and its subscribers' open sockets' records
		socket.CloseNow()
		is.Equal(srv.Dev.Do(t, "GET", "/v2/workflows/hello", "").Status, 404) // Development is untouched (it never had one)
	})
	t.Run("OKMoreThanABatch", func(t *testing.T) {
		is := is.New(t)
		srv := apptest.NewServer(t)
		env, staging := mustCreateEnv(t, srv, "Staging")
		for b := range 3 {
			var subs []string
			for i := range 500 {
				subs = append(subs, fmt.Sprintf(`{"subscriberId":"s%d-%d","email":"s%d-%d@example.com"}`, b, i, b, i))
			}
			apptest.MustCreate(t, staging, "/v1/subscribers/bulk", `{"subscribers":[`+strings.Join(subs, ",")+`]}`)
		}
		is.Equal(rowsOf(t, srv, env.ID)["subscribers"], 1500) // more subscribers than one batch deletes
		res := srv.Dev.Do(t, "DELETE", "/v1/environments/"+env.ID+"?confirm=true", "")
		is.Equal(res.Status, 200)                          // deleted
		is.Equal(rowsOf(t, srv, env.ID)["subscribers"], 0) // every batch of them
	})
	for _, tc := range []struct {
		name, target string
		status       int
	}{
		{"ErrDevelopment", "dev", 422},
		{"ErrProduction", "prod", 422},
		{"ErrUnknown", "0123456789abcdef01234567", 404},
		{"ErrOtherOrganization", "other", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			srv := apptest.NewServer(t)
			ids := map[string]string{"dev": srv.App.Development.ID, "prod": srv.App.Production.ID, "other": otherOrganizationEnv(t, srv)}
			target := tc.target
			if id, ok := ids[target]; ok {
				target = id
			}
			res := srv.Dev.Do(t, "DELETE", "/v1/environments/"+target+"?confirm=true", "")
			is.Equal(res.Status, tc.status)                                    // refused
			is.Equal(srv.Dev.Do(t, "GET", "/v1/environments", "").Status, 200) // the caller's key still works
			var n int
			srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM environments`).Scan(&n)
			is.True(n >= 2) // nothing was deleted
		})
	}
}

// fillEnvironment gives the environment one record of every kind: a
// workflow, a subscriber with a topic, a triggered notification and its
// message, a webhook endpoint, an integration.
func fillEnvironment(t *testing.T, srv *apptest.Server, c platformtest.Client, identifier string) *apptest.Inbox {
	t.Helper()
	apptest.MustCreate(t, c, "/v2/workflows", `{"name":"Hello","workflowId":"hello","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi {{payload.name}}"}}]}`)
	apptest.MustCreate(t, c, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`)
	apptest.MustCreate(t, c, "/v1/topics", `{"key":"team","name":"Team"}`)
	apptest.MustCreate(t, c, "/v2/webhooks/endpoints", `{"url":"http://127.0.0.1:9/hook"}`)
	apptest.MustCreate(t, c, "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"name":"Ada"}}`)
	_, inbox := openSession(t, srv, identifier, "ada")
	inbox.Wait(1)
	return inbox
}

// rowsOf counts, in every table with an environment_id column, the rows
// of the environment.
func rowsOf(t *testing.T, srv *apptest.Server, envID string) map[string]int {
	t.Helper()
	ctx := context.Background()
	q := `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table' AND p.name = 'environment_id'`
	if srv.App.DB.Postgres {
		q = `SELECT table_name FROM information_schema.columns
			WHERE column_name = 'environment_id' AND table_schema = current_schema()`
	}
	rows, err := srv.App.DB.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 20 {
		t.Fatalf("found only the tables %v", tables)
	}
	out := map[string]int{}
	for _, table := range tables {
		var n int
		if err := srv.App.DB.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`" WHERE environment_id = ?`, envID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func TestEnvironments_SyncBetweenCreated(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	_, staging := mustCreateEnv(t, srv, "Staging")
	qa, qaClient := mustCreateEnv(t, srv, "QA")
	apptest.MustCreate(t, staging, "/v2/workflows", `{"name":"Hello","workflowId":"hello","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	res := staging.Do(t, "PUT", "/v2/workflows/hello/sync", `{"targetEnvironmentId":"`+qa.ID+`"}`)
	is.Equal(res.Status, 200)                                              // one created environment syncs to another
	is.Equal(qaClient.Do(t, "GET", "/v2/workflows/hello", "").Status, 200) // the workflow is there
	res = qaClient.Do(t, "PUT", "/v2/workflows/hello/sync", `{"targetEnvironmentId":"`+srv.App.Production.ID+`"}`)
	is.Equal(res.Status, 200)                                              // and on to Production
	is.Equal(srv.Prod.Do(t, "GET", "/v2/workflows/hello", "").Status, 200) // where it arrives
}

func TestEnvironments_RetentionSweepsCreated(t *testing.T) {
	is := is.New(t)
	const day = 24 * time.Hour
	srv := apptest.NewServer(t, apptest.Retention(app.Retention{Activity: 30 * day, InApp: 30 * day, Messages: 30 * day}))
	env, staging := mustCreateEnv(t, srv, "Staging")
	apptest.MustCreate(t, staging, "/v2/workflows", `{"name":"Hello","workflowId":"hello","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi {{payload.name}}"}}]}`)
	apptest.MustCreate(t, staging, "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"name":"Ada"}}`)
	_, inbox := openSession(t, srv, env.Identifier, "ada")
	inbox.Wait(1)
	platformtest.Eventually(t, 10*time.Second, func() bool {
		return rowsOf(t, srv, env.ID)["jobs"] == 1 && jobsDone(t, srv, env.ID) // the in-app job; the trigger job is derived
	}, "the trigger's jobs to finish")

	srv.App.Clock.Advance(40 * day)
	is.NoErr(srv.Herald.Sweeper.Sweep(context.Background())) // swept
	rows := rowsOf(t, srv, env.ID)
	is.Equal(rows["notifications"], 0) // the created environment's old notification is gone
	is.Equal(rows["messages"], 0)      // and its old message
}

// jobsDone says whether every job of the environment has finished.
func jobsDone(t *testing.T, srv *apptest.Server, envID string) bool {
	t.Helper()
	var n int
	srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM jobs WHERE environment_id = ? AND status <> 'completed'`, envID).Scan(&n)
	return n == 0
}

// On PostgreSQL, an environment deleted through one instance is gone for
// the others too: its key is refused within their poll of revocations,
// and its subscribers' inbox sessions end.
func TestEnvironments_DeleteAcrossInstances(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewInstances(t, 2)
	env, staging := mustCreateEnv(t, srv[0], "Staging")
	onOther := staging.On(srv[1].Server.Server)
	inbox := fillEnvironment(t, srv[1], onOther, env.Identifier)
	is.Equal(onOther.Do(t, "GET", "/v1/subscribers/ada", "").Status, 200) // the other instance serves the environment

	res := srv[0].Dev.Do(t, "DELETE", "/v1/environments/"+env.ID+"?confirm=true", "")
	is.Equal(res.Status, 200) // deleted through the first
	platformtest.Eventually(t, 5*time.Second, func() bool {
		return onOther.Do(t, "GET", "/v2/workflows", "").Status == http.StatusUnauthorized
	}, "the other instance to refuse the deleted environment's key")
	platformtest.Eventually(t, 5*time.Second, func() bool {
		status, _, _ := inbox.Do("GET", "/v1/inbox/notifications", "")
		return status == http.StatusUnauthorized
	}, "the other instance to end the deleted environment's inbox session")
}

// openSocket opens the inbox's live socket with a subscriber token, as
// @novu/js does, and joins it.
func openSocket(t *testing.T, srv *apptest.Server, token string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket.io/?EIO=4&transport=websocket&token=" + token
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	if _, _, err := conn.Read(ctx); err != nil { // the open packet
		t.Fatal(err)
	}
	if err := conn.Write(ctx, websocket.MessageText, []byte("40")); err != nil {
		t.Fatal(err)
	}
	return conn
}

// countRows counts the rows of table, of every environment.
func countRows(t *testing.T, srv *apptest.Server, table string) int {
	t.Helper()
	var n int
	if err := srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEnvironments_Tags: an environment's tags are those its live
// workflows carry, each once, in order, and only its own.
func TestEnvironments_Tags(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	env, c := mustCreateEnv(t, srv, "Staging")
	tags := func(id string) []map[string]string {
		var out []map[string]string
		res := srv.Dev.Do(t, "GET", "/v2/environments/"+id+"/tags", "")
		is.Equal(res.Status, 200)
		res.Decode(t, &out)
		return out
	}
	is.Equal(tags(env.ID), []map[string]string{}) // none before a workflow
	apptest.MustCreate(t, c, "/v2/workflows", `{"name":"A","workflowId":"a","tags":["billing","alerts"],"steps":[]}`)
	apptest.MustCreate(t, c, "/v2/workflows", `{"name":"B","workflowId":"b","tags":["alerts"],"steps":[]}`)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"C","workflowId":"c","tags":["dev-only"],"steps":[]}`)
	is.Equal(tags(env.ID), []map[string]string{{"name": "alerts"}, {"name": "billing"}}) // each once, in order, its own
	is.Equal(c.Do(t, "DELETE", "/v2/workflows/a", "").Status, 204)
	is.Equal(tags(env.ID), []map[string]string{{"name": "alerts"}}) // a deleted workflow's go

	for name, id := range map[string]string{"ErrUnknown": "0000000000000000000000ff", "ErrOtherOrganization": otherOrganizationEnv(t, srv), "ErrNotAnID": "staging"} {
		res := srv.Dev.Do(t, "GET", "/v2/environments/"+id+"/tags", "")
		is.True(res.Status == 404 || res.Status == 422) // refused
		is.True(res.Status != 422 || name == "ErrNotAnID")
	}
}

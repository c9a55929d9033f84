package activity_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// TestDerivedRows_ReadAsStored checks that a notification's trigger job and
// "Step queued" details, derived when read, are not stored, and that every
// answer that shows them is byte for byte what it is when they are stored,
// as a notification written before they were derived holds them.
func TestDerivedRows_ReadAsStored(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := apptest.NewServer(t)
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Two","workflowId":"two","active":true,"steps":[
		{"name":"First","type":"in_app","controlValues":{"body":"one"}},
		{"name":"Second","type":"in_app","controlValues":{"body":"two"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	tx := apptest.TriggerTo(t, srv, "two", "ada", `{"n":1}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed", "in_app:completed")

	reads := func() []string {
		return []string{
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications?transactionId="+tx, "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications/"+n.ID, "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/execution-details?notificationId="+n.ID+"&subscriberId=ada", "", 200).Body),
		}
	}
	derived := reads()
	db := srv.App.DB
	count := func(query string) int {
		var c int
		is.NoErr(db.QueryRowContext(ctx, query, n.ID).Scan(&c))
		return c
	}
	is.Equal(count(`SELECT count(*) FROM jobs WHERE notification_id = ?`), 2)                           // the steps' jobs, not the trigger's
	is.Equal(count(`SELECT count(*) FROM execution_details WHERE notification_id = ? AND kind = 1`), 0) // no "Step queued"

	var one struct {
		Jobs []struct {
			ID               string          `json:"_id"`
			Step             json.RawMessage `json:"step"`
			ExecutionDetails []struct {
				ID     string `json:"_id"`
				Detail string `json:"detail"`
			} `json:"executionDetails"`
		} `json:"jobs"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications/"+n.ID, "").Decode(t, &one)
	jobs := one.Jobs
	is.Equal(len(jobs), 3) // the trigger job and the two steps'
	_, err := db.ExecContext(ctx, `
		INSERT INTO jobs (id, environment_id, notification_id, position, type, step_id, step, provider_id, status, created_at, updated_at)
		SELECT ?, environment_id, id, 0, 'trigger', 'trigger', ?, 'service', 'completed', created_at, created_at
		FROM notifications WHERE id = ?`, jobs[0].ID, string(jobs[0].Step), n.ID)
	is.NoErr(err) // the trigger job, stored
	for i, j := range jobs {
		is.Equal(j.ExecutionDetails[0].Detail, "Step queued") // each job's first
		_, err := db.ExecContext(ctx, `
			INSERT INTO execution_details (notification_id, seq, id, job_id, kind, provider_id)
			VALUES (?, ?, ?, ?, 1, 'service')`, n.ID, i-len(jobs), j.ExecutionDetails[0].ID, j.ID)
		is.NoErr(err) // its "Step queued", stored before the others
	}
	is.Equal(reads(), derived) // read the same stored as derived
}

// TestLeftOutValues_ReadAsStored checks that the values a notification, its
// message and its execution details leave out (an organization, an actor of none, a plain
// cta, an updated_at that is the created_at, a job's times that are its
// notification's, a delivery at creation, a
// detail's _id and job) are not stored, and that every answer showing them is byte
// for byte what it is when they are, as rows written before hold them.
func TestLeftOutValues_ReadAsStored(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := apptest.NewServer(t, apptest.PageCache(-1)) // the feed read from the database each time
	apptest.CreateHello(t, srv, "Hello")
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada"}`)
	tx := apptest.TriggerTo(t, srv, "hello", "ada", `{}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")
	inbox, _ := apptest.OpenInbox(t, srv, "ada", "")
	reads := func() []string {
		status, page, _ := inbox.Do("GET", "/v1/inbox/notifications", "")
		is.Equal(status, 200) // the inbox read
		return []string{
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications?transactionId="+tx, "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/notifications/"+n.ID, "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/execution-details?notificationId="+n.ID+"&subscriberId=ada", "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/subscribers/ada/notifications/feed", "", 200).Body),
			string(apptest.MustStatus(t, srv.Dev, "GET", "/v1/messages?transactionId="+tx, "", 200).Body),
			string(page),
		}
	}
	left := reads()
	db := srv.App.DB
	var stored string
	is.NoErr(db.QueryRowContext(ctx, `SELECT actor || '|' || updated_at || '|' || organization_id FROM notifications WHERE id = ?`, n.ID).Scan(&stored))
	is.Equal(stored, "||") // the notification's actor, updated_at and organization left out
	is.NoErr(db.QueryRowContext(ctx, `SELECT actor || '|' || cta || '|' || updated_at || '|' || delivered_at || '|' || organization_id
		FROM messages WHERE notification_id = ?`, n.ID).Scan(&stored))
	is.Equal(stored, "||||") // and the message's actor, cta, updated_at, delivery time and organization
	var leftOut int
	is.NoErr(db.QueryRowContext(ctx, `SELECT count(*) FROM execution_details WHERE notification_id = ? AND id = '' AND job_id = ''`, n.ID).Scan(&leftOut))
	is.Equal(leftOut, 2) // the delivery's two details leave out their _id and job
	is.NoErr(db.QueryRowContext(ctx, `SELECT created_at || '|' || updated_at FROM jobs WHERE notification_id = ?`, n.ID).Scan(&stored))
	is.Equal(stored, "|") // and the job its created_at and updated_at

	var one struct {
		Jobs []struct {
			ID               string `json:"_id"`
			ExecutionDetails []struct {
				ID string `json:"_id"`
			} `json:"executionDetails"`
		} `json:"jobs"`
	}
	srv.Dev.Do(t, "GET", "/v1/notifications/"+n.ID, "").Decode(t, &one)
	is.Equal(len(one.Jobs), 2)                     // the trigger job and the in-app one
	is.Equal(len(one.Jobs[1].ExecutionDetails), 3) // "Step queued", derived, then the two stored
	for seq, d := range one.Jobs[1].ExecutionDetails[1:] {
		_, err := db.ExecContext(ctx, `UPDATE execution_details SET id = ?, job_id = ? WHERE notification_id = ? AND seq = ?`,
			d.ID, one.Jobs[1].ID, n.ID, seq+1)
		is.NoErr(err) // stored as details written before hold them
	}

	for _, q := range []string{
		`UPDATE notifications SET organization_id = ? WHERE id = ?`,
		`UPDATE messages SET organization_id = ? WHERE notification_id = ?`,
	} {
		_, err := db.ExecContext(ctx, q, srv.App.Development.OrganizationID, n.ID)
		is.NoErr(err) // the organization, as rows written before hold it
	}
	for _, q := range []string{
		`UPDATE notifications SET actor = '{"type":"none","data":null}', updated_at = created_at WHERE id = ?`,
		`UPDATE jobs SET created_at = (SELECT n.created_at FROM notifications n WHERE n.id = jobs.notification_id),
			updated_at = (SELECT n.created_at FROM notifications n WHERE n.id = jobs.notification_id) WHERE notification_id = ?`,
		`UPDATE messages SET actor = '{"type":"none","data":null}', cta = '{"data":{},"type":"redirect"}', updated_at = created_at,
			delivered_at = '["' || created_at || '"]' WHERE notification_id = ?`,
	} {
		_, err := db.ExecContext(ctx, q, n.ID)
		is.NoErr(err) // stored as rows written before hold them
	}
	is.Equal(reads(), left) // read the same
}

package activity

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// executionDetail is one line of a notification's execution log as GET
// /v1/execution-details lists it: a detail with the ids of the job, the
// notification and the subscriber it belongs to.
type executionDetail struct {
	ID                     string  `json:"_id"`
	OrganizationID         string  `json:"_organizationId"`
	EnvironmentID          string  `json:"_environmentId"`
	JobID                  string  `json:"_jobId"`
	NotificationID         string  `json:"_notificationId"`
	NotificationTemplateID string  `json:"_notificationTemplateId"`
	SubscriberID           string  `json:"_subscriberId"`
	ProviderID             string  `json:"providerId"`
	TransactionID          string  `json:"transactionId"`
	Channel                string  `json:"channel"`
	Detail                 string  `json:"detail"`
	Source                 string  `json:"source"`
	Status                 string  `json:"status"`
	IsTest                 bool    `json:"isTest"`
	IsRetry                bool    `json:"isRetry"`
	CreatedAt              string  `json:"createdAt"`
	Raw                    *string `json:"raw"`
}

// handleExecutionDetails serves GET /v1/execution-details: the execution
// details of one notification of one subscriber, in the order they were
// written. Both query values are required; a subscriber or notification
// that is not the environment's is a 404.
func handleExecutionDetails(s *Store, subscribers Subscribers) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		notificationID, subscriberID := q.String("notificationId"), q.String("subscriberId")
		if notificationID == "" {
			q.Fail("notificationId", nil, "notificationId should not be empty")
		}
		if subscriberID == "" {
			q.Fail("subscriberId", nil, "subscriberId should not be empty")
		}
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		env := platform.TenantFrom(ctx).EnvironmentID
		subs, err := subscribers.SubscribersBySubscriberID(ctx, env, []string{subscriberID})
		if err != nil {
			return err
		}
		sub, ok := subs[subscriberID]
		if !ok {
			return platform.NotFound("Subscriber %s not found", subscriberID)
		}
		if !sqldb.IsID(notificationID) {
			return platform.NotFound("Notification %s not found", notificationID)
		}
		out, err := s.executionDetails(ctx, env, notificationID, sub.ID)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// executionDetails reads the details of the subscriber's notification, the
// derived ones first (derived.go), in one read transaction; a notification
// of another subscriber has none.
func (s *Store) executionDetails(ctx context.Context, environmentID, notificationID, subscriberRef string) (out []executionDetail, err error) {
	defer platform.Wrap(&err, "execution details of %s", notificationID)
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var n executionDetail // the fields every detail of the notification shares
	err = tx.QueryRowContext(ctx, `
		SELECT id, organization_id, environment_id, template_id, subscriber_id, transaction_id, created_at
		FROM notifications WHERE id = ? AND environment_id = ? AND subscriber_id = ?`, notificationID, environmentID, subscriberRef).
		Scan(&n.NotificationID, &n.OrganizationID, &n.EnvironmentID, &n.NotificationTemplateID, &n.SubscriberID, &n.TransactionID, &n.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return []executionDetail{}, nil
	}
	if err != nil {
		return nil, err
	}
	if n.OrganizationID, err = s.orgs.Of(ctx, environmentID, n.OrganizationID); err != nil {
		return nil, err
	}
	stored, err := storedDetails(ctx, tx, "?", []any{notificationID}, shapeList)
	if err != nil {
		return nil, err
	}
	queued := queuedStored(stored)
	jobs, err := tx.QueryContext(ctx, `SELECT id, type, position FROM jobs WHERE notification_id = ? ORDER BY position`, notificationID)
	if err != nil {
		return nil, err
	}
	defer jobs.Close()
	out = []executionDetail{}
	derive := func(jobID, stepType string) {
		if !queued[jobID] {
			out = append(out, n.of(jobID, stepType, queuedDetail(jobID, stepType, n.CreatedAt, shapeList)))
		}
	}
	// A trigger job is derived where none is stored at position 0; a job
	// out of the chain (position -1) has no "Step queued".
	types, sawJob := map[string]string{}, false
	for jobs.Next() {
		var id, stepType string
		var position int
		if err := jobs.Scan(&id, &stepType, &position); err != nil {
			return nil, err
		}
		types[id] = stepType
		if position < 0 {
			continue
		}
		if !sawJob && position != 0 {
			derive(triggerJobID(notificationID), stepTrigger)
		}
		sawJob = true
		derive(id, stepType)
	}
	if err := jobs.Err(); err != nil {
		return nil, err
	}
	if !sawJob {
		derive(triggerJobID(notificationID), stepTrigger)
	}
	for _, d := range stored {
		out = append(out, n.of(d.jobID, types[d.jobID], d.detailResponse))
	}
	return out, nil
}

// of is detail d of the job jobID, of the step type, as a detail of the
// notification n lists it.
func (n executionDetail) of(jobID, stepType string, d detailResponse) executionDetail {
	n.ID, n.JobID, n.Channel, n.ProviderID = d.ID, jobID, stepType, d.ProviderID
	n.Status, n.Detail, n.Source, n.CreatedAt, n.IsTest, n.IsRetry, n.Raw = d.Status, d.Detail, d.Source, d.CreatedAt, d.IsTest, d.IsRetry, d.Raw
	return n
}

// detailKinds are the execution details that many jobs write word for
// word: one of them is stored as its kind, its index here plus one, and
// its texts are read from here. Kinds are stored, so this list only ever
// grows at its end, and migration 000063 names the same ones.
var detailKinds = [...]struct{ status, detail, source string }{
	{detailPending, "Step queued", sourceInternal},
	{detailPending, "Message created", sourceInternal},
	{detailSuccess, "Message sent", sourceInternal},
	{detailSuccess, "Delay is finished", sourceInternal},
	{detailPending, "Step delayed", sourceInternal},
	{detailSuccess, "Custom step passed", sourceInternal},
	{detailSuccess, "Step was skipped based on steps conditions", sourceInternal},
	{detailSuccess, "Step was filtered based on steps filters", sourceInternal},
	{detailPending, "Step digested", sourceInternal},
	{detailSuccess, "Digest triggered events", sourceInternal},
	{detailSuccess, "Step passed the throttle", sourceInternal},
}

var detailKindOf = func() map[[3]string]int {
	m := make(map[[3]string]int, len(detailKinds))
	for i, k := range detailKinds {
		m[[3]string{k.status, k.detail, k.source}] = i + 1
	}
	return m
}()

// kindOf is the kind of a detail with these texts, 0 for one stored as
// its texts.
func kindOf(status, detail, source string) int {
	return detailKindOf[[3]string{status, detail, source}]
}

// detailTexts fills in the texts of a detail stored as its kind; one of
// kind 0 keeps those read from its columns.
func detailTexts(kind int, status, detail, source *string) {
	if kind < 1 || kind > len(detailKinds) {
		return
	}
	k := detailKinds[kind-1]
	*status, *detail, *source = k.status, k.detail, k.source
}

// detailTextColumns read a detail's status, detail and source (empty where
// its kind stands for them), then its kind.
const detailTextColumns = `coalesce(d.status, ''), coalesce(d.detail, ''), coalesce(d.source, ''), d.kind`

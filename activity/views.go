package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// Views reads the activity records as Go values, for the console: the same
// queries and filters as GET /v1/notifications and its single event, with
// every job's own provider.
type Views struct {
	store       *Store
	subscribers Subscribers
}

// NewViews returns the views of store's records, whose subscribers are
// read through subscribers.
func NewViews(store *Store, subscribers Subscribers) *Views {
	return &Views{store: store, subscribers: subscribers}
}

// Notification is one triggered event for one subscriber, with its jobs.
type Notification struct {
	ID, TransactionID string
	CreatedAt         string
	WorkflowID        string // the workflow's _id
	WorkflowName      string // as it was when triggered
	WorkflowKey       string // its workflowId, the trigger's name
	Subscriber        subscribers.Subscriber
	SubscriberMissing bool // deleted since: Subscriber holds what the trigger kept of it
	Channels, Tags    []string
	Topics            []string // the keys of the topics it came through
	Severity          string
	Critical          bool
	Payload           json.RawMessage // the trigger's payload, for display
	DigestedByID      string          // the notification whose digest took this one in
	Jobs              []Job
}

// Job is one step of a notification as it ran.
type Job struct {
	ID, Type, Status string
	StepName         string
	ProviderID       string
	UpdatedAt        string
	Details          []ExecutionDetail
}

// ExecutionDetail is one record of what a step did, with the provider's
// raw answer when there is one.
type ExecutionDetail struct {
	ID, CreatedAt, Status, Detail, Source, ProviderID string
	Raw                                               string
	IsRetry, IsTest                                   bool
}

// Overall statuses of a notification, from its jobs (Status).
const (
	NotificationFailed    = "failed"
	NotificationPending   = "pending"
	NotificationCompleted = "completed"
	NotificationCanceled  = "canceled"
)

// Status is the notification's state as a whole: failed when a step
// failed, pending while a step is still to run, canceled when a step was
// canceled and none failed, completed once every step ended otherwise.
func (n Notification) Status() string {
	canceled := false
	for _, j := range n.Jobs {
		switch j.Status {
		case statusFailed:
			return NotificationFailed
		case statusCanceled:
			canceled = true
		}
	}
	for _, j := range n.Jobs {
		switch j.Status {
		case statusPending, statusQueued, statusRunning, statusDelayed:
			return NotificationPending
		}
	}
	if canceled {
		return NotificationCanceled
	}
	return NotificationCompleted
}

// NotificationPage is one page of the notifications list.
type NotificationPage struct {
	Notifications []Notification
	Page, Limit   int
	HasMore       bool
}

// Notifications reads one page as GET /v1/notifications with query reads
// it (docs/api.md, "Notifications"): the same filters and rules, the same
// 4xx errors.
func (v *Views) Notifications(ctx context.Context, envID string, query url.Values) (NotificationPage, error) {
	nq, err := readNotificationQuery(platform.QueryOf(query))
	if err != nil {
		return NotificationPage{}, err
	}
	rows, jobs, hasMore, err := v.store.notificationPage(ctx, envID, nq, v.subscribers, shapeStored)
	if err != nil {
		return NotificationPage{}, err
	}
	ns, err := v.views(ctx, envID, rows, jobs)
	return NotificationPage{Notifications: ns, Page: nq.f.page, Limit: nq.f.limit, HasMore: hasMore}, err
}

// Notification reads one notification with its jobs and their details, or
// a 404.
func (v *Views) Notification(ctx context.Context, envID, id string) (Notification, error) {
	if !sqldb.IsID(id) {
		return Notification{}, platform.NotFound("Notification %s not found", id)
	}
	rows, jobs, err := v.store.readNotifications(ctx, shapeStored, func(q querier) ([]notificationRow, error) {
		row, err := getNotification(ctx, q, envID, id)
		return []notificationRow{row}, err
	})
	if errors.Is(err, platform.ErrNotFound) {
		return Notification{}, platform.NotFound("Notification %s not found", id)
	}
	if err != nil {
		return Notification{}, err
	}
	ns, err := v.views(ctx, envID, rows, jobs)
	if err != nil {
		return Notification{}, err
	}
	return ns[0], nil
}

// views converts rows, reading the page's subscribers in one call.
func (v *Views) views(ctx context.Context, envID string, rows []notificationRow, jobs map[string][]jobResponse) ([]Notification, error) {
	ids := make([]string, 0, len(rows))
	for _, n := range rows {
		ids = append(ids, n.SubscriberID)
	}
	subs, err := v.subscribers.SubscribersByID(ctx, envID, ids)
	if err != nil {
		return nil, fmt.Errorf("read subscribers: %w", err)
	}
	if err := v.store.fillSnapshots(ctx, envID, rows, subs); err != nil {
		return nil, err
	}
	out := make([]Notification, 0, len(rows))
	for _, row := range rows {
		n := Notification{ID: row.ID, TransactionID: row.TransactionID, CreatedAt: row.CreatedAt, WorkflowID: row.TemplateID,
			Severity: row.Severity, Critical: row.Critical, Payload: json.RawMessage(row.Payload),
			DigestedByID: row.DigestedNotificationID}
		var tmpl struct {
			Name     string `json:"name"`
			Triggers []struct {
				Identifier string `json:"identifier"`
			} `json:"triggers"`
		}
		json.Unmarshal([]byte(row.Template), &tmpl)
		n.WorkflowName = tmpl.Name
		if len(tmpl.Triggers) > 0 {
			n.WorkflowKey = tmpl.Triggers[0].Identifier
		}
		json.Unmarshal([]byte(row.Channels), &n.Channels)
		n.Channels = without(n.Channels, stepThrottle)
		json.Unmarshal([]byte(row.Tags), &n.Tags)
		var topics []struct {
			Key string `json:"topicKey"`
		}
		json.Unmarshal([]byte(row.Topics), &topics)
		for _, t := range topics {
			n.Topics = append(n.Topics, t.Key)
		}
		if sub, ok := subs[row.SubscriberID]; ok {
			n.Subscriber = sub
		} else {
			n.SubscriberMissing = true
			json.Unmarshal([]byte(row.Snapshot), &n.Subscriber)
		}
		for _, j := range jobs[row.ID] {
			n.Jobs = append(n.Jobs, jobView(j))
		}
		out = append(out, n)
	}
	return out, nil
}

func jobView(j jobResponse) Job {
	out := Job{ID: j.ID, Type: j.Type, Status: j.Status, ProviderID: j.ProviderID, UpdatedAt: j.UpdatedAt}
	var step struct {
		Name string `json:"name"`
	}
	json.Unmarshal(j.Step, &step)
	out.StepName = step.Name
	for _, d := range j.ExecutionDetails {
		ed := ExecutionDetail{ID: d.ID, CreatedAt: d.CreatedAt, Status: d.Status, Detail: d.Detail, Source: d.Source,
			ProviderID: d.ProviderID, IsRetry: d.IsRetry, IsTest: d.IsTest}
		if d.Raw != nil {
			ed.Raw = *d.Raw
		}
		out.Details = append(out.Details, ed)
	}
	return out
}

// TriggerCount counts the environment's notifications created since since,
// up to limit: capped is true when there are at least that many, and the
// count stops there, so it costs the same on any database.
func (v *Views) TriggerCount(ctx context.Context, envID string, since time.Time, limit int) (n int, capped bool, err error) {
	err = v.store.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+v.store.notificationsSQL.byList+`
		WHERE environment_id = ? AND created_at >= ? LIMIT ?) AS recent`, envID, sqldb.FormatTime(since), limit).Scan(&n)
	if err != nil {
		return 0, false, fmt.Errorf("count notifications: %w", err)
	}
	return n, n >= limit, nil
}

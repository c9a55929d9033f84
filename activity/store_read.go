package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// listFilter is the query of GET /v1/notifications. Its subscriber filters
// (subscriberIds, emails, search) are resolved to the subscribers' database
// _ids first, as the platform does; nil means no such filter.
type listFilter struct {
	page, limit   int
	channels      []string
	templates     []string
	subscribers   []string
	severity      []string
	transactionID []string
	topicKey      string
	contextKeys   []string
	after, before time.Time
}

// notificationRow is a stored notification.
type notificationRow struct {
	ID, EnvironmentID, OrganizationID, SubscriberID, TemplateID, TransactionID string
	DigestedNotificationID                                                     string
	Snapshot, Channels, Template, Payload, To, Tags, ContextKeys, Topics       string
	Severity                                                                   string
	Critical                                                                   bool
	CreatedAt, UpdatedAt                                                       string
}

// notificationColumns are the columns scanNotification reads; the large
// values a trigger shares are read from where they are stored once.
var notificationColumns = `id, environment_id, organization_id, subscriber_id, template_id, transaction_id,
	digested_notification_id, subscriber_snapshot, channels, ` + snapshotColumn("template", sqldb.ValueColumn("template")) + `, ` +
	sqldb.ValueColumn("payload") + `, recipient, tags, context_keys, topics, severity, critical, created_at, ` +
	sqldb.LeftOutColumn("updated_at", "created_at")

func scanNotification(sc interface{ Scan(...any) error }) (notificationRow, error) {
	var n notificationRow
	err := sc.Scan(&n.ID, &n.EnvironmentID, &n.OrganizationID, &n.SubscriberID, &n.TemplateID, &n.TransactionID,
		&n.DigestedNotificationID, &n.Snapshot, &n.Channels, &n.Template, &n.Payload, &n.To, &n.Tags, &n.ContextKeys, &n.Topics,
		&n.Severity, &n.Critical, &n.CreatedAt, &n.UpdatedAt)
	return n, err
}

// in appends "col IN (?, …)" for vals to where/args.
func in(where []string, args []any, expr string, vals []string) ([]string, []any) {
	if len(vals) == 0 {
		return where, args
	}
	where = append(where, expr+" IN ("+sqldb.Placeholders(len(vals))+")")
	for _, v := range vals {
		args = append(args, v)
	}
	return where, args
}

// querier is a read pool or a read transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// shape is which answer the jobs are read for: the list's and the single
// event's differ on the API (render), and the console reads what is
// stored, every job with its own provider.
type shape int

const (
	shapeList shape = iota
	shapeOne
	shapeStored
)

// readNotifications reads notifications and their jobs and details in one
// read transaction, so a job's status and its details agree even while the
// worker writes. page runs the notification query.
func (s *Store) readNotifications(ctx context.Context, sh shape, page func(q querier) ([]notificationRow, error)) (rows []notificationRow, jobs map[string][]jobResponse, err error) {
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	rows, err = page(tx)
	if err != nil || len(rows) == 0 {
		return rows, nil, err
	}
	ids := make([]string, len(rows))
	for i, n := range rows {
		ids[i] = n.ID
	}
	jobs, err = jobsOf(ctx, tx, ids, sh)
	return rows, jobs, err
}

// listNotifications returns one page, newest first, and whether a later page
// has items (it reads one row past the page to know).
func listNotifications(ctx context.Context, q querier, n *notificationsSQL, envID string, f listFilter) (out []notificationRow, hasMore bool, err error) {
	defer platform.Wrap(&err, "list notifications")
	query, args := n.query(envID, f)
	rows, err := q.QueryContext(ctx, query+` LIMIT ? OFFSET ?`, append(args, f.limit+1, f.page*f.limit)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(out) > f.limit {
		return out[:f.limit], true, nil
	}
	return out, false, nil
}

// notificationsSQL are the fragments of the notifications list that
// depend on the dialect alone, spelled once per store.
type notificationsSQL struct {
	// The FROM items through each index, and through a context key's or a
	// topic's entries.
	byList, byTransaction, bySubscriber, byTemplate, bySeverity string
	byContext, byTopic                                          string
	// Conditions.
	subscribersIn, hasChannel, inContextKeys, hasTopic string
}

func newNotificationsSQL(d sqldb.Dialect) *notificationsSQL {
	// The entries hold the notification's created_at and id, in the list's
	// order; the subquery names them apart from the notification's own
	// columns.
	entries := func(table, at, key, alias string) string {
		return `(SELECT notification_id, created_at AS ` + at + ` FROM ` + table + `
			WHERE environment_id = ? AND ` + key + ` = ?) ` + alias + ` ` + d.OrderedJoin() + ` notifications ON id = notification_id`
	}
	return &notificationsSQL{
		byList:        d.IndexedBy("notifications", "notifications_list"),
		byTransaction: d.IndexedBy("notifications", "notifications_transaction"),
		bySubscriber:  d.IndexedBy("notifications", "notifications_subscriber"),
		byTemplate:    d.IndexedBy("notifications", "notifications_template"),
		bySeverity:    d.IndexedBy("notifications", "notifications_severity"),
		byContext:     entries("notification_contexts", "context_at", "context_key", "c"),
		byTopic:       entries("notification_topics", "topic_at", "topic_key", "t"), // migration 000025
		subscribersIn: "subscriber_id IN (SELECT value FROM " + d.JSONTexts("?", "") + ")",
		hasChannel:    d.Instr("channels", "?") + " > 0",
		inContextKeys: "EXISTS (SELECT 1 FROM " + d.JSONTexts("notifications.context_keys", "") + " WHERE ",
		hasTopic: "EXISTS (SELECT 1 FROM " + d.JSONElements("notifications.topics", "e") +
			" WHERE " + d.JSONField("e.value", "topicKey") + " = ?)",
	}
}

// query is the SELECT of f's notifications, newest first,
// without its LIMIT, and its arguments. A transaction has a few
// notifications, so that filter is read through its own index and the page
// sorted. One subscriber's, one context key's, one workflow's or one
// severity's (other than none) are read through theirs, newest first in the
// index's order, so a page costs the same however rare they are
// (BenchmarkNotificationsList times a subscriber triggered once among many
// notifications).
// Any other page reads notifications_list, the environment newest first,
// which SQLite would also pick without statistics; it carries severity,
// channels, workflow and subscriber, so that those filters are tested on
// the index and only a page's matches are sought in the table (migration
// 000020). Several subscribers, workflows, context keys or severities would
// each need a sort of all their notifications through their own index, so
// they are tested that way too. The index is a hint of the dialect's
// (IndexedBy), as is the order of the entries' join (OrderedJoin).
func (n *notificationsSQL) query(envID string, f listFilter) (query string, args []any) {
	from, order := n.byList, "created_at DESC, id DESC"
	var where []string
	byContext, byTopic := false, false
	switch {
	case len(f.transactionID) > 0:
		from = n.byTransaction
	case len(f.subscribers) == 1:
		from = n.bySubscriber
	case len(f.contextKeys) == 1:
		from, order, byContext = n.byContext, "context_at DESC, notification_id DESC", true
		args = append(args, envID, f.contextKeys[0])
	case f.topicKey != "":
		from, order, byTopic = n.byTopic, "topic_at DESC, notification_id DESC", true
		args = append(args, envID, f.topicKey)
	case len(f.templates) == 1:
		from = n.byTemplate
	case len(f.severity) == 1 && f.severity[0] != "none":
		// The index holds only notifications whose severity is not none;
		// SQLite reads it only for a query that repeats that condition.
		from = n.bySeverity
		where = append(where, "severity <> 'none'")
	}
	where, args = append(where, "environment_id = ?"), append(args, envID)
	where, args = in(where, args, "template_id", f.templates)
	switch len(f.subscribers) {
	case 0:
	case 1:
		where, args = append(where, "subscriber_id = ?"), append(args, f.subscribers[0])
	default:
		// A search may resolve to any number of subscribers: one parameter
		// holds them all, where a parameter each could pass SQLite's limit.
		ids, _ := json.Marshal(f.subscribers)
		where, args = append(where, n.subscribersIn), append(args, string(ids))
	}
	where, args = in(where, args, "severity", f.severity)
	where, args = in(where, args, "transaction_id", f.transactionID)
	if len(f.channels) > 0 {
		// channels is a JSON array of step types, names without quotes or
		// escapes, so a channel is in it when its quoted name is: a test of
		// the text on the index, where json_each cost twice as much.
		var anyOf []string
		for _, ch := range f.channels {
			quoted, _ := json.Marshal(ch)
			anyOf, args = append(anyOf, n.hasChannel), append(args, string(quoted))
		}
		where = append(where, "("+strings.Join(anyOf, " OR ")+")")
	}
	if len(f.contextKeys) > 0 && !byContext {
		var w []string
		w, args = in(nil, args, "value", f.contextKeys)
		where = append(where, n.inContextKeys+w[0]+")")
	}
	if f.topicKey != "" && !byTopic {
		where = append(where, n.hasTopic)
		args = append(args, f.topicKey)
	}
	if !f.after.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, sqldb.FormatTime(f.after))
	}
	if !f.before.IsZero() {
		where = append(where, "created_at <= ?")
		args = append(args, sqldb.FormatTime(f.before))
	}
	return `SELECT ` + notificationColumns + ` FROM ` + from + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY ` + order, args
}

// getNotification returns one notification of the environment, or platform.ErrNotFound.
func getNotification(ctx context.Context, q querier, envID, id string) (notificationRow, error) {
	n, err := scanNotification(q.QueryRowContext(ctx, `SELECT `+notificationColumns+`
		FROM notifications WHERE id = ? AND environment_id = ?`, id, envID))
	if errors.Is(err, sql.ErrNoRows) {
		return n, platform.ErrNotFound
	}
	if err != nil {
		return n, fmt.Errorf("get notification %s: %w", id, err)
	}
	return n, nil
}

// Wire shapes of the "Notifications" section of docs/api.md.
type (
	notificationResponse struct {
		ID                     string          `json:"_id"`
		EnvironmentID          string          `json:"_environmentId"`
		OrganizationID         string          `json:"_organizationId"`
		SubscriberID           string          `json:"_subscriberId"`
		TemplateID             string          `json:"_templateId"`
		DigestedNotificationID string          `json:"_digestedNotificationId,omitempty"`
		TransactionID          string          `json:"transactionId"`
		CreatedAt              string          `json:"createdAt"`
		UpdatedAt              string          `json:"updatedAt"`
		Channels               []string        `json:"channels"`
		Subscriber             json.RawMessage `json:"subscriber"`
		Template               json.RawMessage `json:"template"`
		Jobs                   []jobResponse   `json:"jobs"`
		Payload                json.RawMessage `json:"payload"`
		To                     json.RawMessage `json:"to"`
		Tags                   json.RawMessage `json:"tags"`
		Topics                 json.RawMessage `json:"topics"`
		Severity               *string         `json:"severity,omitempty"`
		Critical               *bool           `json:"critical,omitempty"`
		ContextKeys            json.RawMessage `json:"contextKeys,omitempty"`
	}
	jobResponse struct {
		ID                      string           `json:"_id"`
		Type                    string           `json:"type"`
		Digest                  json.RawMessage  `json:"digest,omitempty"`
		ExecutionDetails        []detailResponse `json:"executionDetails"`
		Step                    json.RawMessage  `json:"step"`
		Overrides               json.RawMessage  `json:"overrides"`
		Payload                 json.RawMessage  `json:"payload"`
		ProviderID              string           `json:"providerId"`
		Status                  string           `json:"status"`
		UpdatedAt               string           `json:"updatedAt"`
		ScheduleExtensionsCount *int             `json:"scheduleExtensionsCount,omitempty"`
	}
	detailResponse struct {
		ID         string  `json:"_id"`
		CreatedAt  string  `json:"createdAt"`
		Status     string  `json:"status"`
		Detail     string  `json:"detail"`
		IsRetry    bool    `json:"isRetry"`
		IsTest     bool    `json:"isTest"`
		ProviderID string  `json:"providerId"`
		Raw        *string `json:"raw"`
		Source     string  `json:"source"`
	}
)

// render turns rows into the wire shape, reading every job, detail and
// subscriber of the page in one query each. list selects the list
// endpoint's variant (severity, critical, contextKeys, throttle jobs and the
// wider providerId set); the single-event variant leaves those out.
func (s *Store) render(ctx context.Context, envID string, rows []notificationRow, jobs map[string][]jobResponse, subscribers Subscribers, list bool) ([]notificationResponse, error) {
	out := make([]notificationResponse, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	subIDs := make([]string, 0, len(rows))
	seen := map[string]bool{}
	for _, n := range rows {
		if !seen[n.SubscriberID] {
			seen[n.SubscriberID] = true
			subIDs = append(subIDs, n.SubscriberID)
		}
	}
	subs, err := subscribers.SubscribersByID(ctx, envID, subIDs)
	if err != nil {
		return nil, fmt.Errorf("read subscribers: %w", err)
	}
	if err := s.fillSnapshots(ctx, envID, rows, subs); err != nil {
		return nil, err
	}
	for _, n := range rows {
		org, err := s.orgs.Of(ctx, envID, n.OrganizationID)
		if err != nil {
			return nil, err
		}
		r := notificationResponse{
			ID: n.ID, EnvironmentID: n.EnvironmentID, OrganizationID: org, SubscriberID: n.SubscriberID,
			TemplateID: n.TemplateID, DigestedNotificationID: n.DigestedNotificationID, TransactionID: n.TransactionID,
			CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Template: json.RawMessage(n.Template),
			Jobs: jobs[n.ID], Payload: json.RawMessage(n.Payload), To: json.RawMessage(n.To),
			Tags: json.RawMessage(n.Tags), Topics: json.RawMessage(n.Topics),
		}
		if r.Jobs == nil {
			r.Jobs = []jobResponse{}
		}
		json.Unmarshal([]byte(n.Channels), &r.Channels)
		if !list {
			r.Channels = without(r.Channels, stepThrottle)
		}
		if r.Channels == nil {
			r.Channels = []string{}
		}
		r.Subscriber = json.RawMessage(n.Snapshot)
		if sub, ok := subs[n.SubscriberID]; ok {
			r.Subscriber, _ = json.Marshal(summaryOf(&sub))
		}
		if list {
			sev, crit := n.Severity, n.Critical
			r.Severity, r.Critical, r.ContextKeys = &sev, &crit, json.RawMessage(n.ContextKeys)
		}
		out = append(out, r)
	}
	return out, nil
}

// jobsOf returns the jobs of the notifications, keyed by notification, each
// in chain order with its details in the order they were written, in the
// shape sh; the trigger job and "Step queued" details not stored are
// derived (derived.go).
func jobsOf(ctx context.Context, q querier, notificationIDs []string, sh shape) (map[string][]jobResponse, error) {
	marks := sqldb.Placeholders(len(notificationIDs))
	args := make([]any, len(notificationIDs))
	for i, id := range notificationIDs {
		args[i] = id
	}
	stored, err := storedDetails(ctx, q, marks, args, sh)
	if err != nil {
		return nil, err
	}
	details, queued := map[string][]detailResponse{}, queuedStored(stored)
	for _, d := range stored {
		details[d.jobID] = append(details[d.jobID], d.detailResponse)
	}
	// Every notification has a row: its stored jobs, or one without a job.
	rows, err := q.QueryContext(ctx, `
		SELECT n.id, n.template_id, n.created_at, `+sqldb.ValueColumn("n.overrides")+`, `+sqldb.ValueColumn("n.payload")+`,
		       coalesce(j.position, -1), coalesce(j.id, ''), coalesce(j.type, ''), j.digest, coalesce(`+snapshotColumn("j.step", "j.step")+`, ''),
		       coalesce(j.provider_id, ''), coalesce(j.status, ''), coalesce(`+jobUpdatedColumn("j", "n.created_at")+`, '')
		FROM notifications n LEFT JOIN jobs j ON j.notification_id = n.id AND j.position >= 0
		WHERE n.id IN (`+marks+`) ORDER BY n.id, j.position`, args...)
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	defer rows.Close()
	out := map[string][]jobResponse{}
	snapshots, created := map[string]json.RawMessage{}, map[string]string{}
	zero := 0
	for rows.Next() {
		var nid, workflowID, createdAt, step, overrides, payload string
		var position int
		var digest sql.NullString
		var j jobResponse
		if err := rows.Scan(&nid, &workflowID, &createdAt, &overrides, &payload,
			&position, &j.ID, &j.Type, &digest, &step, &j.ProviderID, &j.Status, &j.UpdatedAt); err != nil {
			return nil, err
		}
		jobs := out[nid]
		if len(jobs) == 0 {
			created[nid] = createdAt
			if position != 0 {
				if snapshots[workflowID] == nil {
					snapshots[workflowID] = triggerSnapshot(workflowID)
				}
				jobs = append(jobs, triggerJob(nid, createdAt, snapshots[workflowID], json.RawMessage(overrides), json.RawMessage(payload), sh))
			}
		}
		if position >= 0 && !(sh == shapeOne && j.Type == stepThrottle) { // the single-event schema has no throttle job type
			if digest.Valid {
				j.Digest = json.RawMessage(digest.String)
			}
			j.Step, j.Overrides, j.Payload = json.RawMessage(step), json.RawMessage(overrides), json.RawMessage(payload)
			j.ProviderID = sh.provider(j.ProviderID)
			jobs = append(jobs, j)
		}
		out[nid] = jobs
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for nid, jobs := range out {
		for i := range jobs {
			j := &jobs[i]
			if !queued[j.ID] {
				j.ExecutionDetails = append(j.ExecutionDetails, queuedDetail(j.ID, j.Type, created[nid], sh))
			}
			j.ExecutionDetails = append(j.ExecutionDetails, details[j.ID]...)
			if j.ExecutionDetails == nil {
				j.ExecutionDetails = []detailResponse{}
			}
			if sh == shapeList {
				j.ScheduleExtensionsCount = &zero
			}
		}
		out[nid] = jobs
	}
	return out, nil
}

// storedDetail is a stored execution detail, with its job and its kind.
type storedDetail struct {
	jobID string
	kind  int
	detailResponse
}

// storedDetails reads the stored details of the notifications (marks and
// args name them) in the shape sh, each notification's together in the
// order they were written. A detail written with its notification leaves
// out its _id and, when it is the first step's (position 1), its job
// (insertDetailRows).
func storedDetails(ctx context.Context, q querier, marks string, args []any, sh shape) ([]storedDetail, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT d.notification_id, d.seq,
		       CASE d.job_id WHEN '' THEN coalesce((SELECT j.id FROM jobs j WHERE j.notification_id = d.notification_id AND j.position = 1), '') ELSE d.job_id END,
		       d.id, coalesce(d.created_at, n.created_at), `+detailTextColumns+`, d.is_retry, d.is_test, d.provider_id, d.raw
		FROM execution_details d JOIN notifications n ON n.id = d.notification_id
		WHERE d.notification_id IN (`+marks+`) ORDER BY d.notification_id, d.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("read execution details: %w", err)
	}
	defer rows.Close()
	var out []storedDetail
	for rows.Next() {
		var d storedDetail
		var nid string
		var seq int
		var raw sql.NullString
		if err := rows.Scan(&nid, &seq, &d.jobID, &d.ID, &d.CreatedAt, &d.Status, &d.Detail, &d.Source, &d.kind, &d.IsRetry, &d.IsTest, &d.ProviderID, &raw); err != nil {
			return nil, err
		}
		if d.ID == "" {
			d.ID = detailID(nid, seq)
		}
		detailTexts(d.kind, &d.Status, &d.Detail, &d.Source)
		if raw.Valid {
			d.Raw = &raw.String
		}
		d.ProviderID = sh.provider(d.ProviderID)
		out = append(out, d)
	}
	return out, rows.Err()
}

// queuedStored is the jobs of ds whose "Step queued" detail is stored, as
// a notification written before it was derived keeps it.
func queuedStored(ds []storedDetail) map[string]bool {
	queued := map[string]bool{}
	for _, d := range ds {
		if d.kind == queuedKind {
			queued[d.jobID] = true
		}
	}
	return queued
}

// provider is the providerId a job or detail shows in sh: the API's answers
// name only the providers their schema allows (wireProvider).
func (sh shape) provider(id string) string {
	if sh == shapeStored {
		return id
	}
	return wireProvider(id, sh == shapeOne)
}

func without(ss []string, drop string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

package activity

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
)

// Store owns the activity tables: notifications, jobs (the queue) and
// execution details.
type Store struct {
	db    *sqldb.DB
	now   func() time.Time
	woken [laneCount]chan struct{} // per lane, signalled after a write that made its work due

	inserts *sqldb.GroupCommit // triggers arriving together share a transaction

	// broadcastBatch is how many subscribers one broadcast transaction
	// covers; tests make it small.
	broadcastBatch int
	// broadcastRescue is how often, on a shared database, ResumeBroadcasts
	// looks for fan-outs of dead instances; tests make it short.
	broadcastRescue time.Duration
	// swept, when set, is called after each table a retention batch
	// deletes from, inside its transaction; tests stop a sweep there.
	swept func(table string)

	// snapshots holds the keys of the workflow snapshots known to be
	// committed (snapshots.go).
	snapshots sync.Map

	metrics *metrics                // nil counts nothing (observe.go)
	orgs    *platform.Organizations // nil: each notification stores its organization
	// fetcher fetches the files triggers give by URL (UseOutbound).
	fetcher *http.Client
	files   fileCache // the files of the triggers whose emails are being sent

	// Queries in db's dialect.
	claimSQL         string
	notificationsSQL *notificationsSQL
}

// NewStore returns the activity store on db. now is the clock every record and
// every schedule is read from; nil means time.Now.
func NewStore(db *sqldb.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{db: db, now: now, broadcastBatch: 500, broadcastRescue: sqldb.InstanceTTL,
		claimSQL: claimQuery(db.Dialect()), notificationsSQL: newNotificationsSQL(db.Dialect()),
		inserts: sqldb.NewGroupCommit(db, maxInsertBatch)}
	s.inserts.Prepare = s.claimBatch
	for i := range s.woken {
		s.woken[i] = make(chan struct{}, 1)
	}
	return s
}

// wake tells the worker's idle dispatcher of a lane that work may be due
// there now. Only that lane's dispatcher claims on the writer for it.
func (s *Store) wake(lane int) {
	select {
	case s.woken[lane] <- struct{}{}:
	default:
	}
}

// detail is one execution detail to record.
type detail struct {
	Status     string          `json:"status"`
	Detail     string          `json:"detail"`
	Source     string          `json:"source"`
	ProviderID string          `json:"providerId"`
	Raw        json.RawMessage `json:"raw"`
	IsRetry    bool            `json:"-"`
}

// maxDetailRows is the most execution details one INSERT writes. A job's
// result has at most a few; a statement per detail cost more in binding and
// stepping than SQLite spent storing the row.
const maxDetailRows = 4

// insertDetailSQL[n] inserts n execution details of one notification in
// one statement, numbered past its others (docs/storage.md): the kth row's
// seq is the largest of the notification's plus k. Whether the engine reads
// that largest before the statement's first row or before each, every row
// is numbered past the ones before it. insertNewDetailSQL[n] inserts the
// first details of a notification the same transaction creates, each
// row's seq an argument: there are none to look for.
var insertDetailSQL, insertNewDetailSQL = detailInserts(true), detailInserts(false)

// detailInserts are the statements inserting 1 to maxDetailRows details;
// the second argument of each row is its notification to number it after
// (after is set), or its seq.
func detailInserts(after bool) []string {
	seq := "?"
	qs := make([]string, maxDetailRows+1)
	for n := 1; n <= maxDetailRows; n++ {
		rows := make([]string, n)
		for k := range rows {
			if after {
				seq = fmt.Sprintf("(SELECT coalesce(max(seq), 0) + %d FROM execution_details WHERE notification_id = ?)", k+1)
			}
			rows[k] = "(?, " + seq + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		}
		qs[n] = `INSERT INTO execution_details (notification_id, seq, id, job_id, kind, status, detail, source, provider_id, raw, is_retry, created_at)
	VALUES ` + strings.Join(rows, ", ")
	}
	return qs
}

// insertDetails records details of one job, in order.
func (s *Store) insertDetails(ctx context.Context, tx *sql.Tx, notificationID, jobID, providerID string, now time.Time, ds []detail) error {
	rows := make([]detailRow, len(ds))
	for i, d := range ds {
		rows[i] = detailRow{jobID: jobID, providerID: providerID, detail: d}
	}
	return s.insertDetailRows(ctx, tx, notificationID, now, "", rows)
}

// detailRow is a detail of one job of a notification; providerID is the
// job's, used when the detail names none.
type detailRow struct {
	jobID, providerID string
	detail
}

// insertDetailRows records details of a notification's jobs, in order:
// seq follows the order of the rows. A detail of a known kind (detailKinds)
// is stored as its number, without its texts. One written with its
// notification (firstJob names the notification's first step's job, and
// now is its time) stores neither its time, which reads the
// notification's, nor its _id, derived from its place (detailID), nor its
// job when that is firstJob (docs/storage.md, "Values left out").
func (s *Store) insertDetailRows(ctx context.Context, tx *sql.Tx, notificationID string, now time.Time, firstJob string, rows []detailRow) error {
	created := firstJob != ""
	var ts any = sqldb.FormatTime(now)
	statements := insertDetailSQL
	if created {
		ts, statements = nil, insertNewDetailSQL
	}
	for seq := 1; len(rows) > 0; {
		chunk := rows[:min(len(rows), maxDetailRows)]
		rows = rows[len(chunk):]
		args := make([]any, 0, 12*len(chunk))
		for _, r := range chunk {
			var raw any
			if !isNull(r.Raw) {
				var s string
				if json.Unmarshal(r.Raw, &s) == nil {
					raw = s
				} else {
					raw = string(r.Raw)
				}
			}
			source := firstNonEmpty(r.Source, sourceInternal)
			var status, text, src any = r.Status, r.Detail, source
			kind := kindOf(r.Status, r.Detail, source)
			if kind > 0 {
				status, text, src = nil, nil, nil
			}
			var after, id, jobID any = notificationID, sqldb.NewIDAt(now), r.jobID
			if created {
				after, id, seq = seq, "", seq+1
				if r.jobID == firstJob {
					jobID = ""
				}
			}
			args = append(args, notificationID, after, id, jobID, kind, status, text,
				src, firstNonEmpty(r.ProviderID, r.providerID), raw, sqldb.Flag(r.IsRetry), ts)
		}
		if err := s.db.WriteLater(ctx, tx, statements[len(chunk)], args...); err != nil {
			return fmt.Errorf("insert execution details: %w", err)
		}
	}
	return nil
}

const (
	// A taken transactionId inserts nothing, rather than failing: a shared
	// database would abort the whole group commit on a failed statement
	// (25P02), where SQLite undoes the statement alone.
	claimTransactionSQL = `INSERT INTO activity_transactions (environment_id, transaction_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (environment_id, transaction_id) DO NOTHING`
	// claimTransactionsSQL is claimTransactionSQL for a group commit's
	// triggers at once, on PostgreSQL; it returns the claims that got in.
	claimTransactionsSQL = `INSERT INTO activity_transactions (environment_id, transaction_id, created_at)
		SELECT e, t, at FROM unnest(?::text[], ?::text[], ?::text[]) AS c (e, t, at)
		ON CONFLICT (environment_id, transaction_id) DO NOTHING
		RETURNING environment_id, transaction_id`
	// unclaimTransactionsSQL undoes the claims of requests refused for
	// another of their claims.
	unclaimTransactionsSQL = `DELETE FROM activity_transactions
		WHERE (environment_id, transaction_id) IN (SELECT e, t FROM unnest(?::text[], ?::text[]) AS c (e, t))`
	insertNotificationSQL = `
		INSERT INTO notifications (id, environment_id, organization_id, subscriber_id,
			subscriber_snapshot, template_id, workflow_id, transaction_id, channels, template, payload, overrides,
			recipient, tags, severity, critical, preferences, actor, context_keys, topics, created_at, updated_at, attachments)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertContextSQL = `INSERT INTO notification_contexts (environment_id, context_key, created_at, notification_id)
		VALUES (?, ?, ?, ?)`
)

// maxJobRows is the most jobs one INSERT writes: a chain of a trigger job
// and a step or three, the common workflow, is one statement.
const maxJobRows = 4

// insertJobSQL[n] inserts n jobs in one statement.
var insertJobSQL = func() []string {
	qs := make([]string, maxJobRows+1)
	for n := 1; n <= maxJobRows; n++ {
		qs[n] = `INSERT INTO jobs (id, environment_id, notification_id,
			position, type, step_id, step, provider_id, status, stage, digest, group_key, run_at,
			attempts, created_at, updated_at)
		VALUES ` + strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) +
			`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	}
	return qs
}()

// A job written with its notification leaves out its created_at, the
// notification's, unless it is in a group (a digest's and a throttle's
// jobs are ordered and counted by theirs), and its updated_at until a
// change, as it is its created_at (docs/storage.md, "Values left out").
// jobCreatedColumn and jobUpdatedColumn read them from the jobs table as
// alias names it; notificationCreated is an SQL expression of its
// notification's created_at.
func jobCreatedColumn(alias, notificationCreated string) string {
	return sqldb.LeftOutColumn(alias+".created_at", notificationCreated)
}

func jobUpdatedColumn(alias, notificationCreated string) string {
	return sqldb.LeftOutColumn(alias+".updated_at", jobCreatedColumn(alias, notificationCreated))
}

// notificationCreated is the created_at of the notification of the jobs
// row named jobs, for a statement that does not join it.
const notificationCreated = `(SELECT n.created_at FROM notifications n WHERE n.id = jobs.notification_id)`

// insertStatements are the statements a trigger's write uses.
var insertStatements = append(append([]string{claimTransactionSQL, insertNotificationSQL, insertContextSQL, insertSnapshotSQL,
	insertNotificationTopicSQL}, insertNewDetailSQL[1:]...), insertJobSQL[1:]...)

// maxInsertBatch is the most triggers one group commit writes.
const maxInsertBatch = 64

// insertRequest is one request's triggers waiting for a group commit,
// written all or none.
type insertRequest struct {
	plans []*plan
	claim bool
	now   time.Time

	// Set by claimBatch for the transaction under way.
	claimed bool  // its transactionIds are claimed
	refused error // one of them was taken: it writes nothing
}

// insertTrigger writes a planned trigger: the transactionId claim (when
// claim is set; broadcast batches after the first pass false), and per
// recipient the notification, its job chain and a "Step queued" detail per
// job. The trigger job is written completed and the first step due at once.
//
// Triggers arriving together are written in one transaction (a group
// commit); one refused (a reused transactionId) leaves the others written
// (see insert). insertTrigger returns only once its trigger is
// committed, so an accepted trigger is durable.
func (s *Store) insertTrigger(ctx context.Context, p *plan, claim bool) (err error) {
	defer platform.Wrap(&err, "insert trigger %s", p.transactionID)
	return s.insert(ctx, &insertRequest{plans: []*plan{p}, claim: claim})
}

// insertTriggers writes the triggers of a bulk request as insertTrigger
// writes one, all in one transaction: when one's transactionId is taken,
// none is written.
func (s *Store) insertTriggers(ctx context.Context, plans []*plan) (err error) {
	defer platform.Wrap(&err, "insert %d triggers", len(plans))
	return s.insert(ctx, &insertRequest{plans: plans, claim: true})
}

// insert writes req in the group commit. A trigger whose transactionId is
// taken writes nothing at its first statement (an ON CONFLICT DO NOTHING,
// which no database fails), so its refusal leaves the batch to go on
// without it; any other failure fails the batch, which the group commit
// then writes a request a transaction.
//
// The worker's lanes are woken once the trigger is committed, and only
// those it left a job to run. A trigger whose first step ran inline leaves
// none (what its settlement released wakes the worker itself), and waking
// the worker then cost a claim on the writer after every group commit.
func (s *Store) insert(ctx context.Context, req *insertRequest) error {
	if err := s.db.PrepareWrites(ctx, insertStatements...); err != nil {
		return err
	}
	req.now = s.now()
	var refused error
	err := s.inserts.DoItem(ctx, req, func(ctx context.Context, tx *sql.Tx) error {
		refused = s.insertTx(ctx, tx, req)
		var conflict *platform.Error
		if errors.As(refused, &conflict) && conflict.Status == http.StatusConflict {
			return nil
		}
		return refused
	})
	if err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	s.snapshotsCommitted(req)
	s.wakeFor(req)
	return nil
}

// insertTx writes one request's triggers inside tx. Only its first
// statements, the transactionId claims, may fail with a conflict; a
// conflict undoes the claims before it, so that the request leaves nothing
// written. Each trigger's progress (a broadcast batch's) and answer are
// written last, so that they commit with it or not at all.
func (s *Store) insertTx(ctx context.Context, tx *sql.Tx, r *insertRequest) error {
	if r.refused != nil {
		return r.refused
	}
	if r.claim && !r.claimed {
		if err := s.claimTransactions(ctx, tx, r); err != nil {
			return err
		}
	}
	if err := s.storeSnapshots(ctx, tx, r); err != nil {
		return err
	}
	for _, p := range r.plans {
		if err := s.insertPlan(ctx, tx, p); err != nil {
			return err
		}
	}
	return nil
}

// claimTransactions claims the transactionId of each of r's triggers that
// the client gave.
func (s *Store) claimTransactions(ctx context.Context, tx *sql.Tx, r *insertRequest) error {
	ts := sqldb.FormatTime(r.now)
	for i, p := range r.plans {
		if p.generated {
			continue
		}
		env := p.tenant.EnvironmentID
		res, err := s.db.WriteExec(ctx, tx, claimTransactionSQL, env, p.transactionID, ts)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			for _, q := range r.plans[:i] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM activity_transactions WHERE environment_id = ? AND transaction_id = ?`,
					q.tenant.EnvironmentID, q.transactionID); err != nil {
					return err
				}
			}
			return transactionConflict(p.transactionID)
		}
	}
	return nil
}

// claimKey is a transactionId of an environment.
type claimKey struct{ env, id string }

// claimBatch claims, on PostgreSQL, the transactionIds of a group commit's
// requests (items) in one statement, sent in the pipeline with what the
// transaction held before it, where each trigger's claim would have been
// a round trip of its own. A request whose transactionId is taken (before,
// or by a request ahead of it in the batch) is refused alone, and what it
// claimed is undone, as claimTransactions does it; the others go on. On
// SQLite each request claims its own (insertTx): there a statement is no
// round trip.
func (s *Store) claimBatch(ctx context.Context, tx *sql.Tx, items []any) error {
	type claimRow struct{ env, id, at string }
	var claims []claimRow
	for _, it := range items {
		r := it.(*insertRequest)
		r.claimed, r.refused = false, nil
		if !r.claim || !s.db.Postgres {
			continue
		}
		ts := sqldb.FormatTime(r.now)
		for _, p := range r.plans {
			if !p.generated {
				claims = append(claims, claimRow{p.tenant.EnvironmentID, p.transactionID, ts})
			}
		}
	}
	if len(claims) == 0 {
		return nil
	}
	// In key order, so that two instances' group commits wanting the same
	// transactionIds wait on each other in the same order, not deadlock.
	slices.SortFunc(claims, func(a, b claimRow) int {
		return cmp.Or(strings.Compare(a.env, b.env), strings.Compare(a.id, b.id))
	})
	envs, ids, ats := make([]string, len(claims)), make([]string, len(claims)), make([]string, len(claims))
	for i, c := range claims {
		envs[i], ids[i], ats[i] = c.env, c.id, c.at
	}
	got := make(map[claimKey]bool, len(ids))
	err := s.db.WriteReturning(ctx, tx, claimTransactionsSQL, func(scan func(...any) error) error {
		var k claimKey
		if err := scan(&k.env, &k.id); err != nil {
			return err
		}
		got[k] = true
		return nil
	}, envs, ids, ats)
	if err != nil {
		return fmt.Errorf("claim transactionIds: %w", err)
	}
	// Each claim that got in is its first asker's, in the batch's order.
	var undoEnvs, undoIDs []string
	for _, it := range items {
		r := it.(*insertRequest)
		if !r.claim {
			continue
		}
		var mine []claimKey
		for _, p := range r.plans {
			if p.generated {
				continue
			}
			k := claimKey{p.tenant.EnvironmentID, p.transactionID}
			if !got[k] {
				if r.refused == nil {
					r.refused = transactionConflict(p.transactionID)
				}
				continue
			}
			delete(got, k)
			mine = append(mine, k)
		}
		if r.refused == nil {
			r.claimed = true
			continue
		}
		for _, k := range mine {
			undoEnvs = append(undoEnvs, k.env)
			undoIDs = append(undoIDs, k.id)
		}
	}
	if len(undoIDs) > 0 {
		if _, err := s.db.WriteExec(ctx, tx, unclaimTransactionsSQL, undoEnvs, undoIDs); err != nil {
			return fmt.Errorf("undo transactionId claims: %w", err)
		}
	}
	return nil
}

// insertPlan writes one trigger's rows.
func (s *Store) insertPlan(ctx context.Context, tx *sql.Tx, p *plan) error {
	env := p.tenant.EnvironmentID
	channels, _ := json.Marshal(p.channels)
	keys, _ := json.Marshal(nonNilStrings(p.contextKeys))
	tags, _ := json.Marshal(nonNilStrings(p.wf.Tags))
	prefs := firstNonEmpty(p.preferencesColumn, string(p.preferences))
	shared, err := s.storeShared(ctx, tx, p)
	if err != nil {
		return err
	}
	for i := range p.recipients {
		rc := &p.recipients[i]
		at := sqldb.FormatTime(rc.at)
		err := s.db.WriteLater(ctx, tx, insertNotificationSQL,
			rc.nid, env, s.orgs.Stored(p.tenant.OrganizationID), rc.id, "", p.wf.ID, p.wf.WorkflowID,
			p.transactionID, string(channels), shared.template, shared.payload, shared.overrides,
			string(rc.to), string(tags), p.severity, sqldb.Flag(p.critical), prefs, sqldb.LeftOut(string(p.actor), string(noActor)), string(keys), rc.topicsJSON(), at, "", shared.attachments)
		if err != nil {
			return fmt.Errorf("insert notification: %w", err)
		}
		for _, key := range p.contextKeys {
			if err := s.db.WriteLater(ctx, tx, insertContextSQL, env, key, at, rc.nid); err != nil {
				return fmt.Errorf("insert notification context: %w", err)
			}
		}
		if err := s.insertNotificationTopics(ctx, tx, env, at, rc); err != nil {
			return err
		}
		if err := s.insertJobs(ctx, tx, p, rc); err != nil {
			return err
		}
	}
	if p.progress != nil {
		if err := p.progress(ctx, tx); err != nil {
			return err
		}
	}
	if p.answer != nil {
		if err := p.answer(ctx, tx); err != nil {
			return fmt.Errorf("record idempotent answer: %w", err)
		}
	}
	return nil
}

// transactionUsed reports whether a trigger of the environment already
// used transactionID: claimed it, or, where Herald made it up, wrote a
// notification with it.
func (s *Store) transactionUsed(ctx context.Context, envID, transactionID string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, `SELECT 1 FROM activity_transactions WHERE environment_id = ?1 AND transaction_id = ?2
		UNION ALL SELECT 1 FROM notifications WHERE environment_id = ?1 AND transaction_id = ?2 LIMIT 1`,
		envID, transactionID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check transactionId: %w", err)
	}
	return true, nil
}

func transactionConflict(id string) error {
	return platform.Conflict("transactionId %q was already used in this environment", id)
}

// jobRow is one job of a notification's chain, decided before the write
// transaction so that the trigger can run the first step itself (inline.go).
type jobRow struct {
	id       string
	position int
	step     workflows.Step
	snapshot json.RawMessage // the job's copy of its step (docs/api.md, "Delivery")
	// stepColumn is what the job's step column holds for snapshot
	// (snapshots.go); "" for snapshot itself.
	stepColumn string
	values     json.RawMessage
	provider   string
	status     string
	digest     any
	groupKey   string
	runAt      any

	// Set when the trigger ran the job itself (inline.go).
	stage       string
	attempts    int
	deliveredBy string // the provider its result named, "" for none
}

// insertJobs writes the planned jobs of a recipient's steps; the trigger
// job and each job's "Step queued" detail are derived when read
// (derived.go). When the trigger ran the first step itself, the chain is
// already settled by its result (settleFirst): its details are written
// with the jobs, and the rest of the result, r.first, last, as the worker
// would record it.
func (s *Store) insertJobs(ctx context.Context, tx *sql.Tx, p *plan, r *recipient) error {
	ts := sqldb.FormatTime(r.at)
	env := p.tenant.EnvironmentID
	for jobs := r.jobs; len(jobs) > 0; {
		chunk := jobs[:min(len(jobs), maxJobRows)]
		jobs = jobs[len(chunk):]
		args := make([]any, 0, 16*len(chunk))
		for _, row := range chunk {
			created := ts
			if row.groupKey == "" {
				created = ""
			}
			args = append(args, row.id, env, r.nid, row.position,
				row.step.Type, row.step.StepID, firstNonEmpty(row.stepColumn, string(row.snapshot)), firstNonEmpty(row.deliveredBy, row.provider),
				row.status, row.stage, row.digest, row.groupKey, row.runAt, row.attempts, created, "")
		}
		if err := s.db.WriteLater(ctx, tx, insertJobSQL[len(chunk)], args...); err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
	}
	if len(r.later) > 0 { // the details of the first step's job, r.jobs[0]
		if err := s.insertDetailRows(ctx, tx, r.nid, r.at, r.jobs[0].id, r.later); err != nil {
			return err
		}
	}
	if r.first != nil {
		return r.first(ctx, tx)
	}
	return nil
}

// wakeFor wakes the lane of each job with a run time, due or scheduled,
// that r wrote: work for the worker.
func (s *Store) wakeFor(r *insertRequest) {
	for _, p := range r.plans {
		for _, rc := range p.recipients {
			for _, row := range rc.jobs {
				if row.runAt != nil {
					s.wake(laneOf(row.step.Type))
				}
			}
		}
	}
}

// group is the key digest and throttle jobs are matched on: the same
// workflow, subscriber and step, and the same key value. The workflow's _id
// is unique across environments, so the key needs no environment.
func group(templateID, subscriberID, stepID, value string) string {
	return templateID + "|" + subscriberID + "|" + stepID + "|" + value
}

func nonNilStrings(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func isArray(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '[':
			return true
		default:
			return false
		}
	}
	return false
}

// sharedValues are what a trigger's notifications hold of the values they
// all repeat: each value, or its key when it is stored once (StoreValue).
type sharedValues struct{ template, payload, overrides, attachments string }

// storeShared stores p's large values once, in tx, for all its recipients.
func (s *Store) storeShared(ctx context.Context, tx *sql.Tx, p *plan) (v sharedValues, err error) {
	env, now := p.tenant.EnvironmentID, s.now()
	v.template = p.templateColumn
	if v.template == "" {
		if v.template, err = s.db.StoreValue(ctx, tx, env, p.template, now); err != nil {
			return v, err
		}
	}
	if v.payload, err = s.db.StoreValue(ctx, tx, env, p.payload, now); err != nil {
		return v, err
	}
	if v.overrides, err = s.db.StoreValue(ctx, tx, env, p.overrides, now); err != nil {
		return v, err
	}
	if p.attachments != nil {
		v.attachments, err = s.db.StoreValue(ctx, tx, env, p.attachments, now)
	}
	return v, err
}

// ValueRefs are the columns of activity's tables that may name a stored
// value: the sweep of stored values keeps one they name.
var ValueRefs = []sqldb.ValueRef{{Table: "notifications", Column: "template"},
	{Table: "notifications", Column: "payload"}, {Table: "notifications", Column: "overrides"},
	{Table: "notifications", Column: "attachments"}}

package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

var (
	// errLeaseLost means the job's lease expired and another worker took it
	// (or a cancel got to it first): this worker's result is dropped.
	errLeaseLost = errors.New("job lease lost")
)

// job is a claimed job: the columns a worker runs it from.
type job struct {
	ID             string
	EnvironmentID  string
	OrganizationID string
	NotificationID string
	TransactionID  string
	SubscriberID   string
	TemplateID     string
	Position       int
	Type           string
	StepID         string
	Step           json.RawMessage
	Controls       json.RawMessage
	ProviderID     string
	Stage          string
	Digest         json.RawMessage
	GroupKey       string
	Attempts       int
	Interruptions  int       // times Herald stopped while the job was claimed (recoverLeases)
	Lease          string    // this claim's lease token
	LeaseUntil     time.Time // when another worker may take the job
	lane           *lane     // the worker's lane that claimed it
	CreatedAt      string

	// keep, when set, takes the result settled would return a write of:
	// a trigger that runs the job itself writes the job once, in its
	// final state (inline.go).
	keep func(settlement)
}

// The lanes jobs are claimed in: one for each channel whose steps wait on
// a provider, and one for every other step, so that a slow provider holds
// up only the sends of its own channel.
const (
	laneLocal = iota
	laneEmail
	laneSMS
	laneChat
	lanePush
	laneCount
)

// laneSQL is a job's lane, as the claim index (migration 000015) leads
// with it.
const laneSQL = `(CASE type WHEN 'email' THEN 1 WHEN 'sms' THEN 2 WHEN 'chat' THEN 3 WHEN 'push' THEN 4 ELSE 0 END)`

// laneOf is the lane of a job of stepType, as laneSQL computes it.
func laneOf(stepType string) int {
	switch stepType {
	case "email":
		return laneEmail
	case "sms":
		return laneSMS
	case "chat":
		return laneChat
	case "push":
		return lanePush
	}
	return laneLocal
}

// anyDue reports, from the read pool, whether some job of the lane is due,
// so idle workers poll without taking the writer.
func (s *Store) anyDue(ctx context.Context, lane int) (bool, error) {
	ts := sqldb.FormatTime(s.now())
	var one int
	err := s.db.QueryRow(ctx, `
		SELECT 1 FROM jobs WHERE `+laneSQL+` = ? AND run_at IS NOT NULL AND run_at <= ? AND lease_until <= ? LIMIT 1`,
		lane, ts, ts).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// claimQuery leases a lane's due jobs, those due longest first. The
// subquery skips the rows another claim holds locked where the database is
// shared (the dialect's SkipLocked), so two claims never pick one job.
// The job's control values are read from its step snapshot, which holds
// them as controlVariables: a column of their own (dropped by 000028)
// stored every step's template twice per job. What a job shares with its
// notification (organization, transaction, subscriber, workflow) is read
// from the notification, which keeps it once for all its jobs.
func claimQuery(d sqldb.Dialect) string {
	jobStep := snapshotColumn("jobs.step", "jobs.step")
	of := func(column string) string {
		return `(SELECT n.` + column + ` FROM notifications n WHERE n.id = jobs.notification_id)`
	}
	return `
		UPDATE jobs SET status = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (
			SELECT id FROM jobs
			WHERE ` + laneSQL + ` = ? AND run_at IS NOT NULL AND run_at <= ? AND lease_until <= ?
			ORDER BY run_at, id LIMIT ?` + d.SkipLocked() + `)
		RETURNING id, environment_id, ` + of("organization_id") + `, notification_id, ` + of("transaction_id") + `,
			` + of("subscriber_id") + `, ` + of("template_id") + `,
			position, type, step_id, ` + jobStep + `, coalesce(` + d.JSONGet(jobStep, "controlVariables") + `, '{}'),
			provider_id, stage, digest, group_key, attempts, interruptions, ` + jobCreatedColumn("jobs", notificationCreated)
}

// claim leases up to n due jobs of a lane, those due longest first: one UPDATE …
// RETURNING on the writer, so two workers never get the same job (on a
// shared database, two instances neither: claimQuery). A job
// whose lease expired is due again. A claim counts as an attempt; a worker
// that gives a job back without starting it takes the attempt back
// (unclaimed), and so does the next start for a job a dead process held,
// counting an interruption instead (recoverLeases).
func (s *Store) claim(ctx context.Context, lease time.Duration, n, lane int) (_ []*job, err error) {
	defer platform.Wrap(&err, "claim jobs")
	now := s.now()
	ts := sqldb.FormatTime(now)
	token := s.leaseToken(now)
	until := now.Add(lease)
	query := s.claimSQL
	if err := s.db.PrepareWrites(ctx, query); err != nil {
		return nil, err
	}
	rows, err := s.db.WriteQuery(ctx, query,
		token, sqldb.FormatTime(until), ts, lane, ts, ts, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*job
	for rows.Next() {
		j := &job{Lease: token, LeaseUntil: until}
		var digest sql.NullString
		var step, controls string
		if err := rows.Scan(&j.ID, &j.EnvironmentID, &j.OrganizationID, &j.NotificationID, &j.TransactionID, &j.SubscriberID,
			&j.TemplateID, &j.Position, &j.Type, &j.StepID, &step, &controls, &j.ProviderID, &j.Stage, &digest, &j.GroupKey,
			&j.Attempts, &j.Interruptions, &j.CreatedAt); err != nil {
			return nil, err
		}
		j.Step, j.Controls = json.RawMessage(step), json.RawMessage(controls)
		if digest.Valid {
			j.Digest = json.RawMessage(digest.String)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, j := range out {
		if j.OrganizationID, err = s.orgs.Of(ctx, j.EnvironmentID, j.OrganizationID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const unclaimSQL = `
		UPDATE jobs SET status = 'queued', lease_owner = '', lease_until = '', attempts = attempts - 1, updated_at = ?
		WHERE id = ? AND lease_owner = ?`

// unclaimed returns the write that gives a claimed job back without having
// started it: it is due again at once, and the claim's attempt is taken
// back, so a stop does not use up the attempts of jobs it never ran.
func (s *Store) unclaimed(j *job) write {
	return func(ctx context.Context, tx *sql.Tx) error {
		res, err := s.db.WriteExec(ctx, tx, unclaimSQL, sqldb.FormatTime(s.now()), j.ID, j.Lease)
		if err != nil {
			return fmt.Errorf("give back job %s: %w", j.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errLeaseLost
		}
		return nil
	}
}

// leaseToken is a new claim's lease token: the claiming process's instance
// ID, then a part of its own, so that a shared database can tell which
// process holds a job (recoverLeases).
func (s *Store) leaseToken(now time.Time) string {
	return s.db.Instance() + ":" + sqldb.NewIDAt(now)
}

// leaseInstance is the instance ID inside a job's lease_owner (leaseToken).
// A token written before tokens carried one names no live instance.
const leaseInstance = `split_part(lease_owner, ':', 1)`

// recoverLeases makes jobs still claimed by a dead process due again at
// once, rather than when their lease runs out. On SQLite one Herald process
// uses a database, so when its worker starts, every claim it finds was made
// by a process that has died (a crash, or a stop that abandoned running
// jobs). On a shared database it takes only the claims of instances whose
// heartbeat is stale (sqldb.LiveSince), and this process's own when
// starting (its claims from before a worker restart);
// never those of another live instance, which is running them. Periodic
// (the worker's rescuer) leaves this process's own claims alone: its
// worker is running them.
//
// The claim's attempt is taken back and counted as an interruption
// instead: most such jobs never reached their provider, and a crash says
// nothing about whether the provider works. Each job's record says it was
// interrupted, and it goes behind the jobs already due, so that the same
// jobs are not the ones in flight at every stop.
func (s *Store) recoverLeases(ctx context.Context, periodic bool) (n int, err error) {
	defer platform.Wrap(&err, "recover job leases")
	now := s.now()
	ts := sqldb.FormatTime(now)
	where, args := "", []any{ts, ts}
	if s.db.Shared() {
		dead := `NOT ` + sqldb.OwnerAliveSQL(leaseInstance)
		if periodic {
			where = ` AND ` + dead + ` AND ` + leaseInstance + ` <> ?`
			args = append(args, sqldb.LiveSince(now), s.db.Instance())
		} else {
			where = ` AND (` + leaseInstance + ` = ? OR ` + dead + `)`
			args = append(args, s.db.Instance(), sqldb.LiveSince(now))
		}
	}
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		n, err = s.updateJobs(ctx, tx, now, detail{Status: detailWarning, Source: sourceInternal, Detail: interruptedDetail}, `
			UPDATE jobs SET status = 'queued', lease_owner = '', lease_until = '', run_at = ?,
				attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, interruptions = interruptions + 1, updated_at = ?
			WHERE `+laneSQL+` IN (0, 1, 2, 3, 4) AND run_at > '' AND status = 'running' AND lease_owner <> ''`+where+`
			RETURNING `+jobRefColumns, args...)
		return err
	})
	return n, err
}

// interruptedDetail is recorded on a job that Herald stopped or crashed
// while it was claimed: it may have been delivering.
const interruptedDetail = "Herald stopped while this step was running or about to run; it runs again, " +
	"and a provider that had already accepted it may deliver it twice"

// What happens to the jobs after a settled one.
const (
	thenNothing = iota // the job runs again later (delay, digest, retry)
	thenRelease        // the next job is due now
	thenCancel         // the following jobs are canceled (a failed step)
	thenSkip           // the following jobs are skipped (merged digest, throttled)
)

// settlement is the result of running a job once.
type settlement struct {
	status     string
	runAt      time.Time // when the job runs again; zero when it is finished
	stage      string
	providerID string          // the provider that delivered, "" to keep
	digest     json.RawMessage // new digest metadata, nil to keep
	details    []detail
	then       int
	thenDetail string // detail on each canceled or skipped following job
	// uncount takes back the claim's attempt: a step held by a schedule
	// was not tried, and must keep all its attempts for when it runs.
	uncount bool
}

// write records one run's result inside a transaction the worker commits,
// usually together with other jobs' results.
type write func(ctx context.Context, tx *sql.Tx) error

// settled returns the write that records st for j, or hands st to j.keep
// and returns a write that does nothing.
func (s *Store) settled(j *job, st settlement) write {
	s.noteSettled(j, st)
	if j.keep != nil {
		j.keep(st)
		return func(context.Context, *sql.Tx) error { return nil }
	}
	return func(ctx context.Context, tx *sql.Tx) error { return s.settleTx(ctx, tx, j, st) }
}

const (
	settleSQL = `
		UPDATE jobs SET status = ?, run_at = ?, stage = ?, provider_id = coalesce(nullif(?, ''), provider_id),
			digest = coalesce(?, digest), lease_owner = '', lease_until = '', updated_at = ?, attempts = attempts - ?
		WHERE id = ? AND lease_owner = ?`
	// The child is the next position of the same notification: the chain's
	// _parentId link (docs/api.md, "Delivery") always points one position
	// back, so a job keeps no parent of its own, and jobs_notification
	// finds the child. Its type says which lane to wake.
	releaseChildSQL = `
			UPDATE jobs SET status = 'queued', run_at = ?, updated_at = ?
			WHERE notification_id = ? AND position = ? AND status = 'pending' AND run_at IS NULL
			RETURNING type`
)

// settleStatements are the statements recording a result uses.
var settleStatements = append([]string{settleSQL, releaseChildSQL}, insertDetailSQL[1:]...)

// settleTx records a run's result, only if this worker still holds the
// lease: the job's new state, its details, and what follows.

func (s *Store) settleTx(ctx context.Context, tx *sql.Tx, j *job, st settlement) error {
	now := s.now()
	ts := sqldb.FormatTime(now)
	var runAt any
	if !st.runAt.IsZero() {
		runAt = sqldb.FormatTime(st.runAt)
	}
	var digest any
	if st.digest != nil {
		digest = string(st.digest)
	}
	uncount := 0
	if st.uncount {
		uncount = 1
	}
	res, err := s.db.WriteExec(ctx, tx, settleSQL,
		st.status, runAt, st.stage, st.providerID, digest, ts, uncount, j.ID, j.Lease)
	if err != nil {
		return fmt.Errorf("settle job %s: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errLeaseLost
	}
	provider := firstNonEmpty(st.providerID, j.ProviderID)
	if err := s.insertDetails(ctx, tx, j.NotificationID, j.ID, provider, now, st.details); err != nil {
		return err
	}
	switch st.then {
	case thenRelease:
		// The chain is the _parentId link (docs/api.md, "Delivery"): the child is
		// due now.
		var childType string
		err = s.db.WriteQueryRow(ctx, tx, releaseChildSQL, ts, ts, j.NotificationID, j.Position+1).Scan(&childType)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			err = nil // the last step, or a child a cancel ended
		case err == nil:
			s.wake(laneOf(childType))
		}
	case thenCancel:
		err = s.endRest(ctx, tx, j.NotificationID, j.Position, statusCanceled, st.thenDetail, now)
	case thenSkip:
		err = s.endRest(ctx, tx, j.NotificationID, j.Position, statusSkipped, st.thenDetail, now)
	}
	return err
}

// endedDetail is the detail a job that will never run is given, saying why.
func endedDetail(why string) detail {
	return detail{Status: detailWarning, Detail: why, Source: sourceInternal}
}

// endRest gives every not-yet-run job after position the final status, each
// with a detail saying why.
func (s *Store) endRest(ctx context.Context, tx *sql.Tx, notificationID string, position int, status, why string, now time.Time) error {
	_, err := s.updateJobs(ctx, tx, now, endedDetail(why), `
		UPDATE jobs SET status = ?, run_at = NULL, updated_at = ?
		WHERE notification_id = ? AND position > ? AND status IN ('pending', 'queued', 'delayed')
		RETURNING `+jobRefColumns, status, sqldb.FormatTime(now), notificationID, position)
	if err != nil {
		return fmt.Errorf("end following jobs: %w", err)
	}
	return nil
}

// jobRefColumns is what an UPDATE run by updateJobs returns.
const jobRefColumns = `id, environment_id, notification_id, provider_id`

// updateJobs runs query, an UPDATE … RETURNING jobRefColumns, and records d
// on each job it changed. It returns how many it changed.
func (s *Store) updateJobs(ctx context.Context, tx *sql.Tx, now time.Time, d detail, query string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	type changed struct{ id, env, notification, provider string }
	var list []changed
	for rows.Next() {
		var c changed
		if err := rows.Scan(&c.id, &c.env, &c.notification, &c.provider); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, c := range list {
		if err := s.insertDetails(ctx, tx, c.notification, c.id, c.provider, now, []detail{d}); err != nil {
			return 0, err
		}
	}
	return len(list), nil
}

// cancelableSQL says which jobs a cancel ends: those that have not run and
// are not running, and, as the reference platform's cancel takes MERGED
// jobs too, an event merged into a digest that has not fired (its master
// still waits, delayed) with the steps its merge skipped. A fired digest
// has delivered its merged events, so those are left as they are. SQLite
// finds every row an UPDATE with such a subquery changes before it changes
// one, so the skipped steps still see their merged job.
const cancelableSQL = `status IN ('pending', 'queued', 'delayed')
	OR status IN ('merged', 'skipped') AND position >= (
		SELECT m.position FROM jobs m JOIN jobs d ON d.id = m.merged_digest_id
		WHERE m.notification_id = jobs.notification_id AND m.status = 'merged' AND d.status = 'delayed')`

// cancelTransaction cancels every job of the transaction that has not run
// yet and is not running now, and the rest of a broadcast, and reports
// whether there was any.
func (s *Store) cancelTransaction(ctx context.Context, envID, transactionID string) (ok bool, err error) {
	defer platform.Wrap(&err, "cancel transaction %s", transactionID)
	now := s.now()
	ts := sqldb.FormatTime(now)
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		// Digest masters hand their merged events on first, while their
		// run_at still says when they would have fired.
		if err := s.promoteMerged(ctx, tx, envID, transactionID, now); err != nil {
			return err
		}
		n, err := s.updateJobs(ctx, tx, now, endedDetail("Step canceled by request"), `
			UPDATE jobs SET status = 'canceled', run_at = NULL, updated_at = ?
			WHERE notification_id IN (SELECT id FROM notifications WHERE environment_id = ? AND transaction_id = ?)
			  AND (`+cancelableSQL+`) AND lease_until <= ?
			RETURNING `+jobRefColumns, ts, envID, transactionID, ts)
		if err != nil {
			return err
		}
		// A broadcast still fanning out stops at its next batch, and one a
		// crash cut short is not resumed (fanOut, ResumeBroadcasts).
		res, err := tx.ExecContext(ctx, `DELETE FROM activity_broadcasts WHERE environment_id = ? AND transaction_id = ?`,
			envID, transactionID)
		if err != nil {
			return err
		}
		stopped, _ := res.RowsAffected()
		ok = n > 0 || stopped > 0
		return undigest(ctx, tx, envID, transactionID, ts)
	})
	return ok, err
}

// undigest clears _digestedNotificationId of the transaction's
// notifications whose merged digest job was just canceled: their event is
// no longer in the master's digest (docs/api.md, "Delivery").
func undigest(ctx context.Context, tx *sql.Tx, envID, transactionID, ts string) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE notifications SET digested_notification_id = '', updated_at = ?
		WHERE environment_id = ? AND transaction_id = ? AND digested_notification_id <> ''
		  AND EXISTS (SELECT 1 FROM jobs WHERE notification_id = notifications.id AND type = 'digest' AND status = 'canceled')`,
		ts, envID, transactionID)
	return err
}

// promoteMerged keeps the events merged into the transaction's waiting
// digest masters: for each, the oldest merged job becomes the master,
// waiting until the old one would have fired, and the others now merge into
// it.
//
// On a shared database it first takes the digest lock of each of their
// groups (lockGroup), in key order so that two cancels do not deadlock,
// and reads the masters under them: a worker of another instance may be
// merging an event into one, or firing it.
func (s *Store) promoteMerged(ctx context.Context, tx *sql.Tx, envID, transactionID string, now time.Time) error {
	if s.db.Shared() {
		if err := s.lockMastersGroups(ctx, tx, envID, transactionID); err != nil {
			return err
		}
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT id, run_at FROM jobs
		WHERE notification_id IN (SELECT id FROM notifications WHERE environment_id = ? AND transaction_id = ?)
		  AND type = 'digest' AND status = 'delayed' AND stage = ?`,
		envID, transactionID, stageDigesting)
	if err != nil {
		return err
	}
	type master struct{ id, runAt string }
	var masters []master
	for rows.Next() {
		var m master
		if err := rows.Scan(&m.id, &m.runAt); err != nil {
			rows.Close()
			return err
		}
		masters = append(masters, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range masters {
		if err := s.promote(ctx, tx, envID, m.id, m.runAt, now); err != nil {
			return err
		}
	}
	return nil
}

// lockMastersGroups takes the digest lock of the group of each waiting
// digest master of the transaction.
func (s *Store) lockMastersGroups(ctx context.Context, tx *sql.Tx, envID, transactionID string) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT DISTINCT group_key FROM jobs
		WHERE notification_id IN (SELECT id FROM notifications WHERE environment_id = ? AND transaction_id = ?)
		  AND type = 'digest' AND status = 'delayed' AND stage = ? AND group_key <> ''
		ORDER BY group_key`, envID, transactionID, stageDigesting)
	if err != nil {
		return err
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.lockGroup(ctx, tx, "digest", &job{EnvironmentID: envID, GroupKey: k}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) promote(ctx context.Context, tx *sql.Tx, envID, masterID, runAt string, now time.Time) error {
	var heir, heirNotification string
	err := tx.QueryRowContext(ctx, `
		SELECT id, notification_id FROM jobs
		WHERE merged_digest_id = ? AND status = 'merged'
		ORDER BY created_at, id LIMIT 1`, masterID).Scan(&heir, &heirNotification)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	ts := sqldb.FormatTime(now)
	if _, err := tx.ExecContext(ctx, `
		UPDATE jobs SET status = 'delayed', stage = ?, run_at = ?, merged_digest_id = '', updated_at = ?
		WHERE id = ?`, stageDigesting, runAt, ts, heir); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		UPDATE jobs SET status = 'pending', updated_at = ?
		WHERE notification_id = ? AND status = 'skipped' AND position > (SELECT position FROM jobs WHERE id = ?)`,
		ts, heirNotification, heir); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET merged_digest_id = ? WHERE merged_digest_id = ? AND status = 'merged'`,
		heir, masterID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		UPDATE notifications SET digested_notification_id = CASE WHEN id = ? THEN '' ELSE ? END, updated_at = ?
		WHERE id IN (SELECT notification_id FROM jobs WHERE merged_digest_id = ? OR id = ?)`,
		heirNotification, heirNotification, ts, heir, heir); err != nil {
		return err
	}
	d := []detail{{Status: detailPending, Detail: "Digest master was canceled; this digest now collects the events", Source: sourceInternal}}
	return s.insertDetails(ctx, tx, heirNotification, heir, "service", now, d)
}

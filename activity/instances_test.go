package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// Tests of several Herald instances on one PostgreSQL database: each
// instance is a *sqldb.DB of its own on the same database URL, so it has
// its own writer connection and instance ID, as a process would.

// newInstances opens n instances on one fresh PostgreSQL database, each
// with a store on the shared clock, and beats for each at the clock's time.
func newInstances(t *testing.T, n int) ([]*Store, *platformtest.Clock) {
	t.Helper()
	clock := platformtest.NewClock(t0)
	stores := make([]*Store, n)
	for i, db := range sqldbtest.NewSharedDBs(t, n) {
		if err := db.Beat(context.Background(), clock.Now()); err != nil {
			t.Fatalf("beat: %v", err)
		}
		stores[i] = NewStore(db, clock.Now)
	}
	return stores, clock
}

// queueJobs writes a trigger of an in-app step to n subscribers through s:
// n jobs due in the local lane. It returns the plan's tenant.
func queueJobs(t *testing.T, s *Store, txID string, n int) platform.Tenant {
	t.Helper()
	tenant := platform.Tenant{OrganizationID: sqldb.NewID(), EnvironmentID: sqldb.NewID()}
	wf := &workflows.Workflow{ID: sqldb.NewID(), WorkflowID: "w", Active: true,
		Steps: []workflows.Step{{ID: sqldb.NewID(), StepID: "inbox", Type: "in_app"}}}
	p := &plan{tenant: tenant, transactionID: txID, payload: json.RawMessage(`{}`), overrides: json.RawMessage(`{}`),
		wf: wf, template: json.RawMessage(`{}`), actor: json.RawMessage(`{}`), preferences: json.RawMessage(`{}`), chain: chainSteps(wf)}
	for i := range n {
		p.recipients = append(p.recipients, recipient{id: sqldb.NewID(), subscriberID: fmt.Sprintf("s%04d", i),
			to: json.RawMessage(`{}`)})
		p.planChain(&p.recipients[i], s.now())
	}
	if err := s.insertTrigger(context.Background(), p, true); err != nil {
		t.Fatal(err)
	}
	return tenant
}

// beatAll beats for each instance at the clock's time, as their
// heartbeats would.
func beatAll(t *testing.T, clock *platformtest.Clock, stores ...*Store) {
	t.Helper()
	for _, s := range stores {
		if err := s.db.Beat(context.Background(), clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQueue_InstancesNeverClaimOneJobTwice(t *testing.T) {
	is := is.New(t)
	stores, _ := newInstances(t, 3)
	const jobs = 300
	queueJobs(t, stores[0], "many", jobs)

	ctx := context.Background()
	var mu sync.Mutex
	claims := map[string]int{}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.claim(ctx, time.Minute, 3, laneLocal)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					claims[j.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	is.Equal(len(claims), jobs) // every job was claimed
	for id, n := range claims {
		if n != 1 {
			t.Errorf("job %s claimed %d times by instances whose leases were all live", id, n)
		}
	}
}

func TestQueue_LeaseNamesItsInstance(t *testing.T) {
	is := is.New(t)
	stores, _ := newInstances(t, 1)
	queueJobs(t, stores[0], "one", 1)
	got, err := stores[0].claim(context.Background(), time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.True(strings.HasPrefix(got[0].Lease, stores[0].db.Instance()+":")) // the lease says which instance holds the job
}

func TestQueue_RecoverLeasesSparesLiveInstances(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	stores, clock := newInstances(t, 2)
	a, b := stores[0], stores[1]
	queueJobs(t, a, "held", 1)
	held, err := a.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(held), 1)

	n, err := b.recoverLeases(ctx, false) // b starts while a runs the job
	is.NoErr(err)
	is.Equal(n, 0)                      // a live instance's job is left to it
	n, err = b.recoverLeases(ctx, true) // b's rescuer
	is.NoErr(err)
	is.Equal(n, 0)                      // likewise
	n, err = a.recoverLeases(ctx, true) // a's own rescuer
	is.NoErr(err)
	is.Equal(n, 0) // never takes what its own worker runs

	// a stops beating (SIGKILL); b goes on.
	clock.Advance(sqldb.InstanceTTL + time.Second)
	beatAll(t, clock, b)
	n, err = b.recoverLeases(ctx, true)
	is.NoErr(err)
	is.Equal(n, 1) // the dead instance's job is due again, its lease not waited out
	again, err := b.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(again), 1)
	is.Equal(again[0].ID, held[0].ID)   // b runs it
	is.Equal(again[0].Interruptions, 1) // as an interrupted job
	is.Equal(again[0].Attempts, 1)      // whose dead claim's attempt was taken back
	err = a.settle(ctx, held[0], settlement{status: statusCompleted, then: thenRelease})
	is.True(err == errLeaseLost) // a's late result, were it alive after all, is refused
}

func TestQueue_ExpiredLeaseIsDueToAnotherInstance(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	stores, clock := newInstances(t, 2)
	a, b := stores[0], stores[1]
	queueJobs(t, a, "slow", 1)
	held, err := a.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	none, err := b.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(none), 0) // leased to a

	clock.Advance(time.Minute + time.Millisecond)
	beatAll(t, clock, a, b) // a is alive, but its lease ran out
	taken, err := b.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(taken), 1)
	is.Equal(taken[0].ID, held[0].ID) // due again once its lease expired
	err = a.settle(ctx, held[0], settlement{status: statusCompleted, then: thenRelease})
	is.True(err == errLeaseLost) // and a's result is refused
}

func TestWorker_SurvivorRescuesADeadInstancesJobs(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	stores, clock := newInstances(t, 2)
	a, b := stores[0], stores[1]
	queueJobs(t, a, "orphan", 1)
	held, err := a.claim(ctx, time.Hour, 1, laneLocal) // a claims the job, then is killed
	is.NoErr(err)
	is.Equal(len(held), 1)

	w := NewWorker(b, subscribers.NewStore(b.db, nil, nil), newFakeMessenger(), WorkerConfig{Size: 1, Lease: time.Minute, Poll: time.Hour, Rescue: 5 * time.Millisecond})
	wctx, cancel := context.WithCancel(ctx)
	w.Start(wctx)
	defer func() {
		cancel()
		w.Stop(ctx)
	}()
	interruptions := func() int {
		var n int
		is.NoErr(b.db.QueryRowContext(ctx, `SELECT interruptions FROM jobs WHERE id = ?`, held[0].ID).Scan(&n))
		return n
	}
	is.Equal(interruptions(), 0) // a is alive yet

	clock.Advance(sqldb.InstanceTTL + time.Second)
	beatAll(t, clock, b)
	platformtest.Eventually(t, 5*time.Second, func() bool { return interruptions() == 1 },
		"the survivor to requeue the dead instance's job within its lease")
}

// triggerOnce writes a trigger of wf to the subscriber whose database _id
// is subscriber, through s: its first step is due.
func triggerOnce(t *testing.T, s *Store, tenant platform.Tenant, wf *workflows.Workflow, txID, subscriber string) {
	t.Helper()
	p := &plan{tenant: tenant, transactionID: txID, payload: json.RawMessage(`{}`), overrides: json.RawMessage(`{}`),
		wf: wf, template: json.RawMessage(`{}`), actor: json.RawMessage(`{}`), preferences: json.RawMessage(`{}`), chain: chainSteps(wf),
		recipients: []recipient{{id: subscriber, subscriberID: "ada", to: json.RawMessage(`{}`)}}}
	p.planChain(&p.recipients[0], s.now())
	if err := s.insertTrigger(context.Background(), p, true); err != nil {
		t.Fatal(err)
	}
}

// decideAtOnce has each instance claim one job of wf's first step, a
// step of kind, and decide it with decide in a transaction that waits,
// before it commits, until every instance has decided or a moment has
// passed: without a lock, each decides on what it read before any other
// committed. It returns the jobs' statuses.
func decideAtOnce(t *testing.T, stores []*Store, decide func(s *Store, j *job) write) map[string]int {
	t.Helper()
	ctx := context.Background()
	var claimed []*job
	for _, s := range stores {
		got, err := s.claim(ctx, time.Minute, 1, laneLocal)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %d jobs", err, len(got))
		}
		claimed = append(claimed, got[0])
	}
	var decided sync.WaitGroup
	decided.Add(len(stores))
	allDecided := make(chan struct{})
	go func() { decided.Wait(); close(allDecided) }()
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.db.Tx(ctx, func(tx *sql.Tx) error {
				err := decide(s, claimed[i])(ctx, tx)
				decided.Done()
				select {
				case <-allDecided:
				case <-time.After(300 * time.Millisecond):
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	statuses := map[string]int{}
	rows, err := stores[0].db.QueryContext(ctx, `SELECT status FROM jobs WHERE type IN ('digest', 'throttle')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			t.Fatal(err)
		}
		statuses[st]++
	}
	return statuses
}

func TestDigest_ConcurrentInstancesMakeOneMaster(t *testing.T) {
	is := is.New(t)
	stores, clock := newInstances(t, 3)
	tenant := platform.Tenant{OrganizationID: sqldb.NewID(), EnvironmentID: sqldb.NewID()}
	wf := &workflows.Workflow{ID: sqldb.NewID(), WorkflowID: "w", Active: true, Steps: []workflows.Step{
		{ID: sqldb.NewID(), StepID: "d", Type: stepDigest, ControlValues: map[string]any{"amount": 5, "unit": "minutes"}},
		{ID: sqldb.NewID(), StepID: "inbox", Type: "in_app"}}}
	subscriber := sqldb.NewID()
	for i, s := range stores {
		triggerOnce(t, s, tenant, wf, fmt.Sprintf("event-%d", i), subscriber)
	}
	var cfg digestConfig
	is.NoErr(json.Unmarshal([]byte(`{"amount":5,"unit":"minutes"}`), &cfg))
	got := decideAtOnce(t, stores, func(s *Store, j *job) write {
		return s.openDigest(j, cfg, clock.Now().Add(5*time.Minute), json.RawMessage(`{}`), nil)
	})
	is.Equal(got[statusDelayed], 1) // one digest master collects the events
	is.Equal(got[statusMerged], 2)  // the others merged into it
}

func TestThrottle_ConcurrentInstancesKeepTheLimit(t *testing.T) {
	is := is.New(t)
	stores, _ := newInstances(t, 3)
	tenant := platform.Tenant{OrganizationID: sqldb.NewID(), EnvironmentID: sqldb.NewID()}
	wf := &workflows.Workflow{ID: sqldb.NewID(), WorkflowID: "w", Active: true, Steps: []workflows.Step{
		{ID: sqldb.NewID(), StepID: "t", Type: stepThrottle, ControlValues: map[string]any{"amount": 1, "unit": "hours", "threshold": 1}},
		{ID: sqldb.NewID(), StepID: "inbox", Type: "in_app"}}}
	subscriber := sqldb.NewID()
	for i, s := range stores {
		triggerOnce(t, s, tenant, wf, fmt.Sprintf("event-%d", i), subscriber)
	}
	var cfg throttleConfig
	is.NoErr(json.Unmarshal([]byte(`{"amount":1,"unit":"hours","threshold":1}`), &cfg))
	got := decideAtOnce(t, stores, func(s *Store, j *job) write { return s.throttle(j, cfg, nil) })
	is.Equal(got[statusCompleted], 1) // one event passes the throttle of one an hour
	is.Equal(got[statusSkipped], 2)   // the others are throttled
}

// secondInstance opens another instance on h's PostgreSQL database, with a
// store on h's clock, and beats for both.
func (h *harness) secondInstance(t *testing.T) *Store {
	t.Helper()
	var name string
	if err := h.App.DB.QueryRowContext(context.Background(), `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(sqldbtest.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	db, err := sqldb.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := NewStore(db, h.App.Clock.Now)
	beatAll(t, h.App.Clock, h.store, s)
	return s
}

func TestBroadcast_SurvivorTakesOverOnlyADeadOwnersFanOut(t *testing.T) {
	sqldbtest.SkipUnlessShared(t)
	is := is.New(t)
	h := newBroadcastHarness(t)
	b := h.secondInstance(t)
	b.broadcastBatch, b.broadcastRescue = 2, 5*time.Millisecond

	// Instance a's fan-out stops after its first batch, a alive.
	h.subs.onList(failListingAfter("s2"))
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"cut"}`)
	is.Equal(res.Status, http.StatusInternalServerError) // cut short
	h.subs.onList(nil)

	// Instance b starts: the fan-out is a live instance's, its lease running.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := ResumeBroadcasts(ctx, b, workflows.NewStore(b.db), subscribers.NewStore(b.db, nil, h.App.Clock.Now), h.logger)
	wait(ctx)
	is.Equal(h.unfinished(t), []string{"cut after s2"}) // b left it alone
	var owner string
	is.NoErr(h.App.DB.QueryRowContext(context.Background(), `SELECT owner FROM activity_broadcasts`).Scan(&owner))
	is.Equal(owner, h.store.db.Instance()) // still a's

	// a dies; b's rescue finishes the fan-out without a restart.
	_, err := b.db.ExecContext(context.Background(), `DELETE FROM instances WHERE id = ?`, h.store.db.Instance())
	is.NoErr(err)
	platformtest.Eventually(t, 5*time.Second, func() bool { return len(h.unfinished(t)) == 0 }, "b to finish a's fan-out")
	is.Equal(perSubscriber(h.notifications(t, "transactionId=cut")), everyone) // each subscriber written once
}

func TestBroadcast_ExpiredLeaseIsTakenOver(t *testing.T) {
	sqldbtest.SkipUnlessShared(t)
	is := is.New(t)
	h := newBroadcastHarness(t)
	b := h.secondInstance(t)
	b.broadcastBatch, b.broadcastRescue = 2, 5*time.Millisecond
	h.subs.onList(failListingAfter("s2"))
	res := h.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"news","transactionId":"stuck"}`)
	is.Equal(res.Status, http.StatusInternalServerError) // a's fan-out stops, a alive
	h.subs.onList(nil)

	h.App.Clock.Advance(broadcastLease + time.Second)
	beatAll(t, h.App.Clock, h.store, b) // both alive, a's lease run out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ResumeBroadcasts(ctx, b, workflows.NewStore(b.db), subscribers.NewStore(b.db, nil, h.App.Clock.Now), h.logger)
	platformtest.Eventually(t, 5*time.Second, func() bool { return len(h.unfinished(t)) == 0 }, "b to finish a's stalled fan-out")
	is.Equal(perSubscriber(h.notifications(t, "transactionId=stuck")), everyone) // each subscriber written once
}

func TestWorker_TwoInstancesDeliverEachJobOnce(t *testing.T) {
	sqldbtest.SkipUnlessShared(t)
	is := is.New(t)
	h := newHarness(t)
	b := h.secondInstance(t)
	w := NewWorker(b, subscribers.NewStore(b.db, nil, h.App.Clock.Now), h.msg, WorkerConfig{Size: h.size, Lease: testLease,
		Poll: 2 * time.Millisecond, RetryBackoff: testRetry, Logger: h.logger})
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	defer func() {
		cancel()
		w.Stop(context.Background())
	}()

	h.wf.add(t, h.App.Development.ID, "mail", nil, step("mail", "email", map[string]any{"subject": "s", "body": "b"}))
	var to []string
	for i := range 40 {
		to = append(to, fmt.Sprintf("%q", fmt.Sprintf("s%02d", i)))
	}
	tx := h.trigger(t, `{"name":"mail","to":[`+strings.Join(to, ",")+`]}`)
	got := h.waitStatuses(t, tx, "trigger:completed", "email:completed")
	is.Equal(len(got), 40) // every notification delivered
	h.msg.mu.Lock()
	defer h.msg.mu.Unlock()
	perJob := map[string]int{}
	for _, c := range h.msg.calls {
		perJob[c.JobID]++
	}
	is.Equal(len(perJob), 40) // one email job each
	for id, n := range perJob {
		if n != 1 {
			t.Errorf("job %s delivered %d times by the two instances' workers", id, n)
		}
	}
}

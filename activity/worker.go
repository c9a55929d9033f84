package activity

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
)

// WorkerConfig tunes a Worker. Zero fields take the defaults.
type WorkerConfig struct {
	Size         int           // goroutines running jobs in the local lane (in-app, delays, digests); default 32
	IOSize       int           // goroutines of each provider lane (email, sms, chat, push); default Size when only Size is given, else 256
	Lease        time.Duration // how long a claim holds a job before another worker may take it; default 5m
	Poll         time.Duration // how often an idle worker looks for scheduled work; default 1s
	RetryBackoff time.Duration // wait after a first failed attempt, doubling after each; default 10s
	MaxAttempts  int           // attempts before a delivery is Failed; default 3
	// Rescue is how often, on a shared database, the worker requeues the
	// jobs of instances that died holding them (recoverLeases); default
	// sqldb.InstanceTTL. Not used on SQLite.
	Rescue time.Duration
	Logger *slog.Logger
	// Unsnoozer brings an inbox's snoozed message back when its unsnooze
	// job is due; nil completes such jobs without effect (no inbox).
	Unsnoozer Unsnoozer
	// DefaultTimezone reads the schedules of subscribers without a
	// timezone (HERALD_DEFAULT_TIMEZONE); nil is UTC.
	DefaultTimezone *time.Location
}

// maxCommit is the most job results one transaction records.
const maxCommit = 64

// defaultSize is a worker's default number of goroutines. A delivery mostly
// waits on a provider's network round trip, so the pool is sized for
// waiting, not for cores: a few slow sends do not hold up the queue.
const defaultSize = 32

// defaultIOSize is each provider lane's default number of goroutines. A
// provider answers in 100–500 ms and a send waits on it without computing:
// at 100 ms, 32 goroutines cap a lane near 300 sends a second, 256 near
// 2,500. A goroutine costs a few KiB, and a lane claims at most two jobs a
// goroutine, so memory stays bounded; one slow or failing provider fills
// only its own lane (docs/delivery.md, "The job queue").
const defaultIOSize = 256

// Worker runs the job queue. SQLite has one writer, so the worker spends it
// in few, large transactions: a dispatcher claims every due job it has room
// for in one UPDATE, a pool of Size goroutines runs them (delivering through
// messaging, which is where the time goes), and a committer records the
// results that have piled up meanwhile in one transaction. The dispatcher is
// woken by triggers and by a ticker for scheduled work (delays, digests,
// retries).
//
// There is such a dispatcher and pool for each lane: one for each channel
// whose steps wait on a provider (email, sms, chat, push) and one for the
// rest, so that a provider that is slow or down, with a backlog of Size
// sends or more, holds up only its own channel's sends, never in-app
// messages, delays and digests. One committer records them all.
type Worker struct {
	runner

	lanes [laneCount]*lane

	mu         sync.Mutex
	wg         sync.WaitGroup
	cancelLoop context.CancelFunc // stops claiming
	cancelJobs context.CancelFunc // abandons running jobs
}

// lane is one of the worker's queues.
type lane struct {
	id      int           // laneLocal, laneEmail, …
	pending atomic.Int64  // jobs claimed and not yet recorded
	freed   chan struct{} // signalled when results were recorded
}

// NewWorker returns a worker for store's queue. It delivers channel steps
// through messenger and reads subscribers through subscribers.
func NewWorker(store *Store, subscribers Subscribers, messenger Messenger, cfg WorkerConfig) *Worker {
	if cfg.IOSize <= 0 {
		// A size given alone sizes every lane, as it did before lanes
		// had their own.
		cfg.IOSize = cmp.Or(cfg.Size, defaultIOSize)
	}
	if cfg.Size <= 0 {
		cfg.Size = defaultSize
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 10 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Rescue <= 0 {
		cfg.Rescue = sqldb.InstanceTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{runner: runner{store: store, subscribers: subscribers, messenger: messenger, cfg: cfg}}
	w.preferences, _ = subscribers.(Preferences) // subscribers.Store resolves them (app/wire.go checks it)
	for i := range w.lanes {
		w.lanes[i] = &lane{id: i, freed: make(chan struct{}, 1)}
	}
	return w
}

// runner runs one job's step. The worker runs every queued job with it, and
// a trigger runs its first in-app step with the worker's runner (inline.go).
type runner struct {
	store       *Store
	subscribers Subscribers
	messenger   Messenger
	cfg         WorkerConfig
	steps       sqldb.ParseCache[jobStep]         // parsed step snapshots, by workflow and step
	skips       sqldb.ParseCache[json.RawMessage] // skip conditions of step controls, the same way
	// scheduleControls are the controls of a step that bear on schedules,
	// the same way.
	scheduleControls sqldb.ParseCache[scheduleControls]

	preferences   Preferences                             // subscribers' preferences; nil reads only the workflow's
	workflowPrefs sqldb.ParseCache[workflows.Preferences] // the workflow's preferences, by workflow
}

// result is a run job's write, on its way to the committer.
type result struct {
	j     *job
	write write
}

// Start starts the worker. It stops claiming when ctx is done or Stop is
// called; jobs already running run on until Stop's deadline, and jobs
// claimed but not started are given back.
func (w *Worker) Start(ctx context.Context) {
	if n, err := w.store.recoverLeases(ctx, false); err != nil {
		w.cfg.Logger.Error("recover claimed jobs; they run when their leases expire", "error", err)
	} else if n > 0 {
		w.cfg.Logger.Info("jobs claimed before the last stop are due again", "jobs", n)
	}
	ctx, cancelLoop := context.WithCancel(ctx)
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	w.mu.Lock()
	w.cancelLoop, w.cancelJobs = cancelLoop, cancelJobs
	w.mu.Unlock()

	// At most two jobs per goroutine are claimed at once: one claim (a
	// write) serves several jobs, and a claimed job never waits long for a
	// goroutine while its lease runs, nor is left for a crash to strand.
	results := make(chan result, 2*w.cfg.Size)
	var running sync.WaitGroup
	for _, l := range w.lanes {
		size := w.cfg.IOSize
		if l.id == laneLocal {
			size = w.cfg.Size
		}
		jobs := make(chan *job, 2*size)
		for range size {
			running.Add(1)
			go func() {
				defer running.Done()
				w.execute(ctx, jobCtx, jobs, results)
			}()
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.dispatch(ctx, l, jobs)
			close(jobs)
		}()
	}
	if w.store.db.Shared() {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.rescue(ctx)
		}()
	}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		running.Wait()
		close(results)
	}()
	go func() {
		defer w.wg.Done()
		// Results are recorded even while stopping: the work is done.
		w.commit(context.WithoutCancel(ctx), results)
	}()
}

// Stop stops claiming, gives back the claimed jobs not yet started, and
// waits for running jobs to finish, until ctx is done; then it abandons them
// and waits for the goroutines to end. An abandoned job records nothing: the
// next start runs it again (recoverLeases).
func (w *Worker) Stop(ctx context.Context) {
	w.mu.Lock()
	if w.cancelLoop != nil {
		w.cancelLoop()
	}
	w.mu.Unlock()
	done := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	w.mu.Lock()
	if w.cancelJobs != nil {
		w.cancelJobs()
	}
	w.mu.Unlock()
	<-done
}

// rescue requeues, every cfg.Rescue until ctx is done, the jobs that
// instances sharing the database died holding, as River's rescuer does:
// the survivors run them without waiting out their leases or a restart of
// the dead instance. Jobs whose lease ran out are due again without it.
func (w *Worker) rescue(ctx context.Context) {
	tick := time.NewTicker(w.cfg.Rescue)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := w.store.recoverLeases(ctx, true)
		switch {
		case err != nil && ctx.Err() == nil:
			w.cfg.Logger.Error("recover jobs of dead instances; they run when their leases expire", "error", err)
		case n > 0:
			w.cfg.Logger.Info("jobs of a dead instance are due again", "jobs", n)
			for lane := range laneCount {
				w.store.wake(lane)
			}
		}
	}
}

// dispatch claims the lane's due jobs while there is room for them, and
// otherwise waits for a wake-up, a tick or room. A claim that took every due
// job is not followed by another until something signals: claims come in
// batches rather than one per job while triggers trickle in.
func (w *Worker) dispatch(ctx context.Context, l *lane, jobs chan<- *job) {
	ticker := time.NewTicker(w.cfg.Poll)
	defer ticker.Stop()
	limit := int64(cap(jobs))
	check := true // ask the read pool first whether anything is due
	for ctx.Err() == nil {
		if room := limit - l.pending.Load(); room > 0 {
			batch, err := w.claim(ctx, l, int(room), check)
			if err != nil && ctx.Err() == nil {
				w.cfg.Logger.Error("claim jobs", "error", err)
			}
			l.pending.Add(int64(len(batch)))
			for _, j := range batch {
				j.lane = l
				jobs <- j // never blocks: pending bounds what is in flight
			}
			if int64(len(batch)) == room {
				check = false // there may be more
				continue
			}
		}
		select {
		case <-ctx.Done():
		case <-w.store.woken[l.id]:
			check = false // a write just made work due in this lane
		case <-l.freed:
			check = true
		case <-ticker.C:
			check = true
		}
	}
}

// claim leases up to n due jobs of lane l. With check, it asks the read
// pool first, so idle polls stay off the writer.
func (w *Worker) claim(ctx context.Context, l *lane, n int, check bool) ([]*job, error) {
	if check {
		due, err := w.store.anyDue(ctx, l.id)
		if err != nil || !due {
			return nil, err
		}
	}
	return w.store.claim(ctx, w.cfg.Lease, n, l.id)
}

// execute runs claimed jobs and hands their results to the committer. Once
// the worker stops claiming (stopping is done), a job not yet started is
// given back rather than started, and so is one whose lease is half gone:
// it has waited too long to be sure of finishing before another worker may
// take it.
func (w *Worker) execute(stopping, ctx context.Context, jobs <-chan *job, results chan<- result) {
	for j := range jobs {
		if stopping.Err() != nil || w.store.now().After(j.LeaseUntil.Add(-w.cfg.Lease/2)) {
			results <- result{j: j, write: w.store.unclaimed(j)}
			continue
		}
		wr, err := w.runRecovered(ctx, j)
		if err != nil {
			if ctx.Err() == nil {
				w.cfg.Logger.Error("run job; it runs again when its lease expires", "job_id", j.ID, "type", j.Type, "error", err)
			}
			w.release(j)
			continue
		}
		results <- result{j: j, write: wr}
	}
}

// runRecovered runs j, and fails its step if the run panics: a claimed job
// runs again after a restart, so a job that panicked every time would stop
// Herald at every start, with all the work behind it. The panic is logged
// with its stack under an error id that the step's detail names.
func (w *Worker) runRecovered(ctx context.Context, j *job) (wr write, err error) {
	defer func() {
		if v := recover(); v != nil {
			id := sqldb.NewID()
			w.cfg.Logger.Error("job panicked; its step fails", "job_id", j.ID, "type", j.Type, "error_id", id,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			wr, err = w.fail(j, []detail{{Status: detailFailed, Source: sourceInternal,
				Detail: fmt.Sprintf("Step failed: internal error (errorId %s)", id)}})
		}
	}()
	return w.run(ctx, j)
}

// commit records results in as few transactions as possible: it takes one,
// then every other that is already waiting, and writes them together.
func (w *Worker) commit(ctx context.Context, results <-chan result) {
	for r := range results {
		batch := []result{r}
	more:
		for len(batch) < maxCommit {
			select {
			case r, ok := <-results:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		w.record(ctx, batch)
		for _, r := range batch {
			w.release(r.j)
		}
	}
}

// record writes a batch in one transaction. Results rarely fail (a lost
// lease, mostly), so they are written without a savepoint each: when one
// fails, the transaction is abandoned and each result is tried in a
// transaction of its own, where a failure drops that result alone. That
// serves a shared database too, which aborts the whole transaction at a
// failed statement.
func (w *Worker) record(ctx context.Context, batch []result) {
	if err := w.store.db.PrepareWrites(ctx, settleStatements...); err != nil {
		w.cfg.Logger.Error("prepare statements", "error", err)
	}
	err := w.store.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range batch {
			if err := r.write(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	if len(batch) == 1 && !sqldb.IsRetryable(err) {
		w.logWrite(batch[0].j, err)
		return
	}
	// On a shared database a batch may also be rolled back to break a
	// deadlock with another instance's (their digests' locks taken in
	// another order, say): alone, each result is tried again.
	for _, r := range batch {
		if err := w.store.db.RetryTx(ctx, func(tx *sql.Tx) error { return r.write(ctx, tx) }); err != nil {
			w.logWrite(r.j, err)
		}
	}
}

func (w *Worker) logWrite(j *job, err error) {
	if errors.Is(err, errLeaseLost) {
		w.cfg.Logger.Warn("job lease lost; its result was dropped", "job_id", j.ID)
		return
	}
	w.cfg.Logger.Error("record job result; it runs again when its lease expires", "job_id", j.ID, "type", j.Type, "error", err)
}

// release notes that claimed job j is done with, making room in its lane to
// claim more.
func (w *Worker) release(j *job) {
	j.lane.pending.Add(-1)
	select {
	case j.lane.freed <- struct{}{}:
	default:
	}
}

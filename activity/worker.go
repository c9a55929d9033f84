package activity

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// WorkerConfig tunes a Worker. Zero fields take the defaults.
type WorkerConfig struct {
	Size         int           // goroutines claiming jobs; default 2×GOMAXPROCS
	Lease        time.Duration // how long a claim holds a job before another worker may take it; default 5m
	Poll         time.Duration // how often idle workers look for scheduled work; default 1s
	RetryBackoff time.Duration // wait after a first failed attempt, doubling after each; default 10s
	MaxAttempts  int           // attempts before a delivery is Failed; default 3
	Logger       *slog.Logger
}

// Worker runs the job queue: a pool of goroutines, each claiming the job
// due longest, running it and recording the result, woken by triggers and
// by a ticker for scheduled work (delays, digests, retries).
type Worker struct {
	store       *Store
	subscribers Subscribers
	messenger   Messenger
	cfg         WorkerConfig

	mu         sync.Mutex
	wg         sync.WaitGroup
	cancelLoop context.CancelFunc // stops claiming
	cancelJobs context.CancelFunc // abandons running jobs
}

// NewWorker returns a worker for store's queue. It delivers channel steps
// through messenger and reads subscribers through subscribers.
func NewWorker(store *Store, subscribers Subscribers, messenger Messenger, cfg WorkerConfig) *Worker {
	if cfg.Size <= 0 {
		cfg.Size = 2 * runtime.GOMAXPROCS(0)
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
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{store: store, subscribers: subscribers, messenger: messenger, cfg: cfg}
}

// Start starts the pool. It stops claiming when ctx is done or Stop is
// called; jobs already running go on until Stop's deadline.
func (w *Worker) Start(ctx context.Context) {
	ctx, cancelLoop := context.WithCancel(ctx)
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	w.mu.Lock()
	w.cancelLoop, w.cancelJobs = cancelLoop, cancelJobs
	w.mu.Unlock()
	for range w.cfg.Size {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.loop(ctx, jobCtx)
		}()
	}
}

// Stop stops claiming and waits for running jobs to finish, until ctx is
// done; then it cancels them and waits for their goroutines. A canceled job
// records nothing: its lease expires and another worker runs it again.
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

// Wake makes an idle worker look for due jobs now.
func (w *Worker) Wake() { w.store.wake() }

func (w *Worker) loop(ctx, jobCtx context.Context) {
	ticker := time.NewTicker(w.cfg.Poll)
	defer ticker.Stop()
	for {
		if ctx.Err() != nil {
			return
		}
		j, err := w.next(ctx)
		if err != nil {
			if !errors.Is(err, errNoJob) && ctx.Err() == nil {
				w.cfg.Logger.Error("claim job", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-w.store.woken:
			case <-ticker.C:
			}
			continue
		}
		// Another job may be due too: let an idle worker look.
		w.store.wake()
		if err := w.run(jobCtx, j); err != nil && jobCtx.Err() == nil {
			if errors.Is(err, errLeaseLost) {
				w.cfg.Logger.Warn("job lease lost; its result was dropped", "job_id", j.ID)
			} else {
				w.cfg.Logger.Error("run job", "job_id", j.ID, "type", j.Type, "error", err)
			}
		}
	}
}

// next claims a due job, asking the read pool first so idle polls stay off
// the writer.
func (w *Worker) next(ctx context.Context) (*job, error) {
	due, err := w.store.anyDue(ctx)
	if err != nil {
		return nil, err
	}
	if !due {
		return nil, errNoJob
	}
	return w.store.claim(ctx, w.cfg.Lease)
}

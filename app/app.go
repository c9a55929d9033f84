// Package app is Herald's composition root: it builds each domain's store,
// wires the domains to each other through the interfaces each declares,
// registers their routes, and starts what runs beside the server (the
// delivery worker, the broadcasts a stopped process left, the retention
// sweeper). main starts it, and so do the tests, through apptest, so they
// run the wiring the binary runs.
package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/activity/webhooks"
	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
	"github.com/herald-notify/herald/workflows"
)

// Deps is what the domains are built from and started with.
type Deps struct {
	DB           *sqldb.DB
	Logger       *slog.Logger
	Secret       []byte                   // encrypts integration credentials and subscribers' channels
	Now          func() time.Time         // injected so tests can move time
	Environments []platform.Environment   // what Start seeds, and what the sweeper sweeps
	Workers      int                      // delivery workers; 0 means the default
	Outbound     *outbound.Guard          // where sends and checks may connect; nil refuses private addresses
	Retention    Retention                // how long records are kept; zero keeps them forever
	Metrics      *platform.Metrics        // what the domains report to; nil reports nothing
	Inbox        *platform.SubscriberAuth // the inbox's subscriber tokens; nil serves no inbox
	MaxSnooze    time.Duration            // the inbox's longest snooze; 0 means messaging's default
	// SocketsPerToken is how many live inbox sockets one token may hold
	// open; 0 means messaging's default, negative no limit.
	SocketsPerToken int
	// WebhookLane is how many deliveries one webhook endpoint may have in
	// flight; 0 means the default.
	WebhookLane int
	// PublicURL is where providers reach Herald (HERALD_PUBLIC_URL): the
	// receipt URL integrations show, and the URL Twilio and Plivo sign;
	// "" uses each request's own host.
	PublicURL string
	// Console signs the team in to the console, which App.Console serves;
	// nil serves no console.
	Console *platform.ConsoleAuth
	// DefaultTimezone reads the schedules of subscribers without a
	// timezone (HERALD_DEFAULT_TIMEZONE); nil is UTC.
	DefaultTimezone *time.Location
	// PageCache is how many bytes of memory keep feed and inbox pages
	// between writes (HERALD_PAGE_CACHE); 0 means messaging's default,
	// negative none.
	PageCache int
}

// App is a started Herald: each domain's store, connected to the others,
// the delivery worker and the retention sweeper.
type App struct {
	Integrations *integrations.Store
	Workflows    *workflows.Store
	Subscribers  *subscribers.Store
	Messages     *messaging.Store
	Activity     *activity.Store
	Worker       *activity.Worker
	Webhooks     *webhooks.Store      // outbound webhook endpoints, events and deliveries
	Dispatcher   *webhooks.Dispatcher // delivers the webhook events
	Sweeper      *activity.Sweeper    // runs on its own when Retention.Every is set; a test may call Sweep
	Console      http.Handler         // the console, to serve under /console/; nil without Deps.Console

	stopOnce sync.Once
	stoppers []func(context.Context)
}

// environmentSeeder creates what a domain needs in every environment from the
// first start on: the in-app integration, the default notification group.
type environmentSeeder interface {
	SeedEnvironment(ctx context.Context, env platform.Environment) error
}

// Start wires the domains onto mux (wire) and starts what runs beside the
// server: it seeds each environment, starts the delivery worker, and goes
// on with the broadcasts an earlier process left half sent. The worker
// stops claiming when ctx is done; Stop, called after that, waits for what
// it still runs.
func Start(ctx context.Context, mux *http.ServeMux, d Deps) (*App, error) {
	a, err := wire(mux, d, ctx.Done())
	if err != nil {
		return nil, err
	}
	// On a shared database this instance is alive to the others before it
	// claims anything, and until what it runs has stopped (the last
	// stopper): gone sooner, others would take over jobs still running here.
	if err := d.DB.Beat(ctx, d.Now()); err != nil {
		return nil, err
	}
	stopBeat := d.DB.StartHeartbeat(d.Now)
	d.DB.SetLogger(d.Logger)
	// Sockets a stopped process held are gone: their subscribers are
	// offline unless a live instance holds another.
	if err := a.Subscribers.ResetPresence(ctx); err != nil {
		stopBeat(ctx)
		return nil, err
	}
	for _, s := range []environmentSeeder{a.Integrations, a.Workflows} {
		for _, env := range d.Environments {
			if err := s.SeedEnvironment(ctx, env); err != nil {
				stopBeat(ctx)
				return nil, err
			}
		}
	}
	if err := warnWithoutHMAC(ctx, d); err != nil {
		stopBeat(ctx)
		return nil, err
	}
	// Secrets an earlier version stored plain are sealed at every start;
	// reads take either form, and instances starting at once seal each row
	// once.
	if err := sealStored(ctx, a, d.Logger); err != nil {
		stopBeat(ctx)
		return nil, err
	}
	if err := a.Webhooks.Prepare(ctx); err != nil {
		stopBeat(ctx)
		return nil, err
	}
	a.Worker.Start(ctx)
	a.stoppers = append(a.stoppers, a.Dispatcher.Start(ctx))
	// ResumeBroadcasts reads which broadcasts to go on with before the
	// server takes requests, so none begun by this process is taken for one
	// of those.
	resumed := activity.ResumeBroadcasts(ctx, a.Activity, a.Workflows, a.Subscribers, d.Logger)
	a.stoppers = append(a.stoppers, a.Worker.Stop, resumed)
	a.Sweeper = newSweeper(d, a.Activity, a.Messages, a.Webhooks)
	d.Metrics.Gauge("herald_retention_removed_rows", "Rows the retention sweeper deleted since the process started.", func() float64 {
		var n int64
		for _, removed := range a.Sweeper.Removed() {
			n += removed
		}
		return float64(n)
	})
	if d.Retention.Every > 0 {
		a.stoppers = append(a.stoppers, a.Sweeper.Start(ctx))
	}
	a.stoppers = append(a.stoppers, stopBeat)
	return a, nil
}

// warnWithoutHMAC logs the warning of each Production environment whose
// inbox takes sessions without an HMAC, where an operator reads it at start.
func warnWithoutHMAC(ctx context.Context, d Deps) error {
	for _, env := range d.Environments {
		warning, err := d.Inbox.WarnWithoutHMAC(ctx, env)
		if err != nil {
			return err
		}
		if warning != "" {
			d.Logger.Warn(warning, "environment", env.ID)
		}
	}
	return nil
}

// Stop waits, within ctx, for the background work Start began, once the
// context Start was given is done; past ctx, running jobs are abandoned and
// their leases let the next start run them again. Only the first call
// waits.
func (a *App) Stop(ctx context.Context) {
	a.stopOnce.Do(func() {
		for _, stop := range a.stoppers {
			stop(ctx)
		}
	})
}

// sealStored seals the subscribers' channels and the messages' targets an
// earlier version stored plain, drops the channels its notifications kept,
// and says how many rows it changed.
func sealStored(ctx context.Context, a *App, logger *slog.Logger) error {
	subs, err := a.Subscribers.SealStoredChannels(ctx)
	if err != nil {
		return err
	}
	msgs, err := a.Messages.SealStoredTargets(ctx)
	if err != nil {
		return err
	}
	notes, err := a.Activity.DropStoredChannels(ctx)
	if (subs > 0 || msgs > 0 || notes > 0) && logger != nil {
		logger.Info("sealed the channel credentials stored plain", "subscribers", subs, "messages", msgs,
			"notifications_dropped", notes)
	}
	return err
}

// Command bench measures Herald on this machine: it builds the server, runs
// it on a temporary WAL database, drives it over loopback HTTP, and prints
// every figure beside the floor it is compared with and its target.
//
//	go run ./bench          # the full run (several minutes)
//	go run ./bench -quick   # about a minute on smaller data, not judged
//	go run ./bench -quick -only delivery   # one part: delivery (1, 2, 6), reads (3, 4, 5), providers (7), fanout (8), inbox (9), storage (11), retention (12), webhooks (13), console (14), editor (15), peers (16), webpush (17), content (18) or instances (10, with -db)
//	go run ./bench -db postgres://postgres@127.0.0.1:5432/postgres   # the server scenarios on SQLite and on PostgreSQL, and scenario 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// The benchmark server's Development key and credential secret.
const (
	benchKey    = "bench-development-key-000000000000"
	benchSecret = "bench-secret-0123456789abcdef0123456789"
)

// sizes are the data volumes of one run.
type sizes struct {
	clients       int           // concurrent HTTP clients
	triggers      int           // scenario 1
	recipients    int           // subscribers scenario 1 and 2 trigger for
	latencyFor    time.Duration // how long scenario 2's run at half rate lasts
	searchFor     time.Duration // how long each search's run at half rate lasts at least (scenario 4)
	subscribers   int           // scenarios 3 and 4
	messages      int           // scenario 3
	smallRows     int           // scenario 5, small side
	largeRows     int           // scenario 5, large side
	readRequests  int           // requests per read scenario
	noopRequests  int
	floorDelivers int
	// footprintTriggers is how many notifications each step kind's
	// footprint is measured over; expired how many expired notifications
	// the sweeper deletes while scenario 1 runs again.
	footprintTriggers int
	expired           int
	fanout            int     // scenario 8: subscribers in the topic and the broadcast
	sockets           int     // scenario 9: inbox sockets open at once
	inboxRate         float64 // scenario 9: triggers/s while they are open
	instanceTriggers  int     // scenario 10: triggers for each count of instances
	// retentionWindow is how long scenario 12 samples the database's size
	// after its warm-up.
	retentionWindow time.Duration
	consoleRows     int // scenario 14: notifications in the database the console reads
	// scenario 16: users, notifications to them, and reads of each route
	peerUsers, peerNotifications, peerReads int
}

func main() {
	quick := flag.Bool("quick", false, "a ~30 second run on small data; figures are reported, not judged")
	out := flag.String("out", "bench/results/latest.json", "where to write the results as JSON")
	expired := flag.Int("expired", 0, "expired notifications the sweeper deletes while scenario 1 runs again; 0 means 1,000,000 (20,000 with -quick)")
	only := flag.String("only", "", "run one part only, for profiling a change: delivery (scenarios 1, 2, 6 and the footprint per notification), reads (3, 4, 5), providers (7), fanout (8), inbox (9), storage (11), retention (12), webhooks (13), console (14), editor (15), peers (16), webpush (17), content (18) or instances (10, needs -db)")
	db := flag.String("db", "", "a postgres:// URL: run the server scenarios on that PostgreSQL server too (a fresh database each, created and dropped through this URL), printed beside SQLite's, and scenario 10 (1, 2 and 3 instances on one database)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *quick, *only, *out, *expired, *db); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, quick bool, only, out string, expired int, pgURL string) error {
	sz := sizes{clients: 64, triggers: 100_000, recipients: 1_000, latencyFor: 20 * time.Second, searchFor: 20 * time.Second,
		subscribers: 100_000, messages: 1_000_000, smallRows: 10_000, largeRows: 1_000_000,
		readRequests: 20_000, noopRequests: 50_000, floorDelivers: 50_000, footprintTriggers: 10_000, expired: 1_000_000, fanout: 100_000, sockets: 10_000, inboxRate: 1_000,
		instanceTriggers: 30_000, retentionWindow: 15 * time.Minute, consoleRows: 1_000_000,
		peerUsers: 1_000, peerNotifications: 30_000, peerReads: 20_000}
	if quick {
		sz = sizes{clients: 64, triggers: 5_000, recipients: 200, latencyFor: 3 * time.Second,
			subscribers: 5_000, messages: 20_000, smallRows: 1_000, largeRows: 20_000,
			readRequests: 2_000, noopRequests: 5_000, floorDelivers: 5_000, footprintTriggers: 1_000, expired: 20_000, fanout: 5_000, sockets: 500, inboxRate: 200,
			instanceTriggers: 2_000, retentionWindow: 2 * time.Minute, consoleRows: 20_000,
			peerUsers: 200, peerNotifications: 2_000, peerReads: 1_000}
	}
	if expired > 0 {
		sz.expired = expired
	}
	dir, err := os.MkdirTemp("", "herald-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	rep := &report{Started: time.Now(), Quick: quick, Machine: machine()}
	b := &bench{dir: dir, sz: sz, rep: rep, judge: !quick}
	if pgURL != "" {
		if b.pg, err = openPGServer(ctx, pgURL); err != nil {
			return err
		}
		defer b.pg.close()
		b.store, rep.store = storeSQLite, storeSQLite
	}
	b.pin, b.pinned = planPinning()
	steps := []func(context.Context) error{b.build, b.floors}
	// On PostgreSQL too, with -db: the scenarios that start a server. The
	// footprint (SQLite's dbstat) and the sweeper run (rows seeded into the
	// file) measure SQLite's file and are not repeated.
	pgSteps := map[string]func(context.Context) error{"storage": b.broadcastStorage, "delivery": b.delivery, "reads": b.reads, "providers": b.providers, "fanout": b.fanout, "inbox": b.inbox, "retention": b.retention, "webhooks": b.webhooks, "peers": b.peers, "content": b.content}
	var parts []string
	switch only {
	case "":
		steps = append(steps, b.delivery, b.footprint, b.reads, b.providers, b.fanout, b.inbox, b.broadcastStorage, b.webhooks, b.console, b.editor, b.peers, b.webPush, b.content)
		parts = []string{"delivery", "reads", "providers", "fanout", "inbox", "storage", "webhooks", "peers", "content", "instances"}
		// Scenario 12 runs for minutes at any size: the full run only.
		if !quick {
			steps = append(steps, b.retention)
			parts = append(parts, "retention")
		}
	case "delivery":
		steps = append(steps, b.delivery, b.footprint)
		parts = []string{"delivery"}
	case "storage": // measured against its targets, not a floor
		steps = []func(context.Context) error{b.build, b.broadcastStorage}
		parts = []string{"storage"}
	case "fanout", "reads", "providers":
		steps = append(steps, pgSteps[only])
		parts = []string{only}
	case "console": // against its targets, on SQLite, whose file it seeds
		steps = []func(context.Context) error{b.build, b.console}
	case "editor": // against its target: the server's time for one preview
		steps = []func(context.Context) error{b.build, b.editor}
	case "webpush": // reported: what encrypting and signing each push costs
		steps = []func(context.Context) error{b.build, b.webPush}
	case "inbox", "retention", "webhooks", "peers", "content": // measured against their targets, not a floor
		steps = []func(context.Context) error{b.build, pgSteps[only]}
		parts = []string{only}
	case "instances":
		if pgURL == "" {
			return fmt.Errorf("-only instances needs -db postgres://…")
		}
		steps = []func(context.Context) error{b.build}
		parts = []string{"instances"}
	default:
		return fmt.Errorf("-only %q: want delivery, reads, providers, fanout, inbox, storage, retention, webhooks, console, editor, peers, webpush, content or instances", only)
	}
	if pgURL != "" {
		for _, part := range parts {
			if part == "instances" {
				steps = append(steps, b.instances)
			} else {
				steps = append(steps, b.onPostgres(part, pgSteps[part]))
			}
		}
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	rep.print(os.Stdout)
	if err := rep.save(out); err != nil {
		return err
	}
	fmt.Printf("\nresults written to %s\n", out)
	return nil
}

// bench carries one run's state between its steps.
type bench struct {
	dir   string
	sz    sizes
	rep   *report
	judge bool // false in -quick: figures are reported, not judged
	bin   string
	noop  loadResult
	floor float64 // sqlite floor, deliveries/s
	// pin splits the CPUs between the server and the load generator when
	// pinned; otherwise they share them (see pinning).
	pin    pinning
	pinned bool
	// memoryDone is set once the memory at the end of scenario 3 is
	// reported (the large dataset is read twice).
	memoryDone bool
	// pg is the PostgreSQL server of -db, nil without; store is the store
	// the scenario running now measures (database).
	pg    *pgServer
	store string
}

// logf writes a progress line to stderr, with the time since the start, as
// a part of the run begins: a full run is silent for minutes otherwise, and
// the times place a stall the figures show.
func (b *bench) logf(format string, args ...any) {
	elapsed := time.Since(b.rep.Started).Round(time.Second)
	fmt.Fprintf(os.Stderr, "[%s] %s\n", elapsed, fmt.Sprintf(format, args...))
}

// result returns a PASS/FAIL verdict, or nil when the run is not judged.
func (b *bench) result(ok bool) *bool {
	if !b.judge {
		return nil
	}
	return judged(ok)
}

func (b *bench) build(ctx context.Context) error {
	b.logf("building the server")
	bin, size, err := buildServer(ctx, b.dir)
	if err != nil {
		return err
	}
	b.bin = bin
	b.rep.add(row{Scenario: "6 footprint", Metric: "binary size (CGO_ENABLED=0, -s -w)", Value: float64(size) / (1 << 20), Unit: "MB", Target: "reported"})
	return nil
}

// floors measures the sqlite floor; the noop floor is measured beside the
// feed it is the floor of (noopBeside).
func (b *bench) floors(ctx context.Context) error {
	b.logf("sqlite floor: %d deliveries", b.sz.floorDelivers)
	// The floor stands for the server, so it runs on the server's cores;
	// from then on this process is the load generator, on the others.
	if err := pinSelf(b.pin.server); err != nil {
		return err
	}
	floor, err := sqliteFloor(ctx, b.dir, b.sz.floorDelivers, 500)
	if err != nil {
		return fmt.Errorf("sqlite floor: %w", err)
	}
	if err := pinSelf(b.pin.generator); err != nil {
		return err
	}
	b.floor = floor
	b.rep.add(row{Scenario: "floor", Metric: "sqlite deliveries/s (raw batched rows)", Value: floor, Unit: "deliveries/s", Target: "reported"})
	return nil
}

// noopBeside measures the noop floor right before scenario 3's feed is
// timed. The machine's speed drifts over a run: measured at the start,
// minutes before the feed, the noop would move from one run to the next,
// and the feed's ratio with it.
func (b *bench) noopBeside(ctx context.Context) error {
	b.logf("noop floor: %d requests", b.sz.noopRequests)
	noop, cpu, err := noopFloor(ctx, b.dir, b.sz.clients, b.sz.noopRequests)
	if err != nil {
		return fmt.Errorf("noop floor: %w", err)
	}
	b.noop = noop
	b.rep.add(row{Scenario: "floor", Metric: "noop requests/s (auth + middleware), beside scenario 3", Value: noop.PerSec, Unit: "req/s", Target: "reported"})
	b.rep.add(row{Scenario: "floor", Metric: "noop server CPU per request", Value: cpu, Unit: "us", Target: "reported"})
	// The HTTP stack's own tail under the same 64 closed-loop clients on
	// the same cores: the floor of scenario 3's p99.
	b.rep.add(row{Scenario: "floor", Metric: fmt.Sprintf("noop p99, %d clients (p50 %.2f ms)", b.sz.clients, ms(noop.P50)),
		Value: ms(noop.P99), Unit: "ms", Target: "reported"})
	return nil
}

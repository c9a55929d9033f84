package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// readFigures are one dataset's read figures, kept to compare sizes: the
// feed under 64 clients (scenario 3), and for each kind of search its
// closed-loop maximum (saturated) and its latency at half that rate (paced).
type readFigures struct {
	feed      loadResult // closed-loop, 64 clients: the maximum rate
	feedPaced loadResult // open-loop at half of feed's rate: the latency
	feedCPU   float64    // server CPU µs per feed request
	saturated map[string]loadResult
	search    map[string]loadResult
}

var searchKinds = []string{"subscriberId", "email substring", "name substring", "cursor paging 1,000 results"}

// reads runs scenarios 3, 4 and 5: the same reads on a small and a large
// dataset, then the large one grown to the large row count of subscribers.
func (b *bench) reads(ctx context.Context) error {
	smallDB, err := b.database(ctx, "small")
	if err != nil {
		return err
	}
	largeDB, err := b.database(ctx, "large")
	if err != nil {
		return err
	}
	small, err := b.seed(ctx, smallDB, 0, b.sz.smallRows, b.sz.smallRows)
	if err != nil {
		return err
	}
	smallFig, err := b.measureReads(ctx, small)
	if err != nil {
		return err
	}
	large, err := b.seed(ctx, largeDB, 0, b.sz.subscribers, b.sz.messages)
	if err != nil {
		return err
	}
	if err := b.noopBeside(ctx); err != nil {
		return err
	}
	largeFig, err := b.measureReads(ctx, large)
	if err != nil {
		return err
	}

	feed := largeFig.feed
	b.rep.add(row{Scenario: "3 feed read", Metric: fmt.Sprintf("requests/s (%d subscribers, %d messages in %d inboxes, limit=20, %d clients)", large.subscribers, large.messages, large.inboxes, b.sz.clients),
		Value: feed.PerSec, Unit: "req/s", Floor: b.noop.PerSec, Target: ">= 30% of noop", Pass: b.result(feed.PerSec >= 0.3*b.noop.PerSec && feed.Errors == 0)})
	b.rep.add(row{Scenario: "3 feed read", Metric: "server CPU per request", Value: largeFig.feedCPU, Unit: "us", Target: "reported"})
	// The p99 is judged open-loop at half the feed's rate, as scenarios 2
	// and 4 are: at saturation, 64 closed-loop clients measure their own
	// queue (latency is 64 ÷ throughput), and that p99 is printed beside.
	paced := largeFig.feedPaced
	b.rep.add(row{Scenario: "3 feed read", Metric: fmt.Sprintf("p99 at %.0f req/s, half the max (p50 %.2f ms; saturated p99 %.2f ms, the noop's %.2f ms)",
		paced.PerSec, ms(paced.P50), ms(feed.P99), ms(b.noop.P99)), Value: ms(paced.P99), Unit: "ms",
		Target: "<= 10 ms", Pass: b.result(paced.P99 <= 10*time.Millisecond && paced.Errors == 0)})
	for _, kind := range searchKinds {
		sat, r := largeFig.saturated[kind], largeFig.search[kind]
		b.rep.add(row{Scenario: "4 subscriber search", Metric: fmt.Sprintf("%s, %d clients: max rate (p99 %.2f ms at saturation)", kind, b.sz.clients, ms(sat.P99)),
			Value: sat.PerSec, Unit: "req/s", Target: "reported"})
		b.rep.add(row{Scenario: "4 subscriber search", Metric: fmt.Sprintf("%s p99 at %.0f req/s, half the max (%d subscribers, %d errors)", kind, r.PerSec, large.subscribers, sat.Errors+r.Errors),
			Value: ms(r.P99), Unit: "ms", Target: "<= 10 ms", Pass: b.result(r.P99 <= 10*time.Millisecond && r.Errors+sat.Errors == 0)})
	}

	growth := func(metric string, smallP50, largeP50 time.Duration, rows string) {
		ratio := float64(largeP50) / float64(max(smallP50, time.Microsecond))
		b.rep.add(row{Scenario: "5 growth", Metric: fmt.Sprintf("%s p50 %s: %.2f → %.2f ms", metric, rows, ms(smallP50), ms(largeP50)),
			Value: ratio, Unit: "x", Target: "<= 1.5x", Pass: b.result(ratio <= 1.5)})
	}
	growth("feed", smallFig.feed.P50, largeFig.feed.P50, fmt.Sprintf("%d vs %d messages", small.messages, large.messages))

	// Scenario 5 for search compares subscriber counts, so grow the large
	// dataset's subscribers to the large row count first.
	grown := large
	if b.sz.largeRows > large.subscribers {
		if grown, err = b.seed(ctx, large.path, large.subscribers, b.sz.largeRows, 0); err != nil {
			return err
		}
		grown.messages, grown.inboxes = large.messages, large.inboxes
		if largeFig, err = b.measureReads(ctx, grown); err != nil {
			return err
		}
	}
	// Search latency is compared as scenario 4 judges it: paced at half of
	// each dataset's own maximum rate.
	for _, kind := range searchKinds {
		growth("search "+kind, smallFig.search[kind].P50, largeFig.search[kind].P50, fmt.Sprintf("%d vs %d subscribers", small.subscribers, grown.subscribers))
	}
	return nil
}

// seed writes a progress line and seeds the dataset.
func (b *bench) seed(ctx context.Context, path string, from, nSubscribers, nMessages int) (*dataset, error) {
	b.logf("seeding %s: subscribers %d to %d, %d messages", filepath.Base(path), from, nSubscribers, nMessages)
	return seed(ctx, path, from, nSubscribers, nMessages)
}

// measureReads starts the server on ds and measures the feed and each kind
// of search.
//
// Reads are measured warm, as a server under this load runs: one serving
// thousands of reads a second touches every page of its data within a
// minute. The VM this was written on pages out file pages left idle for
// about a minute (DAMON reclaim: 2.6 GB read into the page cache were down
// to 0.2 GB 75 s later), so a dataset seeded minutes before would be read
// partly from disk, on the large side of scenario 5 more than the small.
// So the database file is read into the page cache before the server
// starts, and every inbox's feed is read once before timing.
func (b *bench) measureReads(ctx context.Context, ds *dataset) (readFigures, error) {
	b.logf("reads on %d subscribers, %d messages: warming", ds.subscribers, ds.messages)
	// PostgreSQL keeps its own cache; the feeds read below warm it.
	if b.store != storePostgres {
		if err := readFile(ds.path); err != nil {
			return readFigures{}, err
		}
	}
	srv, err := startServer(ctx, b.bin, ds.path)
	if err != nil {
		return readFigures{}, err
	}
	defer srv.stop()
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	n := b.sz.readRequests
	rng := func(i int) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), 7)) }
	sub := func(i int) int { return rng(i).IntN(ds.subscribers) }
	inbox := func(i int) int { return rng(i).IntN(ds.inboxes) }
	feedAt := func(inbox int) request {
		return request{method: "GET", path: fmt.Sprintf("/v1/subscribers/s%07d/notifications/feed?limit=20", inbox), want: 200}
	}
	feed := func(i int) request { return feedAt(inbox(i)) }
	c.run(ctx, b.sz.clients, ds.inboxes, feedAt)

	fig := readFigures{saturated: map[string]loadResult{}, search: map[string]loadResult{}}
	b.logf("feed: %d requests", n)
	cpu0 := srv.cpu()
	fig.feed = c.run(ctx, b.sz.clients, n, feed)
	fig.feedCPU = srv.perRequest(cpu0, fig.feed)
	half := fig.feed.PerSec / 2
	b.logf("feed at %.0f req/s", half)
	fig.feedPaced = c.paced(ctx, half, b.pacedCount(half, n/2), func(i int) request { return feed(i + n) })
	if ds.messages == b.sz.messages && !b.memoryDone {
		b.memoryDone = true
		b.memoryRows(srv, "3 feed read", fmt.Sprintf("at the end of scenario 3 (%d messages)", ds.messages))
	}
	queries := map[string]func(i int) string{
		"subscriberId":    func(i int) string { return fmt.Sprintf("subscriberId=s%07d", sub(i)) },
		"email substring": func(i int) string { return fmt.Sprintf("email=user%06d", sub(i)/10) },
		// "Given123 F" matches one subscriber's full name, where "Given123"
		// alone would also match Given1230…Given1239999.
		"name substring": func(i int) string { return "name=" + url.QueryEscape(fmt.Sprintf("Given%d F", sub(i))) },
	}
	for kind, q := range queries {
		search := func(i int) request {
			return request{method: "GET", path: "/v2/subscribers?limit=10&" + q(i), want: 200}
		}
		b.logf("search by %s", kind)
		sat := c.run(ctx, b.sz.clients, n, search)
		fig.saturated[kind] = sat
		half := sat.PerSec / 2
		fig.search[kind] = c.paced(ctx, half, b.pacedCount(half, n/2), func(i int) request { return search(i + n) })
	}
	const paging = "cursor paging 1,000 results"
	b.logf("search by %s", paging)
	sat, err := b.pageThrough(ctx, c, ds, 0)
	if err != nil {
		return fig, err
	}
	fig.saturated[paging] = sat
	// Each walk is ten pages, one after another, so walks start at a tenth
	// of the page rate.
	if fig.search[paging], err = b.pageThrough(ctx, c, ds, time.Duration(float64(time.Second)*10/(sat.PerSec/2))); err != nil {
		return fig, err
	}
	return fig, nil
}

// pacedCount is how many requests a search's paced run at rate sends: at
// least least, and enough to last searchFor, as long as scenario 2's run.
// At half of a search's maximum rate, least alone lasts a second or two,
// and the p99 of so short a run is set by whichever single stall of the
// shared machine falls into it: one of 20 ms delays a hundred of 10,000
// requests.
func (b *bench) pacedCount(rate float64, least int) int {
	return max(least, int(rate*b.sz.searchFor.Seconds()))
}

// pageThrough follows `next` through the 1,000 subscribers of one lastName
// group, 100 per page, timing every page. With pace 0, walks run from as
// many clients at once as the run has (the maximum rate); otherwise walk w
// starts at w×pace, its first page timed from then (see paced).
func (b *bench) pageThrough(ctx context.Context, c *loadClient, ds *dataset, pace time.Duration) (loadResult, error) {
	groups := max(ds.subscribers/1000, 1)
	walks := max(b.sz.readRequests/10, 20)
	if pace > 0 {
		walks /= 2
	}
	var lat []time.Duration
	errs := 0
	results := make(chan []time.Duration, walks)
	failures := make(chan error, walks)
	sem := make(chan struct{}, b.sz.clients)
	if pace > 0 {
		sem = make(chan struct{}, 256)
	}
	start := time.Now()
	for w := range walks {
		due := time.Now()
		if pace > 0 {
			due = start.Add(time.Duration(w) * pace)
			time.Sleep(time.Until(due))
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			path := fmt.Sprintf("/v2/subscribers?limit=100&name=%s", url.QueryEscape(fmt.Sprintf("Family%04d", w%groups)))
			var mine []time.Duration
			seen := 0
			for path != "" {
				t0 := time.Now()
				if len(mine) == 0 {
					t0 = due
				}
				status, body, err := c.do(ctx, request{method: "GET", path: path})
				mine = append(mine, time.Since(t0))
				if err != nil || status != 200 {
					failures <- fmt.Errorf("page: %d %v", status, err)
					return
				}
				var page struct {
					Data []json.RawMessage `json:"data"`
					Next *string           `json:"next"`
				}
				if err := json.Unmarshal(body, &page); err != nil {
					failures <- err
					return
				}
				seen += len(page.Data)
				path = ""
				if page.Next != nil {
					path = fmt.Sprintf("/v2/subscribers?limit=100&name=%s&after=%s", url.QueryEscape(fmt.Sprintf("Family%04d", w%groups)), url.QueryEscape(*page.Next))
				}
			}
			if want := min(1000, ds.subscribers); seen != want {
				failures <- fmt.Errorf("paged through %d subscribers, want %d", seen, want)
				return
			}
			results <- mine
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(results)
	close(failures)
	for r := range results {
		lat = append(lat, r...)
	}
	for range failures {
		errs++
	}
	return summarise(lat, errs, time.Since(start)), nil
}

// readFile reads the file at path through, so its pages are in the page cache.
func readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

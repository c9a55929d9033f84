package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestMultiInstance runs three Herald processes, real binaries, on one
// PostgreSQL database, as several instances behind a load balancer do:
// what one instance
// writes the others must see, what one claims the others must not run, and
// what a killed one held must be run again once, by another.
func TestMultiInstance(t *testing.T) {
	if !sqldbtest.OnPostgres() {
		t.Skip("needs TEST_DATABASE_URL: three Herald processes share one PostgreSQL database")
	}
	if testing.Short() {
		t.Skip("-short: builds Herald and sends 10,000 triggers through three processes")
	}
	began := time.Now()
	bin := buildHeraldBinary(t, t.TempDir())
	t.Logf("built herald in %s", time.Since(began).Round(time.Millisecond))

	c := newHeraldCluster(t, bin, sqldbtest.NewPostgresURL(t), 3)
	hook := newChatReceiver(t, 20*time.Millisecond, c.everyPid)
	// The first start bootstraps the organization and its keys; the other
	// two start together, as a scaled-out deployment does.
	if err := c.start(0); err != nil {
		t.Fatal(err)
	}
	startErrs := make(chan error, 2)
	for _, node := range []int{1, 2} {
		go func() { startErrs <- c.start(node) }()
	}
	for range 2 {
		if err := <-startErrs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("three instances up in %s", time.Since(began).Round(time.Millisecond))

	c.must(t, 0, 201, "POST", "/v1/integrations", `{"providerId":"chat-webhook","channel":"chat","active":true,"identifier":"mi-hook",
		"credentials":{"webhookUrl":"`+hook.URL+`/chat"}}`)

	// Subtests share the cluster; each makes its own workflow and
	// subscribers, and the one that kills an instance runs last.
	t.Run("DeactivatedWorkflowRefusedElsewhere", func(t *testing.T) { testDeactivatedElsewhere(t, c) })
	t.Run("OneDigestMaster", func(t *testing.T) { testOneDigestMaster(t, c) })
	t.Run("IdempotencyKeyRunsOnce", func(t *testing.T) { testIdempotencyAcrossInstances(t, c) })
	t.Run("KillMidRun", func(t *testing.T) { testKillMidRun(t, c, hook) })

	for msg, n := range c.errorLines() {
		t.Logf("the instances logged %d× %s", n, msg)
	}
	t.Logf("whole test: %s", time.Since(began).Round(time.Second))
}

// triggerAnswer is POST /v1/events/trigger's body.
type triggerAnswer struct {
	Status        string `json:"status"`
	TransactionID string `json:"transactionId"`
}

func decodeTrigger(b []byte) triggerAnswer {
	var a triggerAnswer
	json.Unmarshal(b, &a)
	return a
}

// testDeactivatedElsewhere: a workflow deactivated through one instance is
// refused by the others within 1 s, and taken again within 1 s once
// reactivated, though each had it cached from a trigger just before.
func testDeactivatedElsewhere(t *testing.T, c *heraldCluster) {
	is := is.New(t)
	c.must(t, 0, 201, "POST", "/v2/workflows", `{"name":"MI toggle","workflowId":"mi-toggle","active":true,
		"steps":[{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	c.must(t, 0, 201, "POST", "/v1/subscribers", `{"subscriberId":"mi-toggle-sub"}`)
	trigger := func(node int) string {
		status, b := c.do(node, "POST", "/v1/events/trigger", `{"name":"mi-toggle","to":"mi-toggle-sub"}`)
		if status != 201 {
			return fmt.Sprintf("HTTP %d %s", status, b)
		}
		return decodeTrigger(b).Status
	}
	for node := range 3 {
		is.Equal(trigger(node), "processed") // every instance runs the active workflow (and caches it)
	}

	for _, step := range []struct {
		active bool
		via    int
		want   string
	}{
		{false, 0, "trigger_not_active"},
		{true, 2, "processed"},
	} {
		c.must(t, step.via, 200, "PATCH", "/v2/workflows/mi-toggle", fmt.Sprintf(`{"active":%v}`, step.active))
		changed := time.Now()
		seen := map[int]time.Duration{}
		last := map[int]string{}
		waitFor(context.Background(), 3*time.Second, func() bool {
			for node := range 3 {
				if _, ok := seen[node]; ok || node == step.via {
					continue
				}
				if last[node] = trigger(node); last[node] == step.want {
					seen[node] = time.Since(changed)
				}
			}
			return len(seen) == 2
		})
		for node := range 3 {
			if node == step.via {
				continue
			}
			took, ok := seen[node]
			if !ok {
				t.Errorf("active=%v through node %d: node %d still answers %q after 3 s, want %q", step.active, step.via, node, last[node], step.want)
				continue
			}
			t.Logf("active=%v through node %d: node %d answered %q after %s", step.active, step.via, node, step.want, took.Round(time.Millisecond))
			if took > time.Second {
				t.Errorf("active=%v through node %d: node %d took %s to see it, want within 1 s", step.active, step.via, node, took.Round(time.Millisecond))
			}
		}
	}
}

// notificationJobs is the part of GET /v1/notifications the test reads.
type notificationJobs struct {
	ID            string `json:"_id"`
	TransactionID string `json:"transactionId"`
	Jobs          []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"jobs"`
}

// notificationsOfTransactions reads the notifications of txs through node,
// 50 transactionIds a request, and returns them by transactionId.
func notificationsOfTransactions(t *testing.T, c *heraldCluster, node int, txs []string) (map[string][]notificationJobs, error) {
	t.Helper()
	out := map[string][]notificationJobs{}
	for start := 0; start < len(txs); start += 50 {
		q := url.Values{"limit": {"50"}}
		for _, tx := range txs[start:min(start+50, len(txs))] {
			q.Add("transactionId", tx)
		}
		status, b := c.do(node, "GET", "/v1/notifications?"+q.Encode(), "")
		if status != 200 {
			return nil, fmt.Errorf("GET /v1/notifications: %d %s", status, b)
		}
		var page struct {
			Data []notificationJobs `json:"data"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, err
		}
		for _, n := range page.Data {
			out[n.TransactionID] = append(out[n.TransactionID], n)
		}
	}
	return out, nil
}

// settled reports whether every job of n has finished, one way or another.
func settled(n notificationJobs) bool {
	for _, j := range n.Jobs {
		switch j.Status {
		case "completed", "merged", "skipped", "canceled", "failed":
		default:
			return false
		}
	}
	return true
}

// testOneDigestMaster: 30 events for one subscriber's digest, sent at once
// through the three instances, make one master that collects the other 29
// and delivers one in-app message.
func testOneDigestMaster(t *testing.T, c *heraldCluster) {
	is := is.New(t)
	c.must(t, 0, 201, "POST", "/v2/workflows", `{"name":"MI digest","workflowId":"mi-digest","active":true,
		"steps":[{"name":"Bundle","stepId":"bundle","type":"digest","controlValues":{"type":"regular","amount":5,"unit":"seconds"}},
		{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"Digest"}}]}`)
	c.must(t, 0, 201, "POST", "/v1/subscribers", `{"subscriberId":"mi-digest-sub"}`)
	const events = 30
	var (
		txs     []string
		wg      sync.WaitGroup
		ready   = make(chan struct{})
		refused atomic.Int64
	)
	for i := range events {
		tx := fmt.Sprintf("mi-digest-%02d", i)
		txs = append(txs, tx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			status, b := c.do(i%3, "POST", "/v1/events/trigger", `{"name":"mi-digest","to":"mi-digest-sub","transactionId":"`+tx+`"}`)
			if status != 201 {
				refused.Add(1)
				t.Logf("digest trigger %s through node %d: %d %s", tx, i%3, status, b)
			}
		}()
	}
	close(ready)
	wg.Wait()
	is.Equal(refused.Load(), int64(0)) // every event accepted

	var byTx map[string][]notificationJobs
	var readErr error
	done := waitFor(context.Background(), 30*time.Second, func() bool {
		byTx, readErr = notificationsOfTransactions(t, c, 1, txs)
		if readErr != nil || len(byTx) < events {
			return false
		}
		for _, ns := range byTx {
			if !settled(ns[0]) {
				return false
			}
		}
		return true
	})
	is.NoErr(readErr) // notifications listed
	is.True(done)     // every digest job settled within 30 s (the window is 5 s)
	statuses := map[string]int{}
	for _, ns := range byTx {
		for _, j := range ns[0].Jobs {
			if j.Type == "digest" {
				statuses[j.Status]++
			}
		}
	}
	t.Logf("digest jobs by status: %v", statuses)
	is.Equal(statuses["completed"], 1)     // one master, which ran
	is.Equal(statuses["merged"], events-1) // every other event merged into it

	status, b := c.do(2, "GET", "/v1/subscribers/mi-digest-sub/notifications/feed", "")
	is.Equal(status, 200) // the subscriber's feed
	var feed struct {
		TotalCount int `json:"totalCount"`
	}
	is.NoErr(json.Unmarshal(b, &feed))
	is.Equal(feed.TotalCount, 1) // one in-app message for the whole digest
}

// testIdempotencyAcrossInstances: a request sent with one Idempotency-Key to
// the three instances at once runs once; the others replay its answer or
// are told it is still running. Ten keys, each raced anew.
func testIdempotencyAcrossInstances(t *testing.T, c *heraldCluster) {
	is := is.New(t)
	c.must(t, 0, 201, "POST", "/v2/workflows", `{"name":"MI once","workflowId":"mi-once","active":true,
		"steps":[{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"Once"}}]}`)
	for round := range 10 {
		sub := fmt.Sprintf("mi-once-%d", round)
		c.must(t, 0, 201, "POST", "/v1/subscribers", `{"subscriberId":"`+sub+`"}`)
		type answer struct {
			status int
			replay bool
			tx     string
		}
		answers := make([]answer, 3)
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for node := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				// No transactionId in the body: a second run would make a
				// second notification instead of being refused as a reuse.
				status, h, b := c.call(node, "POST", "/v1/events/trigger", `{"name":"mi-once","to":"`+sub+`"}`,
					"Idempotency-Key", fmt.Sprintf("mi-key-%d", round))
				answers[node] = answer{status: status, replay: h.Get("Idempotency-Replay") == "true", tx: decodeTrigger(b).TransactionID}
			}()
		}
		close(ready)
		wg.Wait()
		ran := 0
		var txs []string
		for node, a := range answers {
			if a.status != 201 && a.status != 409 {
				t.Errorf("key %d, node %d: HTTP %d, want 201 (run or replayed) or 409 (running)", round, node, a.status)
			}
			if a.status == 201 {
				txs = append(txs, a.tx)
				if !a.replay {
					ran++
				}
			}
		}
		if ran > 1 {
			t.Errorf("key %d: %d instances ran the request, want 1 (answers %+v)", round, ran, answers)
		}
		for _, tx := range txs[min(1, len(txs)):] {
			if tx != txs[0] {
				t.Errorf("key %d: answers name transactions %v, want one", round, txs)
				break
			}
		}
	}
	// Each run delivers one in-app message: once every key's subscriber has
	// one, none may have two.
	feedTotal := func(sub string) int {
		status, b := c.do(0, "GET", "/v1/subscribers/"+sub+"/notifications/feed", "")
		var feed struct {
			TotalCount int `json:"totalCount"`
		}
		if status != 200 || json.Unmarshal(b, &feed) != nil {
			t.Logf("feed of %s: %d %s", sub, status, b)
			return -1
		}
		return feed.TotalCount
	}
	is.True(waitFor(context.Background(), 15*time.Second, func() bool {
		for round := range 10 {
			if feedTotal(fmt.Sprintf("mi-once-%d", round)) < 1 {
				return false
			}
		}
		return true
	})) // every key's request ran and delivered
	for round := range 10 {
		if n := feedTotal(fmt.Sprintf("mi-once-%d", round)); n != 1 {
			t.Errorf("key %d: %d in-app messages, want 1", round, n)
		}
	}
}

// testKillMidRun sends 10,000 triggers of an in-app-then-chat workflow
// round-robin to the three instances from eight clients, kills one with
// SIGKILL after 4,000 and restarts it 300 triggers later. Every accepted
// trigger must have its notification and exactly one in-app message; a chat
// message may be sent twice only when the killed instance was sending it.
func testKillMidRun(t *testing.T, c *heraldCluster, hook *chatReceiver) {
	const (
		triggers    = 10_000
		clients     = 8
		subscribers = 30
		victim      = 1
		killAt      = 4_000
		restartAt   = killAt + 300
	)
	c.must(t, 0, 201, "POST", "/v2/workflows", `{"name":"MI run","workflowId":"mi-run","active":true,
		"steps":[{"name":"Inbox","stepId":"inbox","type":"in_app","controlValues":{"body":"{{payload.tx}}"}},
		{"name":"Chat","stepId":"chat","type":"chat","controlValues":{"body":"{{payload.tx}}"}}]}`)
	for i := range subscribers {
		c.must(t, i%3, 201, "POST", "/v1/subscribers", fmt.Sprintf(`{"subscriberId":"mi-run-%d"}`, i))
	}

	txs := make([]string, triggers)
	for i := range txs {
		txs[i] = fmt.Sprintf("mi-run-%05d", i)
	}
	accepted := make([]bool, triggers)
	var (
		next, sent  atomic.Int64
		mu          sync.Mutex
		refusedBy   = map[string]int{} // "node n: HTTP s" → count, other than 201 and a dead node
		firstRefuse string
		wg          sync.WaitGroup
	)
	killed := struct {
		pid             int
		at, restartedAt time.Time
		restartErr      error
		done            chan struct{}
	}{done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(killed.done)
		for sent.Load() < killAt {
			time.Sleep(2 * time.Millisecond)
		}
		killed.pid = c.pid(victim)
		killed.at = time.Now()
		c.kill(victim)
		for sent.Load() < restartAt {
			time.Sleep(2 * time.Millisecond)
		}
		killed.restartErr = c.start(victim)
		killed.restartedAt = time.Now()
	}()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= triggers {
					return
				}
				node := i % 3
				status, b := c.do(node, "POST", "/v1/events/trigger", fmt.Sprintf(
					`{"name":"mi-run","to":"mi-run-%d","transactionId":"%s","payload":{"tx":"%s"}}`, i%subscribers, txs[i], txs[i]))
				answer := decodeTrigger(b).Status
				switch {
				case status == 201 && answer == "processed":
					accepted[i] = true
				case status == 0: // the killed node, or a request it died holding
				default:
					mu.Lock()
					refusedBy[fmt.Sprintf("node %d: HTTP %d %s", node, status, answer)]++
					if firstRefuse == "" {
						firstRefuse = fmt.Sprintf("node %d: HTTP %d %s", node, status, b)
					}
					mu.Unlock()
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	sending := time.Since(start)
	<-killed.done
	if killed.restartErr != nil {
		t.Fatalf("restart after SIGKILL: %v", killed.restartErr)
	}
	var acceptedTxs []string
	for i, ok := range accepted {
		if ok {
			acceptedTxs = append(acceptedTxs, txs[i])
		}
	}
	t.Logf("sent %d triggers in %s (%.0f/s): %d accepted; node %d (pid %d) killed at %s, back at %s",
		triggers, sending.Round(time.Millisecond), float64(triggers)/sending.Seconds(), len(acceptedTxs),
		victim, killed.pid, killed.at.Sub(start).Round(time.Millisecond), killed.restartedAt.Sub(start).Round(time.Millisecond))
	if len(refusedBy) > 0 {
		t.Errorf("live instances refused triggers: %v; the first: %s", refusedBy, firstRefuse)
	}
	if len(acceptedTxs) < triggers*9/10 {
		t.Fatalf("only %d of %d triggers accepted", len(acceptedTxs), triggers)
	}

	// Delivered: every accepted trigger's chat reached the receiver, and
	// every one's jobs settled — a job the killed instance held settles
	// only once another instance has taken it over.
	waitStart := time.Now()
	progress, progressAt := -1, time.Now()
	delivered := waitFor(context.Background(), 150*time.Second, func() bool {
		n := hook.distinct(acceptedTxs)
		if n != progress {
			progress, progressAt = n, time.Now()
		}
		return n == len(acceptedTxs) || time.Since(progressAt) > 45*time.Second
	}) && progress == len(acceptedTxs)
	if !delivered {
		t.Errorf("chat reached the receiver for %d of %d accepted triggers, stalled for 45 s", progress, len(acceptedTxs))
	}
	pending := acceptedTxs
	// A stalled delivery is read once, not waited on again.
	settleFor := 60 * time.Second
	if !delivered {
		settleFor = 0
	}
	settledAll := waitFor(context.Background(), settleFor, func() bool {
		got, err := notificationsOfTransactions(t, c, 0, pending)
		if err != nil {
			t.Logf("reading notifications: %v", err)
			return false
		}
		var still []string
		for _, tx := range pending {
			if ns := got[tx]; len(ns) == 0 || !settled(ns[0]) {
				still = append(still, tx)
			}
		}
		pending = still
		return len(pending) == 0
	})
	t.Logf("delivered and settled %s after the last trigger", time.Since(waitStart).Round(time.Millisecond))
	if !settledAll {
		t.Errorf("%d accepted triggers still have unsettled jobs, e.g. %v", len(pending), pending[:min(5, len(pending))])
	}

	// Every trigger sent, accepted or not: a trigger whose answer was lost
	// with the killed instance may have been committed, but never twice.
	byTx, err := notificationsOfTransactions(t, c, 2, txs)
	if err != nil {
		t.Fatalf("list notifications: %v", err)
	}
	missing, doubled, notCompleted, unansweredButStored := 0, 0, map[string]int{}, 0
	for i, tx := range txs {
		ns := byTx[tx]
		switch {
		case len(ns) > 1:
			doubled++
		case len(ns) == 0 && accepted[i]:
			missing++
		case len(ns) == 1 && !accepted[i]:
			unansweredButStored++
		}
		if accepted[i] && len(ns) > 0 {
			for _, j := range ns[0].Jobs {
				if j.Status != "completed" {
					notCompleted[j.Type+":"+j.Status]++
				}
			}
		}
	}
	t.Logf("notifications: %d accepted triggers without one, %d transactions with more than one, %d unanswered triggers stored all the same",
		missing, doubled, unansweredButStored)
	if missing > 0 || doubled > 0 {
		t.Errorf("every accepted trigger must have exactly one notification: %d missing, %d doubled", missing, doubled)
	}
	if len(notCompleted) > 0 {
		t.Errorf("jobs of accepted triggers not completed, by type and status: %v", notCompleted)
	}

	inApp, err := inAppMessagesByTransaction(c, 1)
	if err != nil {
		t.Errorf("list in-app messages: %v", err)
	} else {
		missing, doubled := 0, 0
		for i, tx := range txs {
			switch n := inApp[tx]; {
			case n > 1:
				doubled++
			case n == 0 && accepted[i]:
				missing++
			}
		}
		t.Logf("in-app messages: %d accepted triggers without one, %d transactions with more than one", missing, doubled)
		if missing > 0 || doubled > 0 {
			t.Errorf("every accepted trigger must have exactly one in-app message: %d missing, %d doubled", missing, doubled)
		}
	}

	// Chat: a send repeated must have been in flight on the killed
	// instance: every send but the last from that process. Its sends are
	// told by the connection they came over, not by when they arrived: a
	// request the process wrote before SIGKILL is still delivered, and
	// can reach the receiver after the kill was recorded.
	if restarted := c.pid(victim); restarted == killed.pid {
		t.Fatalf("the restarted instance has the killed one's pid %d: its sends cannot be told apart", restarted)
	}
	sends := hook.received()
	repeated, fromVictim, unexplained, unattributed := 0, 0, []string{}, 0
	for _, tx := range txs {
		s := sends[tx]
		for _, x := range s {
			if x.pid == killed.pid {
				fromVictim++
			}
			if x.pid == 0 {
				unattributed++
			}
		}
		if len(s) < 2 {
			continue
		}
		repeated++
		sort.Slice(s, func(a, b int) bool { return s[a].at.Before(s[b].at) })
		for _, x := range s[:len(s)-1] {
			if x.pid != killed.pid {
				unexplained = append(unexplained, fmt.Sprintf("%s: %d sends, pids %v", tx, len(s), pidsOf(s)))
				break
			}
		}
	}
	t.Logf("chat: sends repeated for %d transactions, in flight on the killed instance (it posted %d chat messages in all); %d sends not attributed to a process",
		repeated, fromVictim, unattributed)
	if len(unexplained) > 0 {
		t.Errorf("%d chat messages sent more than once by instances that were not killed (e.g. %v)", len(unexplained), unexplained[:min(5, len(unexplained))])
	}
}

func pidsOf(s []chatSend) []int {
	var out []int
	for _, x := range s {
		out = append(out, x.pid)
	}
	return out
}

// inAppMessagesByTransaction counts the in-app messages of the environment
// by transactionId, a thousand a page.
func inAppMessagesByTransaction(c *heraldCluster, node int) (map[string]int, error) {
	out := map[string]int{}
	for page := 0; ; page++ {
		status, b := c.do(node, "GET", fmt.Sprintf("/v1/messages?channel=in_app&limit=1000&page=%d", page), "")
		if status != 200 {
			return nil, fmt.Errorf("GET /v1/messages page %d: %d %s", page, status, strings.TrimSpace(string(b)))
		}
		var p struct {
			HasMore bool `json:"hasMore"`
			Data    []struct {
				TransactionID string `json:"transactionId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		for _, m := range p.Data {
			out[m.TransactionID]++
		}
		if !p.HasMore || len(p.Data) == 0 {
			return out, nil
		}
	}
}

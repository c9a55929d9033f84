package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// benchCritical is benchWorkflow made critical: subscriber preferences do
// not apply to it, so its deliveries read none.
var benchCritical = strings.Replace(strings.Replace(benchWorkflow, `"bench-inbox"`, `"bench-critical"`, 1),
	`"active":true,`, `"active":true,"preferences":{"workflow":{"all":{"enabled":true,"readOnly":true}}},`, 1)

// fanout runs scenario 8: the preference check on scenario 1's path, and a
// trigger to a topic of every subscriber against a broadcast to the same
// subscribers, each on a fresh database.
func (b *bench) fanout(ctx context.Context) error {
	if err := b.preferenceCheck(ctx); err != nil {
		return err
	}
	return b.topicFanOut(ctx)
}

// serverWith starts the server on a fresh database file in the run's
// directory, with the given workflows created, and a load client for it.
func (b *bench) serverWith(ctx context.Context, file string, workflows ...string) (*server, *loadClient, error) {
	db, err := b.database(ctx, file)
	if err != nil {
		return nil, nil, err
	}
	return b.serverOn(ctx, db, nil, workflows...)
}

// serverOn starts the server on the database db with the HERALD_*
// variables env, with the given workflows created, and a load client for it.
func (b *bench) serverOn(ctx context.Context, db string, env []string, workflows ...string) (*server, *loadClient, error) {
	srv, err := startServer(ctx, b.bin, db, env...)
	if err != nil {
		return nil, nil, err
	}
	c := newLoadClient(srv.base, benchKey, b.sz.clients)
	for _, wf := range workflows {
		if status, body, err := c.do(ctx, request{method: "POST", path: "/v2/workflows", body: []byte(wf)}); err != nil || status != 201 {
			srv.stop()
			return nil, nil, fmt.Errorf("create workflow: %d %s %v", status, body, err)
		}
	}
	return srv, c, nil
}

// preferenceCheck times triggers like scenario 1's (a tenth as many, twice)
// for recipients who set preferences (a global one and one for the
// workflow, the two rows a delivery reads), against the same triggers of a critical workflow, whose
// deliveries read no preferences, on the same server. A first in-app step
// runs in its trigger, so the check's cost is in the trigger's CPU.
func (b *bench) preferenceCheck(ctx context.Context) error {
	srv, c, err := b.serverWith(ctx, "preferences", benchWorkflow, benchCritical)
	if err != nil {
		return err
	}
	defer srv.stop()
	steps := []func(i int) request{
		func(i int) request {
			return request{method: "POST", path: "/v1/subscribers", want: 201, body: fmt.Appendf(nil, `{"subscriberId":"r%d"}`, i)}
		},
		func(i int) request {
			return request{method: "PATCH", path: fmt.Sprintf("/v2/subscribers/r%d/preferences", i), want: 200, body: []byte(`{"channels":{"sms":false}}`)}
		},
		func(i int) request {
			return request{method: "PATCH", path: fmt.Sprintf("/v2/subscribers/r%d/preferences", i), want: 200,
				body: []byte(`{"workflowId":"bench-inbox","channels":{"chat":false}}`)}
		},
	}
	for _, step := range steps {
		if res := c.run(ctx, b.sz.clients, b.sz.recipients, step); res.Errors > 0 {
			return fmt.Errorf("set up recipients: %s", res)
		}
	}
	n := b.sz.triggers / 10
	delivered, i := 0, 0
	cpu, err := abba(func(k int) (float64, error) {
		wf := []string{"bench-critical", "bench-inbox"}[k]
		b.logf("scenario 8: %d triggers of %s", n, wf)
		cpu0 := srv.cpu()
		sent := c.run(ctx, b.sz.clients, n, func(j int) request {
			return request{method: "POST", path: "/v1/events/trigger", want: 201,
				body: fmt.Appendf(nil, `{"name":"%s","to":"r%d","payload":{"n":%d}}`, wf, (i+j)%b.sz.recipients, i+j)}
		})
		i += n
		if sent.Errors > 0 {
			return 0, fmt.Errorf("trigger %s: %s", wf, sent)
		}
		got, _, err := waitDelivered(ctx, c, n, delivered)
		delivered += got
		return srv.perRequest(cpu0, sent), err
	})
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "8 preferences", Metric: fmt.Sprintf("server CPU per trigger, no preference read (critical workflow, 2x%d triggers)", n),
		Value: cpu[0], Unit: "us", Target: "reported"})
	b.rep.add(row{Scenario: "8 preferences", Metric: "server CPU per trigger, preferences read (global and per-workflow rows)",
		Value: cpu[1], Unit: "us", Floor: cpu[0], Target: "<= 1.10 of no read", Pass: b.result(cpu[1] <= 1.10*cpu[0])})
	return nil
}

// topicFanOut creates sz.fanout subscribers, all in one topic, and times
// broadcasts and triggers to the topic, each from its request to its answer
// (every notification written), each started once the deliveries of the
// one before have finished.
func (b *bench) topicFanOut(ctx context.Context) error {
	srv, c, err := b.serverWith(ctx, "fanout", benchWorkflow)
	if err != nil {
		return err
	}
	defer srv.stop()
	n := b.sz.fanout
	b.logf("scenario 8: %d subscribers in one topic", n)
	if res := c.run(ctx, b.sz.clients, n, func(i int) request {
		return request{method: "POST", path: "/v1/subscribers", want: 201, body: fmt.Appendf(nil, `{"subscriberId":"f%07d"}`, i)}
	}); res.Errors > 0 {
		return fmt.Errorf("create subscribers: %s", res)
	}
	if res := c.run(ctx, b.sz.clients, n/100, func(i int) request {
		ids := make([]string, 100)
		for k := range ids {
			ids[k] = fmt.Sprintf(`"f%07d"`, i*100+k)
		}
		return request{method: "POST", path: "/v1/topics/everyone/subscribers", want: 200,
			body: []byte(`{"subscribers":[` + strings.Join(ids, ",") + `]}`)}
	}); res.Errors > 0 {
		return fmt.Errorf("fill topic: %s", res)
	}
	// Both answer once every batch is written, which takes longer than the
	// load client's 30 s timeout on a busy machine.
	slow := newLoadClient(srv.base, benchKey, 1)
	slow.http.Timeout = 10 * time.Minute
	delivered := 0
	rates, err := abba(func(k int) (float64, error) {
		r := []request{
			{method: "POST", path: "/v1/events/trigger/broadcast", want: 200, body: []byte(`{"name":"bench-inbox","payload":{"n":1}}`)},
			{method: "POST", path: "/v1/events/trigger", want: 201, body: []byte(`{"name":"bench-inbox","to":[{"type":"Topic","topicKey":"everyone"}],"payload":{"n":2}}`)},
		}[k]
		b.logf("scenario 8: %s to %d subscribers", r.path, n)
		start := time.Now()
		status, body, err := slow.do(ctx, r)
		if err != nil || status != r.want {
			return 0, fmt.Errorf("%s: %d %s %v", r.path, status, body, err)
		}
		rate := float64(n) / time.Since(start).Seconds()
		var ack struct {
			Error []string `json:"error"`
		}
		if json.Unmarshal(body, &ack) == nil && len(ack.Error) > 0 {
			return 0, fmt.Errorf("%s: %v", r.path, ack.Error)
		}
		// The next fan-out starts on an idle worker.
		got, _, err := waitDelivered(ctx, c, n, delivered)
		delivered += got
		return rate, err
	})
	if err != nil {
		return err
	}
	b.rep.add(row{Scenario: "8 topic fan-out", Metric: fmt.Sprintf("broadcast to %d subscribers, written/s (mean of 2)", n), Value: rates[0], Unit: "subscribers/s", Target: "reported"})
	b.rep.add(row{Scenario: "8 topic fan-out", Metric: fmt.Sprintf("trigger to a topic of the same %d, written/s (mean of 2)", n), Value: rates[1], Unit: "subscribers/s",
		Floor: rates[0], Target: ">= 0.9 of broadcast", Pass: b.result(rates[1] >= 0.9*rates[0])})
	return nil
}

// abba runs measure(0), measure(1), measure(1), measure(0) and returns the
// mean of each: the database grows and the machine drifts over a run, and
// in this order neither side runs on the fresher one.
func abba(measure func(k int) (float64, error)) ([2]float64, error) {
	var sum [2]float64
	for _, k := range []int{0, 1, 1, 0} {
		v, err := measure(k)
		if err != nil {
			return sum, err
		}
		sum[k] += v / 2
	}
	return sum, nil
}

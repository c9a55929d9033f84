package activity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestWindow_After(t *testing.T) {
	for _, tc := range []struct {
		name   string
		w      window
		want   time.Time
		errors bool
	}{
		{"OKSeconds", window{30, "seconds"}, t0.Add(30 * time.Second), false},
		{"OKMinute", window{1, "minute"}, t0.Add(time.Minute), false},
		{"OKHoursFraction", window{1.5, "hours"}, t0.Add(90 * time.Minute), false},
		{"OKDays", window{2, "days"}, t0.Add(48 * time.Hour), false},
		{"OKWeeks", window{1, "weeks"}, t0.Add(7 * 24 * time.Hour), false},
		{"ErrHugeDays", window{1e308, "days"}, t0, true},
		{"ErrHugeMonths", window{1e12, "months"}, t0, true},
		{"OKMonths", window{1, "months"}, time.Date(2026, 12, 21, 10, 0, 0, 0, time.UTC), false},
		{"ErrUnit", window{1, "fortnights"}, t0, true},
		{"ErrNegative", window{-1, "days"}, t0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := tc.w.after(t0)
			is.Equal(err != nil, tc.errors) // error only for bad windows
			is.Equal(got, tc.want)          // the moment the window ends
		})
	}
	t.Run("OKBefore", func(t *testing.T) {
		is := is.New(t)
		got, err := window{10, "minutes"}.before(t0)
		is.NoErr(err)
		is.Equal(got, t0.Add(-10*time.Minute)) // before mirrors after
	})
}

func TestDelayConfig_Until(t *testing.T) {
	payload := map[string]any{"at": "2026-12-01T08:00:00+01:00", "bad": 5}
	for _, tc := range []struct {
		name   string
		c      delayConfig
		want   time.Time
		errors bool
	}{
		{"OKRegular", delayConfig{Amount: 5, Unit: "minutes"}, t0.Add(5 * time.Minute), false},
		{"OKScheduled", delayConfig{Type: "scheduled", DelayPath: "at"}, time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC), false},
		{"OKTimed", delayConfig{Type: "timed", Cron: "0 12 * * *"}, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), false},
		{"ErrScheduledMissing", delayConfig{Type: "scheduled", DelayPath: "nope"}, t0, true},
		{"ErrScheduledNotDate", delayConfig{Type: "scheduled", DelayPath: "bad"}, t0, true},
		{"ErrNoUnit", delayConfig{Amount: 5}, t0, true},
		{"ErrType", delayConfig{Type: "sometimes", Amount: 1, Unit: "days"}, t0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := tc.c.until(t0, payload)
			is.Equal(err != nil, tc.errors) // error only for bad configurations
			is.Equal(got, tc.want)          // delay end
		})
	}
}

func TestDelayConfig_Metadata(t *testing.T) {
	is := is.New(t)
	is.Equal(delayConfig{Amount: 2, Unit: "hours"}.metadata(), map[string]any{"type": "regular", "amount": 2.0, "unit": "hours"}) // regular
	is.Equal(delayConfig{DelayPath: "at"}.metadata(), map[string]any{"type": "scheduled", "delayPath": "at"})                     // scheduled
	is.Equal(delayConfig{Type: "timed", Cron: "@daily"}.metadata(), map[string]any{"type": "timed", "cron": "@daily"})            // timed
}

func TestDigestConfig(t *testing.T) {
	is := is.New(t)
	var v2 digestConfig
	is.NoErr(json.Unmarshal([]byte(`{"type":"regular","amount":"5","unit":"minutes","lookBackWindow":{"amount":1,"unit":"minutes"}}`), &v2))
	w, ok := v2.backoff()
	is.True(ok)                       // lookBackWindow is a backoff
	is.Equal(w, window{1, "minutes"}) // of that window
	until, err := v2.until(t0)
	is.NoErr(err)
	is.Equal(until, t0.Add(5*time.Minute)) // a numeric string amount is read

	var v1 digestConfig
	is.NoErr(json.Unmarshal([]byte(`{"type":"backoff","amount":10,"unit":"minutes","backoffAmount":2,"backoffUnit":"minutes"}`), &v1))
	w, ok = v1.backoff()
	is.True(ok && w == window{2, "minutes"}) // older backoff fields

	var timed digestConfig
	is.NoErr(json.Unmarshal([]byte(`{"type":"timed","cron":"0 18 * * *"}`), &timed))
	until, err = timed.until(t0)
	is.NoErr(err)
	is.Equal(until, time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)) // timed digests fire at the cron time
	is.Equal(timed.metadata()["type"], "timed")                     // metadata says timed

	var plain digestConfig
	_, ok = plain.backoff()
	is.True(!ok) // a plain digest has no backoff
}

func TestKeyValue(t *testing.T) {
	payload := map[string]any{"order": map[string]any{"id": 7.0}, "name": "x", "list": []any{"a", "b"}}
	for _, tc := range []struct{ name, key, want string }{
		{"OKNoKey", "", ""},
		{"OKString", "name", "x"},
		{"OKNestedNumber", "order.id", "7"},
		{"OKTemplate", "{{ payload.order.id }}", "7"},
		{"OKIndex", "list.1", "b"},
		{"OKMissing", "nope", "No-Value-Provided"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(keyValue(payload, tc.key), tc.want) // digest value
		})
	}
}

func TestRetryDelay(t *testing.T) {
	is := is.New(t)
	is.Equal(retryDelay(10*time.Second, 1), 10*time.Second) // after the first attempt
	is.Equal(retryDelay(10*time.Second, 2), 20*time.Second) // doubles
	is.Equal(retryDelay(10*time.Second, 3), 40*time.Second) // and doubles again
}

func TestEvalSkip(t *testing.T) {
	data := map[string]any{
		"payload":    map[string]any{"n": 5.0, "tier": "gold", "tags": []any{"a", "b"}, "flag": true},
		"subscriber": map[string]any{"email": "ada@example.com", "data": map[string]any{"plan": "pro"}},
	}
	for _, tc := range []struct {
		name, cond string
		want       bool
		errors     bool
	}{
		{"OKNull", `null`, false, false},
		{"OKEmpty", `{}`, false, false},
		{"OKEqual", `{"==":[{"var":"payload.tier"},"gold"]}`, true, false},
		{"OKLooseNumber", `{"==":[{"var":"payload.n"},"5"]}`, true, false},
		{"OKStrict", `{"===":[{"var":"payload.n"},"5"]}`, false, false},
		{"OKGreater", `{">":[{"var":"payload.n"},3]}`, true, false},
		{"OKBetween", `{"<":[1,{"var":"payload.n"},10]}`, true, false},
		{"OKAnd", `{"and":[{"==":[{"var":"subscriber.data.plan"},"pro"]},{"!":{"var":"payload.flag"}}]}`, false, false},
		{"OKOr", `{"or":[{"==":[{"var":"payload.tier"},"silver"]},{"in":["b",{"var":"payload.tags"}]}]}`, true, false},
		{"OKSubstring", `{"in":["@example",{"var":"subscriber.email"}]}`, true, false},
		{"OKMissingDefault", `{"var":["payload.nope",true]}`, true, false},
		{"OKDoubleNot", `{"!!":{"var":"payload.nope"}}`, false, false},
		{"ErrOperator", `{"regex":["a","b"]}`, false, true},
		{"ErrJSON", `{`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := evalSkip(json.RawMessage(tc.cond), data)
			is.Equal(err != nil, tc.errors) // unsupported conditions are errors
			is.Equal(got, tc.want)          // skip decision
		})
	}
}

func TestPassFilters(t *testing.T) {
	data := map[string]any{
		"payload":    map[string]any{"amount": 150.0, "tags": []any{"x", "y"}, "name": "order 42"},
		"subscriber": map[string]any{"data": map[string]any{"plan": "pro"}, "locale": "en"},
	}
	group := func(value string, negated bool, children ...string) string {
		out := `[{"isNegated":` + map[bool]string{true: "true", false: "false"}[negated] + `,"type":"GROUP","value":"` + value + `","children":[`
		for i, c := range children {
			if i > 0 {
				out += ","
			}
			out += c
		}
		return out + `]}]`
	}
	part := func(on, field, op, value string) string {
		return `{"on":"` + on + `","field":"` + field + `","operator":"` + op + `","value":` + mustJSON(value) + `}`
	}
	for _, tc := range []struct {
		name, filters string
		want, errors  bool
	}{
		{"OKNone", `null`, true, false},
		{"OKEmptyGroup", group("AND", false), true, false},
		{"OKEqual", group("AND", false, part("subscriber", "data.plan", "EQUAL", "pro")), true, false},
		{"OKNotEqual", group("AND", false, part("subscriber", "locale", "NOT_EQUAL", "en")), false, false},
		{"OKLarger", group("AND", false, part("payload", "amount", "LARGER", "100")), true, false},
		{"OKSmallerEqual", group("AND", false, part("payload", "amount", "SMALLER_EQUAL", "150")), true, false},
		{"OKAndFails", group("AND", false, part("payload", "amount", "LARGER", "100"), part("subscriber", "locale", "EQUAL", "fr")), false, false},
		{"OKOrPasses", group("OR", false, part("payload", "amount", "LARGER", "1000"), part("subscriber", "locale", "EQUAL", "en")), true, false},
		{"OKNegated", group("AND", true, part("subscriber", "locale", "EQUAL", "en")), false, false},
		{"OKIn", group("AND", false, part("subscriber", "locale", "IN", "en, fr")), true, false},
		{"OKNotIn", group("AND", false, part("subscriber", "locale", "NOT_IN", `["de","fr"]`)), true, false},
		{"OKAnyIn", group("AND", false, part("payload", "tags", "ANY_IN", "y,z")), true, false},
		{"OKAllIn", group("AND", false, part("payload", "tags", "ALL_IN", "x,z")), false, false},
		{"OKLike", group("AND", false, part("payload", "name", "LIKE", "42")), true, false},
		{"OKNotLike", group("AND", false, part("payload", "name", "NOT_LIKE", "42")), false, false},
		{"OKBetween", group("AND", false, part("payload", "amount", "BETWEEN", "100,200")), true, false},
		{"OKNotBetween", group("AND", false, part("payload", "amount", "NOT_BETWEEN", "100,200")), false, false},
		{"OKMissingField", group("AND", false, part("payload", "nope", "EQUAL", "x")), false, false},
		{"ErrOperator", group("AND", false, part("payload", "amount", "ROUGHLY", "1")), false, true},
		{"ErrBetweenBounds", group("AND", false, part("payload", "amount", "BETWEEN", "1")), false, true},
		{"ErrShape", `{"not":"a list"}`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := passFilters(json.RawMessage(tc.filters), data)
			is.Equal(err != nil, tc.errors) // malformed filters are errors
			is.Equal(got, tc.want)          // filter decision
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestPreferences_ChannelEnabled(t *testing.T) {
	for _, tc := range []struct {
		name, prefs, channel string
		want, critical       bool
	}{
		{"OKNone", `{}`, "email", true, false},
		{"OKDefaultChannelOff", `{"default":{"all":{"enabled":true},"channels":{"email":{"enabled":false}}}}`, "email", false, false},
		{"OKOtherChannelOn", `{"default":{"all":{"enabled":true},"channels":{"email":{"enabled":false}}}}`, "sms", true, false},
		{"OKAllOff", `{"default":{"all":{"enabled":false}}}`, "in_app", false, false},
		{"OKUserWins", `{"default":{"channels":{"chat":{"enabled":false}}},"user":{"channels":{"chat":{"enabled":true}}}}`, "chat", true, false},
		{"OKUserNull", `{"default":{"channels":{"chat":{"enabled":false}}},"user":null}`, "chat", false, false},
		{"OKCritical", `{"default":{"all":{"enabled":true,"readOnly":true}}}`, "push", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var p preferencesDoc
			is.NoErr(json.Unmarshal([]byte(tc.prefs), &p))
			d := subscribers.Resolve(p.workflow(), subscribers.Subscribed{}).Channels[tc.channel]
			is.Equal(d.Enabled, tc.want)        // channel gate
			is.True(d.Rule.Detail() != "")      // a closed gate says which preferences closed it
			is.Equal(p.critical(), tc.critical) // critical is default.all.readOnly
		})
	}
}

// TestQueue_LeaseExpiry claims a job, lets its lease lapse, and shows that a
// second claim gets the same job and the first holder can no longer settle it.
// newQueue returns a store on a fresh database, with one trigger written
// whose in_app step is due: a queue with one job in it.
func newQueue(t *testing.T) (*Store, *platformtest.Clock, *plan) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	clock := platformtest.NewClock(t0)
	s := NewStore(sqldbtest.NewDB(t), clock.Now)
	tenant := platform.Tenant{OrganizationID: sqldb.NewID(), EnvironmentID: sqldb.NewID()}
	wf := &workflows.Workflow{ID: sqldb.NewID(), WorkflowID: "w", Active: true,
		Steps: []workflows.Step{{ID: sqldb.NewID(), StepID: "inbox", Type: "in_app"}, {ID: sqldb.NewID(), StepID: "mail", Type: "email"}}}
	p := &plan{tenant: tenant, transactionID: "tx", payload: json.RawMessage(`{}`), overrides: json.RawMessage(`{}`),
		wf: wf, template: json.RawMessage(`{}`), actor: json.RawMessage(`{}`), preferences: json.RawMessage(`{}`), chain: chainSteps(wf),
		recipients: []recipient{{id: sqldb.NewID(), subscriberID: "ada", to: json.RawMessage(`{}`)}}}
	p.planChain(&p.recipients[0], clock.Now())
	is.NoErr(s.insertTrigger(ctx, p, true))
	return s, clock, p
}

func TestQueue_LeaseExpiry(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, clock, p := newQueue(t)
	var conflict *platform.Error
	is.True(errors.As(s.insertTrigger(ctx, p, true), &conflict) && conflict.Status == 409) // the transactionId is claimed once

	claimOne := func(lane int) *job {
		t.Helper()
		jobs, err := s.claim(ctx, time.Minute, 10, lane)
		is.NoErr(err)
		is.Equal(len(jobs), 1) // exactly one job of the lane is due
		return jobs[0]
	}
	first := claimOne(laneLocal)
	is.Equal(first.Type, "in_app") // the trigger job is written done: the first step is due at once
	is.Equal(first.Position, 1)    // after the trigger job
	for lane := range laneCount {
		none, err := s.claim(ctx, time.Minute, 10, lane)
		is.NoErr(err)
		is.Equal(len(none), 0) // a leased job is not claimable, and the next is not released
	}

	clock.Advance(time.Minute + time.Millisecond)
	second := claimOne(laneLocal)
	is.Equal(second.ID, first.ID) // the expired lease made it due again
	is.Equal(second.Attempts, 2)  // counted as a second attempt

	err := s.settle(ctx, first, settlement{status: statusCompleted, then: thenRelease})
	is.True(errors.Is(err, errLeaseLost)) // the old holder's result is refused
	is.NoErr(s.settle(ctx, second, settlement{status: statusCompleted, then: thenRelease}))
	next := claimOne(laneEmail)
	is.Equal(next.Type, "email") // completing released the next step, to its channel's lane
	is.Equal(next.Position, 2)   // in chain order
}

func TestWithDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"greeting":{"type":"string","default":"Hi"},
		"count":{"type":"integer","default":1},
		"user":{"type":"object","properties":{"lang":{"type":"string","default":"en"}}}}}`)
	for _, tc := range []struct{ name, payload, want string }{
		{"OKFillsMissing", `{}`, `{"count":1,"greeting":"Hi"}`},
		{"OKKeepsGiven", `{"greeting":"Yo","count":0}`, `{"greeting":"Yo","count":0}`},
		{"OKNested", `{"user":{}}`, `{"count":1,"greeting":"Hi","user":{"lang":"en"}}`},
		{"OKNotAnObject", `[1]`, `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(string(withDefaults(schema, json.RawMessage(tc.payload))), tc.want) // defaults applied, values kept
		})
	}
}

func TestLaneOf_AgreesWithLaneSQL(t *testing.T) {
	is := is.New(t)
	s, _, _ := newQueue(t)
	for _, typ := range []string{stepTrigger, "in_app", "email", "sms", "chat", "push", stepDelay, stepDigest, stepThrottle, stepCustom} {
		var lane int
		is.NoErr(s.db.QueryRowContext(context.Background(), `SELECT `+laneSQL+` FROM (SELECT CAST(? AS text) AS type) AS j`, typ).Scan(&lane))
		is.Equal(laneOf(typ), lane) // the lane a wake names is the lane the claim reads
	}
}

func TestQueue_ReleaseWakesTheChildsLane(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, _, _ := newQueue(t) // in_app, then email
	for _, ch := range s.woken {
		select { // what the trigger's write woke
		case <-ch:
		default:
		}
	}
	claimed, err := s.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.NoErr(s.settle(ctx, claimed[0], settlement{status: statusCompleted, then: thenRelease}))
	for lane, ch := range s.woken {
		select {
		case <-ch:
			is.Equal(lane, laneEmail) // the released email job's lane, and no other, is woken
		default:
			is.True(lane != laneEmail) // the email lane is woken
		}
	}
}

func TestInsertTrigger_RecordsItsAnswerWithIt(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, _, p := newQueue(t)
	recorded := 0
	p.answer = func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO idempotency_keys (environment_id, key, fingerprint, state, created_at, expires_at)
			VALUES ('env', 'k', '', 'done', '', '')`)
		recorded++
		return err
	}
	p.planChain(&p.recipients[0], t0) // planned afresh, as a second trigger of the plan
	var conflict *platform.Error
	is.True(errors.As(s.insertTrigger(ctx, p, true), &conflict)) // refused: its transactionId is taken
	is.Equal(recorded, 0)                                        // and its answer is not recorded

	p.transactionID = "tx2"
	is.NoErr(s.insertTrigger(ctx, p, true))
	var n int
	is.NoErr(s.db.QueryRowContext(ctx, `SELECT count(*) FROM idempotency_keys WHERE key = 'k'`).Scan(&n))
	is.Equal(n, 1) // written with the trigger
}

func TestQueue_RecoverLeases(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, _, _ := newQueue(t)
	claimed, err := s.claim(ctx, time.Minute, 1, laneLocal) // a process claims the job, then dies
	is.NoErr(err)
	is.Equal(claimed[0].Attempts, 1)

	for i := 1; i <= maxInterruptions; i++ {
		n, err := s.recoverLeases(ctx, false) // the next start
		is.NoErr(err)
		is.Equal(n, 1) // finds the claim
		claimed, err = s.claim(ctx, time.Minute, 1, laneLocal)
		is.NoErr(err)
		is.Equal(len(claimed), 1)             // due again at once, lease or no lease
		is.Equal(claimed[0].Attempts, 1)      // the dead claim's attempt taken back
		is.Equal(claimed[0].Interruptions, i) // and counted as an interruption
	}

	// A job that keeps bringing Herald down ends.
	w := NewWorker(s, subscribers.NewStore(s.db, nil, nil), newFakeMessenger(), WorkerConfig{})
	wr, err := w.run(ctx, claimed[0])
	is.NoErr(err)
	is.NoErr(s.db.Tx(ctx, func(tx *sql.Tx) error { return wr(ctx, tx) }))
	var status string
	is.NoErr(s.db.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id = ?`, claimed[0].ID).Scan(&status))
	is.Equal(status, statusFailed)
	var warned int
	is.NoErr(s.db.QueryRowContext(ctx, `SELECT count(*) FROM execution_details WHERE job_id = ? AND detail = ?`,
		claimed[0].ID, interruptedDetail).Scan(&warned))
	is.Equal(warned, maxInterruptions) // each interruption is on the record
}

func TestWorker_GivesBackAJobWhoseLeaseIsHalfGone(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, clock, _ := newQueue(t)
	msg := newFakeMessenger()
	w := NewWorker(s, subscribers.NewStore(s.db, nil, nil), msg, WorkerConfig{Lease: time.Minute})
	claimed, err := s.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(claimed), 1)

	// The job waited for a goroutine until too little of its lease was
	// left to be sure of finishing before another claim may take it.
	clock.Advance(31 * time.Second)
	jobs, results := make(chan *job, 1), make(chan result, 1)
	jobs <- claimed[0]
	close(jobs)
	w.execute(ctx, ctx, jobs, results)
	is.Equal(msg.callCount(), 0) // not started
	r := <-results
	is.NoErr(s.db.Tx(ctx, func(tx *sql.Tx) error { return r.write(ctx, tx) }))

	again, err := s.claim(ctx, time.Minute, 1, laneLocal)
	is.NoErr(err)
	is.Equal(len(again), 1)
	is.Equal(again[0].ID, claimed[0].ID) // given back: due again at once
	is.Equal(again[0].Attempts, 1)       // with its attempt taken back
}

// settle records a run's result in its own transaction, as the worker's
// committer does for a batch of them.
func (s *Store) settle(ctx context.Context, j *job, st settlement) error {
	if err := s.db.PrepareWrites(ctx, settleStatements...); err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return s.settleTx(ctx, tx, j, st)
	})
}

func TestTriggerStepID(t *testing.T) {
	is := is.New(t)
	wf := sqldb.NewID()
	id := triggerStepID(wf)
	is.True(sqldb.IsID(id))                     // an _id like any other
	is.Equal(id[:8], wf[:8])                    // whose seconds are the workflow's (docs/api.md, "Identifiers and timestamps")
	is.Equal(triggerStepID(wf), id)             // the same for every trigger of the workflow
	is.True(triggerStepID(sqldb.NewID()) != id) // and another for another workflow
}

package activity

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	// Subscribers' timezones are read by name on any host, with or
	// without a zoneinfo database installed.
	_ "time/tzdata"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/subscribers"
)

// What a channel step does when its subscriber's schedule is closed: the
// step control `schedule` chooses.
const (
	scheduleHold   = "hold"   // wait for the schedule to open (the default)
	scheduleSkip   = "skip"   // skip the step, as the reference does
	scheduleIgnore = "ignore" // send now, as for a one-time code
)

// scheduledChannels are the channels a subscriber's schedule holds back.
// An in-app message waits in the inbox anyway, so it is never held.
var scheduledChannels = map[string]bool{"email": true, "sms": true, "push": true, "chat": true}

// scheduleControls are the step controls that bear on schedules.
type scheduleControls struct {
	Schedule         string `json:"schedule"`         // channel steps: hold, skip or ignore
	ExtendToSchedule bool   `json:"extendToSchedule"` // delay and digest steps
}

func parseScheduleControls(raw []byte) (scheduleControls, error) {
	var c scheduleControls
	json.Unmarshal(raw, &c)
	return c, nil
}

// zones caches time.LoadLocation, which reads and parses the zone's data
// on each call, by name; a name that does not load is kept as nil.
var zones sync.Map

// location returns the subscriber's timezone, or the environment's default
// when it has none or names none that exists.
func (w *runner) location(sub *subscribers.Subscriber) *time.Location {
	def := w.cfg.DefaultTimezone
	if def == nil {
		def = time.UTC
	}
	if sub == nil || sub.Timezone == nil || *sub.Timezone == "" {
		return def
	}
	name := *sub.Timezone
	if v, ok := zones.Load(name); ok {
		if loc := v.(*time.Location); loc != nil {
			return loc
		}
		return def
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		loc = nil
	}
	zones.Store(name, loc)
	if loc == nil {
		return def
	}
	return loc
}

// subscriberSchedule returns the subscriber's schedule for the job's
// workflow: nil when it set none, or the workflow is critical.
func (w *runner) subscriberSchedule(ctx context.Context, j *job, n notificationCtx) (*subscribers.Schedule, error) {
	if n.Critical || w.preferences == nil {
		return nil, nil
	}
	wf, _ := w.workflowPrefs.Get(n.TemplateID, n.Preferences, parseWorkflowPreferences)
	resolved, err := w.preferences.Preferences(ctx, j.EnvironmentID, j.SubscriberID, n.TemplateID, wf)
	if err != nil {
		return nil, fmt.Errorf("read schedule: %w", err)
	}
	return resolved.Schedule, nil
}

// scheduleWait returns the write that holds or skips a channel step its
// subscriber's schedule keeps closed now, or nil when the step goes now.
// A held job is put back with its run-at at the schedule's opening, so the
// hold outlives a restart; when it runs then, the schedule is open and it
// is sent.
func (w *runner) scheduleWait(j *job, sched *subscribers.Schedule, sub *subscribers.Subscriber) write {
	if sched == nil || !scheduledChannels[j.Type] {
		return nil
	}
	c, _ := w.scheduleControls.Get(j.TemplateID+"\x00"+j.StepID, j.Controls, parseScheduleControls)
	if c.Schedule == scheduleIgnore {
		return nil
	}
	loc := w.location(sub)
	now := w.store.now()
	if sched.Open(now, loc) {
		return nil
	}
	raw, _ := json.Marshal(map[string]any{"schedule": sched, "timezone": loc.String()})
	at, opens := sched.NextOpen(now, loc)
	if c.Schedule == scheduleSkip || !opens {
		why := "Step skipped: outside the subscriber's schedule"
		if !opens {
			why = "Step skipped: the subscriber's schedule does not open in the next week"
		}
		return w.store.settled(j, settlement{status: statusSkipped, then: thenRelease,
			details: []detail{{Status: detailSuccess, Detail: why, Source: sourceInternal, Raw: raw}}})
	}
	return w.store.settled(j, settlement{status: statusDelayed, runAt: at, uncount: true,
		details: []detail{{Status: detailPending, Source: sourceInternal, Raw: raw,
			Detail: fmt.Sprintf("Held by the subscriber's schedule until %s (%s)", at.In(loc).Format("Mon 2 Jan 2006 15:04 MST"), sqldb.FormatTime(at))}}})
}

// extendToSchedule moves the end of a delay or digest whose control
// extendToSchedule is set to the subscriber's schedule's next opening, when
// it would end while the schedule is closed; ext is the detail saying so,
// nil when until stands.
func (w *runner) extendToSchedule(ctx context.Context, j *job, n notificationCtx, sub func(context.Context) (*subscribers.Subscriber, error), until time.Time) (time.Time, *detail, error) {
	c, _ := w.scheduleControls.Get(j.TemplateID+"\x00"+j.StepID, j.Controls, parseScheduleControls)
	if !c.ExtendToSchedule || n.Critical {
		return until, nil, nil
	}
	sched, err := w.subscriberSchedule(ctx, j, n)
	if err != nil || sched == nil {
		return until, nil, err
	}
	s, err := sub(ctx)
	if err != nil {
		return until, nil, fmt.Errorf("read subscriber: %w", err)
	}
	loc := w.location(s)
	at, opens := sched.NextOpen(until, loc)
	if !opens || at.Equal(until) {
		return until, nil, nil
	}
	raw, _ := json.Marshal(map[string]any{"schedule": sched, "timezone": loc.String(), "untilDate": sqldb.FormatTime(at)})
	return at, &detail{Status: detailPending, Source: sourceInternal, Raw: raw,
		Detail: fmt.Sprintf("Step extended to the subscriber's schedule, until %s", sqldb.FormatTime(at))}, nil
}

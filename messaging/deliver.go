package messaging

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/templates"
)

// Deliver renders and delivers one channel step (activity's Messenger). It
// is idempotent per jobId: the message is created once; a repeat call
// re-sends only when the stored attempt failed, and otherwise returns the
// stored outcome without sending. An outcome that could not be delivered (no
// integration, no address, a provider refusing) is a normal outcome with
// status "error"; a Go error means nothing could be attempted.
//
// Deliver returns, beside the outcome, the write that records it, for the
// caller to run in the transaction that records the job's result: the
// outcome is then stored exactly when the job's result is, and thousands
// of deliveries share one commit. An in_app step's sending is its stored
// message, so its write inserts the message (at most one per jobId). Every
// other channel stores its message, unfinished, before sending, and its
// write records how the send went (finishWrite); a nil write stores
// nothing.
func (e *Deliverer) Deliver(ctx context.Context, d *Delivery) (_ Outcome, _ func(context.Context, *sql.Tx) error, err error) {
	defer platform.Wrap(&err, "deliver job %s", d.JobID)
	if err := d.check(); err != nil {
		return Outcome{}, nil, err
	}
	if d.Channel == "in_app" {
		return e.deliverInApp(ctx, d)
	}
	return e.sendNow(ctx, d)
}

// sendNow delivers d, or replays the outcome of an earlier attempt of its
// job that did not fail; it returns the write that records the outcome.
//
// A job's first run has no earlier attempt to look for, and skips the
// read: should another call be delivering the same job, deliver's insert
// finds its message and replays it or refuses.
func (e *Deliverer) sendNow(ctx context.Context, d *Delivery) (Outcome, func(context.Context, *sql.Tx) error, error) {
	if d.Attempt == 1 {
		return e.deliver(ctx, d, nil)
	}
	prev, err := e.messages.messageByJob(ctx, d.JobID)
	switch {
	case err == nil && prev.Status != "error" && finished(prev):
		out, err := prev.replay()
		return out, nil, err
	case err != nil && !errors.Is(err, platform.ErrNotFound):
		return Outcome{}, nil, err
	}
	return e.deliver(ctx, d, prev)
}

// check rejects a delivery that names no job, environment,
// subscriber or known channel: a caller's bug, not a delivery outcome.
func (d *Delivery) check() error {
	missing := []string{}
	for name, v := range map[string]string{"jobId": d.JobID, "environmentId": d.EnvironmentID,
		"organizationId": d.OrganizationID, "subscriber._id": d.Subscriber.ID} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return platform.BadRequest("delivery lacks %s", strings.Join(missing, ", "))
	}
	if !slices.Contains(channels, d.Channel) {
		return platform.BadRequest("delivery channel %q is not one of %s", d.Channel, strings.Join(channels, ", "))
	}
	return nil
}

// target is one provider a message goes through.
type target struct {
	in       integration
	provider provider.Sender
	msg      Message
}

// deliver runs one attempt: pick the providers, render, store the message,
// send, and return the write that records the result. prev is the failed
// earlier attempt, if any.
func (e *Deliverer) deliver(ctx context.Context, d *Delivery, prev *message) (Outcome, func(context.Context, *sql.Tx) error, error) {
	targets, failure, err := e.targets(ctx, d)
	if err != nil {
		return Outcome{}, nil, err
	}
	if failure != nil {
		return *e.obs.notSent(ctx, d, failure), nil, nil
	}
	sc, err := e.content(ctx, d)
	if err != nil {
		return Outcome{}, nil, err
	}
	release, err := e.holdFiles(ctx, d.Attachments)
	if err != nil {
		return Outcome{}, nil, err
	}
	defer release()
	r, err := renderStep(d, sc)
	if err != nil {
		return *e.obs.notSent(ctx, d, notRendered(targets[0].in.ProviderID, err)), nil, nil
	}
	now := e.messages.now()
	m := newMessage(d, r, targets, now, e.messages.src.Subscribers == nil)
	if prev != nil {
		m.ID = prev.ID
		if err := e.messages.redeliver(ctx, m); err != nil {
			return Outcome{}, nil, err
		}
	} else {
		inserted, err := e.messages.insertMessage(ctx, m)
		if err != nil {
			return Outcome{}, nil, err
		}
		if !inserted { // another call is delivering this job right now
			other, err := e.messages.messageByJob(ctx, d.JobID)
			if err != nil {
				return Outcome{}, nil, err
			}
			if !finished(other) {
				return Outcome{}, nil, fmt.Errorf("job %s is being delivered by another call", d.JobID)
			}
			out, err := other.replay()
			return out, nil, err
		}
	}

	out := Outcome{MessageID: m.ID, ProviderID: targets[0].in.ProviderID, Details: []Detail{
		{Status: "Pending", Detail: "Message created", Source: "Internal", ProviderID: targets[0].in.ProviderID},
	}}
	out.Details = append(out.Details, sc.missingDetail(targets[0].in.ProviderID)...)
	var failures, partial []string
	retryable := false
	for i := range targets {
		t := &targets[i]
		t.msg = r.message(t.msg)
		t.msg.ID = m.ID
		if warning := withAttachments(t, d.Attachments); warning != nil {
			out.Details = append(out.Details, *warning)
		}
		start := time.Now()
		res, err := t.provider.Send(ctx, t.msg)
		e.obs.sent(ctx, d, t.in.ProviderID, t.msg, time.Since(start), err)
		got := classify(t.in.ProviderID, res, err)
		out.Details = append(out.Details, got.detail)
		if len(got.dead) > 0 {
			out.Details = append(out.Details, e.forgetTokens(ctx, d, t.in.ProviderID, got.dead))
		}
		switch {
		case got.partial != "":
			partial = append(partial, got.partial)
		case got.failed:
			retryable = retryable || got.retryable
			out.RetryAfterMs = max(out.RetryAfterMs, got.retryAfter)
			failures = append(failures, got.why)
		}
		if got.id != "" && out.ProviderMessageID == "" {
			out.ProviderMessageID = got.id
		}
	}
	switch {
	case len(failures) == len(targets):
		out.Status, out.Retryable = "error", retryable
	case len(failures) > 0 || len(partial) > 0:
		// Some recipients got it: sending again would duplicate theirs.
		out.Status = "warning"
	default:
		out.Status = "sent"
	}
	write, err := e.messages.finishWrite(ctx, m, out, strings.Join(append(failures, partial...), "; "), e.messages.now())
	if err != nil {
		return Outcome{}, nil, err
	}
	return out, write, nil
}

// finished reports whether a stored message's delivery attempt completed.
// A message whose outcome was never recorded ("{}", where "" is the
// outcome the row implies, see storedOutcome) was stored by an attempt that
// stopped half-way (the process died while sending): its job is sent again,
// so delivery is at least once rather than possibly never.
func finished(m *message) bool {
	return string(m.Outcome) != "{}"
}

// notRendered is the outcome of a step whose content failed to render. A
// render cut off by the time limit is tried again after the backoff, as a
// provider's error is: on a machine short of CPU the limit trips for
// templates that take a moment when it is not, and the later attempts tell
// a busy machine from a slow template. Any other failure is the template's
// own and would come again.
func notRendered(providerID string, err error) *Outcome {
	out := fail(providerID, "Payload", "Message content could not be generated: "+err.Error())
	out.Retryable = errors.Is(err, templates.ErrTooSlow)
	return out
}

// fail is the outcome of a delivery that stored nothing.
func fail(providerID, source, why string) *Outcome {
	return &Outcome{Status: "error", ProviderID: providerID, Details: []Detail{
		{Status: "Failed", Detail: why, Source: source, ProviderID: providerID},
	}}
}

// targets picks the integrations a step is delivered through (docs/api.md,
// "The write side" and "What strict clients check"): in_app through the
// environment's in_app integration ("service"); email and sms through the
// active primary one; chat and push through every active integration for
// which the subscriber has channel credentials. A non-nil outcome explains
// why nothing can be sent.
func (e *Deliverer) targets(ctx context.Context, d *Delivery) ([]target, *Outcome, error) {
	var active []integration
	if e.messages.src.Integrations == nil {
		if d.Channel != "in_app" {
			return nil, fail("", "Internal", "Subscriber does not have an active integration"), nil
		}
		active = []integration{{ProviderID: "service", Channel: "in_app"}}
	} else {
		var err error
		if active, err = e.messages.src.Integrations.ActiveIntegrations(ctx, d.EnvironmentID, d.Channel); err != nil {
			return nil, nil, fmt.Errorf("active %s integrations: %w", d.Channel, err)
		}
	}
	if len(active) == 0 {
		return nil, fail("", "Internal", "Subscriber does not have an active integration"), nil
	}

	sub := d.Subscriber
	var picked []target
	switch d.Channel {
	case "in_app", "email", "sms":
		in := active[0] // primary first
		switch {
		case d.Channel == "email" && deref(sub.Email) == "":
			return nil, fail(in.ProviderID, "Internal", "Subscriber does not have an email address"), nil
		case d.Channel == "sms" && deref(sub.Phone) == "":
			return nil, fail(in.ProviderID, "Internal", "Subscriber does not have a phone number"), nil
		}
		picked = []target{{in: in, msg: Message{To: deref(sub.Email)}}}
		if d.Channel == "email" {
			readEmailOverrides(d.Overrides, d.StepID, in.ProviderID).apply(&picked[0].msg)
		}
		if d.Channel == "sms" {
			picked[0].msg.To = deref(sub.Phone)
		}
	case "chat", "push":
		for _, in := range active {
			if t, ok := channelTarget(d.Channel, in, sub); ok {
				if d.Channel == "push" {
					t.msg.Push = readPushOptions(d.Overrides, d.StepID, in.ProviderID)
				}
				picked = append(picked, t)
			}
		}
		if len(picked) == 0 {
			what := map[string]string{"chat": "a chat webhook URL", "push": "device tokens"}[d.Channel]
			return nil, fail(active[0].ProviderID, "Internal",
				fmt.Sprintf("Subscriber does not have %s for any active %s integration", what, d.Channel)), nil
		}
	}
	for i := range picked {
		p, failure := e.sender(picked[i].in, d.Channel)
		if failure != nil {
			return nil, failure, nil
		}
		picked[i].provider = p
	}
	return picked, nil, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

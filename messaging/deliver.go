package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// DeliverJSON renders and delivers one channel step and stores its message
// (activity's Messenger). It is idempotent per jobId: the message is
// created once; a repeat call re-sends only when the stored attempt failed,
// and otherwise returns the stored outcome without sending. An outcome that
// could not be delivered (no integration, no address, a provider refusing)
// is a normal outcome with status "error"; a Go error means nothing could be
// attempted.
func (s *Store) DeliverJSON(ctx context.Context, doc json.RawMessage) (_ json.RawMessage, err error) {
	var d delivery
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, platform.BadRequest("delivery document: %v", err)
	}
	defer platform.Wrap(&err, "deliver job %s", d.JobID)
	if err := d.check(); err != nil {
		return nil, err
	}
	prev, err := s.messageByJob(ctx, d.JobID)
	switch {
	case err == nil && prev.Status != "error" && finished(prev):
		return prev.replay()
	case err != nil && !errors.Is(err, platform.ErrNotFound):
		return nil, err
	}
	out, err := s.deliver(ctx, &d, prev)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// check rejects a delivery document that names no job, environment,
// subscriber or known channel: a caller's bug, not a delivery outcome.
func (d *delivery) check() error {
	missing := []string{}
	for name, v := range map[string]string{"jobId": d.JobID, "environmentId": d.EnvironmentID,
		"organizationId": d.OrganizationID, "subscriber._id": d.Subscriber.ID} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return platform.BadRequest("delivery document lacks %s", strings.Join(missing, ", "))
	}
	if !slices.Contains(channels, d.Channel) {
		return platform.BadRequest("delivery channel %q is not one of %s", d.Channel, strings.Join(channels, ", "))
	}
	return nil
}

// target is one provider a message goes through.
type target struct {
	in       integration
	provider Provider
	msg      Message
}

// deliver runs one attempt: pick the providers, render, store the message,
// send, and record the result. prev is the failed earlier attempt, if any.
func (s *Store) deliver(ctx context.Context, d *delivery, prev *message) (*outcome, error) {
	targets, failure, err := s.targets(ctx, d)
	if err != nil {
		return nil, err
	}
	if failure != nil {
		return failure, nil
	}
	r, err := s.renderStep(d)
	if err != nil {
		return fail(targets[0].in.ProviderID, "Payload", "Message content could not be generated: "+err.Error()), nil
	}
	now := s.now()
	m := newMessage(d, r, targets, now)
	if prev != nil {
		m.ID = prev.ID
		if err := s.redeliver(ctx, m); err != nil {
			return nil, err
		}
	} else {
		inserted, err := s.insertMessage(ctx, m)
		if err != nil {
			return nil, err
		}
		if !inserted { // another call is delivering this job right now
			other, err := s.messageByJob(ctx, d.JobID)
			if err != nil {
				return nil, err
			}
			if !finished(other) {
				return nil, fmt.Errorf("job %s is being delivered by another call", d.JobID)
			}
			doc, err := other.replay()
			if err != nil {
				return nil, err
			}
			var o outcome
			return &o, json.Unmarshal(doc, &o)
		}
	}

	out := &outcome{MessageID: m.ID, ProviderID: targets[0].in.ProviderID, Details: []detail{
		{Status: "Pending", Detail: "Message created", Source: "Internal", ProviderID: targets[0].in.ProviderID},
	}}
	var failures, partial []string
	retryable := false
	for i := range targets {
		t := &targets[i]
		t.msg = r.message(t.msg)
		res, err := t.provider.Send(ctx, t.msg)
		var some *partialSend
		if errors.As(err, &some) {
			partial = append(partial, err.Error())
			out.Details = append(out.Details, detail{Status: "Warning", Detail: "Message sent in part: " + err.Error(),
				Source: "Internal", ProviderID: t.in.ProviderID, Raw: &res.Raw})
			continue
		}
		if err != nil {
			var se *sendError
			raw := err.Error()
			if errors.As(err, &se) {
				retryable = retryable || se.retryable
				if se.raw != "" {
					raw = se.raw
				}
			} else {
				retryable = true
			}
			failures = append(failures, err.Error())
			out.Details = append(out.Details, detail{Status: "Failed", Detail: "Unexpected provider error: " + err.Error(),
				Source: "Internal", ProviderID: t.in.ProviderID, Raw: &raw})
			continue
		}
		var raw *string
		if res.Raw != "" {
			raw = &res.Raw
		}
		out.Details = append(out.Details, detail{Status: "Success", Detail: "Message sent", Source: "Internal",
			ProviderID: t.in.ProviderID, Raw: raw})
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
	if err := s.finish(ctx, m.ID, *out, strings.Join(append(failures, partial...), "; "), s.now()); err != nil {
		return nil, err
	}
	if d.Channel == "in_app" && out.Status != "error" {
		s.publish(LiveEvent{EnvironmentID: m.EnvironmentID, SubscriberID: m.SubscriberID, MessageID: m.ID, Kind: LiveReceived})
	}
	return out, nil
}

// finished reports whether a stored message's delivery attempt completed.
// A message whose outcome was never recorded ("{}", where "" is the
// outcome the row implies, see storedOutcome) was stored by an attempt that
// stopped half-way (the process died while sending): its job is sent again,
// so delivery is at least once rather than possibly never.
func finished(m *message) bool {
	return string(m.Outcome) != "{}"
}

// fail is the outcome of a delivery that stored nothing.
func fail(providerID, source, why string) *outcome {
	return &outcome{Status: "error", ProviderID: providerID, Details: []detail{
		{Status: "Failed", Detail: why, Source: source, ProviderID: providerID},
	}}
}

// parseIntegration reads an integration document of IntegrationSource.
func parseIntegration(raw []byte) (integration, error) {
	var in integration
	err := json.Unmarshal(raw, &in)
	return in, err
}

// targets picks the integrations a step is delivered through (contract §7,
// §9): in_app through the environment's in_app integration ("service");
// email and sms through the active primary one; chat and push through every
// active integration for which the subscriber has channel credentials. A
// non-nil outcome explains why nothing can be sent.
func (s *Store) targets(ctx context.Context, d *delivery) ([]target, *outcome, error) {
	var active []integration
	if s.src.Integrations == nil {
		if d.Channel != "in_app" {
			return nil, fail("", "Internal", "Subscriber does not have an active integration"), nil
		}
		active = []integration{{ProviderID: "service", Channel: "in_app"}}
	} else {
		docs, err := s.src.Integrations.ActiveIntegrationsJSON(ctx, d.EnvironmentID, d.Channel)
		if err != nil {
			return nil, nil, fmt.Errorf("active %s integrations: %w", d.Channel, err)
		}
		for i, doc := range docs {
			in, err := s.integrations.Get(d.EnvironmentID+"\x00"+d.Channel+"\x00"+strconv.Itoa(i), doc, parseIntegration)
			if err != nil {
				// Bad stored credentials need a person, not a retry.
				return nil, fail("", "Credentials", "Invalid integration credentials: "+err.Error()), nil
			}
			active = append(active, in)
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
			picked[0].msg.emailOverrides = readEmailOverrides(d.Overrides, d.StepID, in.ProviderID)
		}
		if d.Channel == "sms" {
			picked[0].msg.To = deref(sub.Phone)
		}
	case "chat", "push":
		for _, in := range active {
			for _, ch := range sub.Channels {
				if ch.ProviderID != in.ProviderID || (ch.IntegrationID != "" && in.ID != "" && ch.IntegrationID != in.ID) {
					continue
				}
				t := target{in: in}
				if d.Channel == "chat" {
					t.msg.WebhookURL, t.msg.ChatChannel = ch.Credentials.WebhookURL, ch.Credentials.Channel
					if t.msg.WebhookURL == "" {
						t.msg.WebhookURL = in.Credentials.WebhookURL
					}
					if t.msg.WebhookURL == "" {
						continue
					}
				} else {
					if len(ch.Credentials.DeviceTokens) == 0 {
						continue
					}
					t.msg.DeviceTokens = ch.Credentials.DeviceTokens
				}
				picked = append(picked, t)
				break
			}
		}
		if len(picked) == 0 {
			what := map[string]string{"chat": "a chat webhook URL", "push": "device tokens"}[d.Channel]
			return nil, fail(active[0].ProviderID, "Internal",
				fmt.Sprintf("Subscriber does not have %s for any active %s integration", what, d.Channel)), nil
		}
	}
	for i := range picked {
		build, ok := s.senders[picked[i].in.ProviderID]
		if !ok || !providerFits(picked[i].in.ProviderID, d.Channel) {
			return nil, fail(picked[i].in.ProviderID, "Credentials",
				fmt.Sprintf("Herald cannot deliver %s through provider %s", d.Channel, picked[i].in.ProviderID)), nil
		}
		p, err := build(picked[i].in)
		if err != nil {
			return nil, fail(picked[i].in.ProviderID, "Credentials", "Invalid integration credentials: "+err.Error()), nil
		}
		picked[i].provider = p
	}
	return picked, nil, nil
}

// providerFits reports whether a provider serves a channel.
func providerFits(providerID, channel string) bool {
	switch providerID {
	case "service":
		return channel == "in_app"
	case "nodemailer", "email-webhook":
		return channel == "email"
	case "generic-sms":
		return channel == "sms"
	case "push-webhook":
		return channel == "push"
	default:
		return channel == "chat"
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package provider

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
)

// spec is how Herald delivers through one provider: its channel, the
// credentials it cannot work without, and either an HTTP call (send, with
// where the answer keeps the message id) or a custom sender (build).
// A location is "header:<name>", "xml:<tag>" or a dotted JSON path.
type spec struct {
	channel  string
	required []string

	// send builds the request for m; the answer's message id is at id (a
	// dotted JSON path, or "header:<name>"), its date at date.
	send     func(c Credentials, m Message) (*call, error)
	id, date string
	// failed finds a failure inside a 2xx answer (Vonage, Mandrill,
	// OneSignal, Slack's ok:false); nil when the status says it all.
	failed func(r *reply, m Message) error
	// dead reports whether an error answer says the device token is gone.
	dead func(r *reply) bool
	// batch is how many device tokens a push request may carry: 1 for a
	// request per token, 0 for all of them in one.
	batch int

	build func(c Credentials, d Deps) (Sender, error) // instead of send
	// check is the provider's cheapest authenticated call, for check: true.
	check func(ctx context.Context, c Credentials, d Deps) error
	// checkField is the credential a failed check names; the first
	// required one when empty.
	checkField string
	// shape finds malformed credentials (a service-account JSON, a key),
	// field name → problem.
	shape func(c Credentials) map[string]string
	// files is set for the email providers that send attachments.
	files bool
}

// catalog is every provider Herald delivers through, by provider id.
var catalog = merge(webhookProviders, smtpProviders, emailProviders, smsProviders, moreSMSProviders, signedSMSProviders, pushProviders, webPushProvider, chatProviders)

func merge(parts ...map[string]spec) map[string]spec {
	out := map[string]spec{}
	for _, p := range parts {
		for id, s := range p {
			if attach, ok := jsonAttachers[id]; ok {
				s.send, s.files = withAttachments(s.send, attach), true
			}
			if s.build == nil && s.send != nil {
				s.build = httpBuilder(s)
			}
			out[id] = s
		}
	}
	return out
}

// Info describes a provider Herald delivers through.
type Info struct {
	Channel  string
	Required []string // credential fields, by JSON name
	Dials    bool     // whether check: true calls the provider
	// CheckField is the credential a failed check names.
	CheckField string
}

// Lookup returns the provider's description, and false when Herald cannot
// deliver through providerID.
func Lookup(providerID string) (Info, bool) {
	s, ok := catalog[providerID]
	if !ok {
		return Info{}, false
	}
	field := s.checkField
	if field == "" && len(s.required) > 0 {
		field = s.required[0]
	}
	return Info{Channel: s.channel, Required: s.required, Dials: s.check != nil, CheckField: field}, true
}

// Supported lists, sorted, the providers of a channel Herald delivers through.
func Supported(channel string) []string {
	var out []string
	for id, s := range catalog {
		if s.channel == channel {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Problems returns what is malformed in creds for providerID, by
// credential JSON name: a service-account JSON that is not one, a key that
// does not parse. Missing fields are the caller's to report (Required).
func Problems(providerID string, c Credentials) map[string]string {
	s := catalog[providerID]
	if s.shape == nil {
		return nil
	}
	return s.shape(c)
}

// ErrNoCheck is what Check returns for a provider without an
// authenticated call to try: only the credentials' shape was checked.
var ErrNoCheck = errors.New("the provider has no call to check credentials with")

// Check makes the provider's cheapest authenticated call with creds (an
// account look-up, a token exchange). An *Error names the provider's
// reason when the credentials are wrong.
func Check(ctx context.Context, providerID string, c Credentials, d Deps) error {
	s := catalog[providerID]
	if s.check == nil {
		return ErrNoCheck
	}
	if d.Client == nil {
		d.Client = NewHTTPClient(nil, checkTimeout)
	}
	return s.check(ctx, c, d)
}

// checkCall makes check from a request builder: any 2xx passes.
func checkCall(build func(c Credentials) *call) func(context.Context, Credentials, Deps) error {
	return func(ctx context.Context, c Credentials, d Deps) error {
		cl := build(c)
		if cl.method == "" {
			cl.method = http.MethodGet
		}
		_, err := do(ctx, d.Client, cl)
		return err
	}
}

// httpSender sends through a provider's HTTP API as its spec says.
type httpSender struct {
	s     spec
	creds Credentials
	deps  Deps
}

func httpBuilder(s spec) func(Credentials, Deps) (Sender, error) {
	return func(c Credentials, d Deps) (Sender, error) {
		return &httpSender{s: s, creds: c, deps: d}, nil
	}
}

func (h *httpSender) Send(ctx context.Context, m Message) (Result, error) {
	if h.s.batch > 0 {
		return eachBatch(ctx, m, h.s.batch, h.one)
	}
	return h.one(ctx, m)
}

func (h *httpSender) one(ctx context.Context, m Message) (Result, error) {
	c, err := h.s.send(h.creds, m)
	if err != nil {
		return Result{}, err
	}
	r, err := do(ctx, h.deps.Client, c)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && r != nil && h.s.dead != nil && h.s.dead(r) {
			e.DeadTokens, e.Retryable = m.DeviceTokens, false
		}
		return Result{}, err
	}
	res := Result{ID: r.read(h.s.id), Date: r.read(h.s.date), Raw: string(r.body)}
	if h.s.failed != nil {
		var dead *deadOnly
		if err := h.s.failed(r, m); errors.As(err, &dead) {
			res.DeadTokens = dead.tokens
		} else if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Raw == "" {
				e.Raw = string(r.body)
			}
			return Result{}, err
		}
	}
	return res, nil
}

// read returns the value at where: "header:<name>" or a JSON path.
func (r *reply) read(where string) string {
	if name, ok := strings.CutPrefix(where, "header:"); ok {
		return r.header.Get(name)
	}
	if tag, ok := strings.CutPrefix(where, "xml:"); ok {
		return xmlValue(r.body, tag)
	}
	return pick(r.doc, where)
}

// eachBatch sends m to its device tokens through one, size tokens a
// request. A token the provider calls dead is reported in DeadTokens and
// does not make the send fail while another token got it.
func eachBatch(ctx context.Context, m Message, size int, one func(context.Context, Message) (Result, error)) (Result, error) {
	if len(m.DeviceTokens) == 0 {
		return Result{}, Permanent("no device tokens to send to")
	}
	var out Result
	var ids, raws []string
	var first error
	sent, failed := 0, 0
	for chunk := range slices.Chunk(m.DeviceTokens, size) {
		mt := m
		mt.DeviceTokens = chunk
		res, err := one(ctx, mt)
		var e *Error
		switch {
		case err == nil:
			sent += len(chunk) - len(res.DeadTokens)
			ids, raws = append(ids, res.ID), append(raws, res.Raw)
			out.DeadTokens = append(out.DeadTokens, res.DeadTokens...)
			out.Date = res.Date
			continue
		case errors.As(err, &e) && len(e.DeadTokens) > 0:
			out.DeadTokens = append(out.DeadTokens, e.DeadTokens...)
			failed += len(chunk) - len(e.DeadTokens)
			raws = append(raws, e.Raw)
		default:
			failed += len(chunk)
			raws = append(raws, errText(err))
		}
		if first == nil {
			first = err
		}
	}
	out.ID = strings.Join(slices.DeleteFunc(ids, func(s string) bool { return s == "" }), ",")
	out.Raw = truncate(strings.Join(raws, "\n"), MaxReply)
	switch {
	case sent == 0 && first != nil:
		var e *Error
		if errors.As(first, &e) {
			cp := *e
			cp.DeadTokens = out.DeadTokens
			cp.Raw = out.Raw
			return out, &cp
		}
		return out, first
	case failed > 0:
		return out, &Partial{Sent: sent, Of: len(m.DeviceTokens), Err: first, Result: out}
	}
	return out, nil
}

package messaging

import (
	"cmp"
	"encoding/json"
)

// emailOverrides is what a trigger's overrides may change in one email, as
// the reference platform lets them (its createMailData): the sender, the
// reply address and the copies. Empty fields change nothing.
type emailOverrides struct {
	From, SenderName, ReplyTo string
	Cc, Bcc                   []string
}

// readEmailOverrides reads them from overrides.email, then the provider's
// own (overrides.providers.<providerId>), then the step's
// (overrides.steps.<stepId>.providers.<providerId>), a later value
// replacing an earlier one. A value of the wrong type is left out: the
// trigger accepted the overrides as any object, and one bad field should
// not cost the subscriber the email.
func readEmailOverrides(raw json.RawMessage, stepID, providerID string) emailOverrides {
	var o map[string]any
	json.Unmarshal(raw, &o)
	var out emailOverrides
	for _, src := range []map[string]any{
		obj(o, "email"),
		obj(obj(o, "providers"), providerID),
		obj(obj(obj(obj(o, "steps"), stepID), "providers"), providerID),
	} {
		out.From = cmp.Or(str(src, "from"), out.From)
		out.SenderName = cmp.Or(str(src, "senderName"), out.SenderName)
		out.ReplyTo = cmp.Or(str(src, "replyTo"), out.ReplyTo)
		if cc := addresses(src["cc"]); cc != nil {
			out.Cc = cc
		}
		if bcc := addresses(src["bcc"]); bcc != nil {
			out.Bcc = bcc
		}
	}
	return out
}

// apply sets the overridden fields of m.
func (o emailOverrides) apply(m *Message) {
	m.From, m.SenderName, m.ReplyTo, m.Cc, m.Bcc = o.From, o.SenderName, o.ReplyTo, o.Cc, o.Bcc
}

// addresses reads an address or a list of them; nil for anything else.
func addresses(v any) []string {
	switch t := v.(type) {
	case string:
		if t != "" {
			return []string{t}
		}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// layoutChoice is the layout an email is sent inside (docs/content.md, "Layouts"):
// the layoutId the trigger's overrides give the step
// (overrides.steps.<stepId>.layoutId), then the email channel
// (overrides.channels.email.layoutId, then the older
// overrides.layoutIdentifier), then the step's own controls. id "" is the
// environment's default layout; use is false when the first of them that
// is given is null: no layout.
func layoutChoice(controls map[string]any, overrides map[string]any, stepID string) (id string, use bool) {
	for _, src := range []struct {
		m   map[string]any
		key string
	}{
		{obj(obj(overrides, "steps"), stepID), "layoutId"},
		{obj(obj(overrides, "channels"), "email"), "layoutId"},
		{overrides, "layoutIdentifier"},
		{controls, "layoutId"},
	} {
		v, ok := src.m[src.key]
		if !ok {
			continue
		}
		if v == nil {
			return "", false
		}
		if s, ok := v.(string); ok {
			return s, true
		}
	}
	return "", true
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// obj returns m[key] when it is an object.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

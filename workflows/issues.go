package workflows

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/templates"
)

// IntegrationChecker tells whether an environment can deliver on a channel.
// integrations.Store satisfies it; a nil checker means "unknown", and no
// MISSING_INTEGRATION issue is raised.
type IntegrationChecker interface {
	// HasActiveIntegration reports whether the environment has an active integration for channel.
	HasActiveIntegration(ctx context.Context, environmentID, channel string) (bool, error)
}

// subscriberVariables are the subscriber fields a template may use.
var subscriberVariables = []string{"subscriberId", "firstName", "lastName", "email", "phone", "avatar", "locale", "timezone"}

// payloadVariables is the schema of payload.*: the workflow's payloadSchema,
// or any object when it has none.
func payloadVariables(w *workflow) any {
	if len(w.PayloadSchema) > 0 {
		var s any
		if json.Unmarshal(w.PayloadSchema, &s) == nil {
			if m, ok := s.(map[string]any); ok {
				return m
			}
		}
	}
	return anyObject()
}

// subscriberSchema is the schema of a subscriber's fields in templates.
func subscriberSchema() schema {
	sub := schema{}
	for _, f := range subscriberVariables {
		sub[f] = str()
	}
	sub["data"] = anyObject()
	return object(sub)
}

// variablesFor returns the JSON Schema of what the templates of step i may
// use: subscriber fields, the payload, the trigger's actor (a subscriber,
// absent when the trigger names none), the events of earlier digest steps,
// the trigger's contexts and the workflow's translation keys.
func variablesFor(w *workflow, i int) schema {
	subscriber := subscriberSchema()
	subscriber["required"] = []string{"subscriberId"}

	steps := schema{}
	for _, prev := range w.Steps[:i] {
		if prev.Type != "digest" {
			continue
		}
		event := schema{"type": "object", "additionalProperties": true, "properties": schema{
			"id": str(), "time": str(), "payload": anyObject(),
		}}
		s := object(schema{
			"events":     schema{"type": "array", "items": event},
			"eventCount": schema{"type": "number"},
		})
		s["required"] = []string{"events", "eventCount"}
		steps[prev.StepID] = s
	}
	return object(schema{
		"subscriber": subscriber,
		"actor":      subscriberSchema(),
		"payload":    payloadVariables(w),
		"steps":      object(steps),
		// a trigger's contexts by type, {id, data} each (docs/content.md,
		// "Contexts"); tenant is the tenant context's, as v1 named it
		"context": anyObject(),
		"tenant":  anyObject(),
		// translation keys, replaced before the template renders
		// (docs/content.md, "Translations")
		"t": anyObject(),
	})
}

// schemaAllows reports whether a template variable path resolves in node, a
// JSON Schema. Objects with declared properties admit only those unless
// additionalProperties says otherwise; objects without any admit anything;
// arrays admit indexes, first, last and size; strings admit size.
func schemaAllows(node any, path []string) bool {
	if len(path) == 0 {
		return true
	}
	n, ok := node.(map[string]any)
	if !ok {
		b, isBool := node.(bool)
		return isBool && b
	}
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf"} {
		if _, ok := n[k]; ok {
			return true // composed schemas: too open to judge, accept
		}
	}
	seg := path[0]
	types := schemaTypes(n)
	if slices.Contains(types, "array") {
		switch {
		case seg == "size":
			return len(path) == 1
		case seg == "*" || seg == "first" || seg == "last" || isIndex(seg):
			items, ok := n["items"]
			return !ok || schemaAllows(items, path[1:])
		}
		return false
	}
	props, hasProps := n["properties"].(map[string]any)
	if p, ok := props[seg]; ok {
		return schemaAllows(p, path[1:])
	}
	if seg == "*" {
		return true
	}
	switch ap := n["additionalProperties"].(type) {
	case bool:
		return ap
	case map[string]any:
		return schemaAllows(ap, path[1:])
	}
	if slices.Contains(types, "string") {
		return seg == "size" && len(path) == 1
	}
	return !hasProps && (len(types) == 0 || slices.Contains(types, "object"))
}

// isIndex reports whether a path segment is an array index.
func isIndex(seg string) bool {
	_, err := strconv.Atoi(seg)
	return err == nil
}

func schemaTypes(n map[string]any) []string {
	switch t := n["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return t
	}
	return nil
}

// contentIssues returns the control issues of step i, keyed by control path.
func contentIssues(w *workflow, i int, variables schema) map[string][]runtimeIssue {
	st := w.Steps[i]
	out := map[string][]runtimeIssue{}
	add := func(path string, issue runtimeIssue) { out[path] = append(out[path], issue) }
	empty := func(name string) bool {
		v, _ := st.ControlValues[name].(string)
		return strings.TrimSpace(v) == ""
	}
	switch st.Type {
	case "email":
		for _, f := range []string{"subject", "body"} {
			if empty(f) {
				add(f, runtimeIssue{IssueType: issueMissingValue, Message: "The " + f + " is required"})
			}
		}
	case "in_app":
		if empty("body") && empty("subject") {
			add("body", runtimeIssue{IssueType: issueMissingValue, Message: "A body or a subject is required"})
		}
	case "throttle":
		// A fixed window needs its length (amount, or the older window)
		// and unit; without them every trigger failed the step.
		if t, _ := st.ControlValues["type"].(string); t != "dynamic" {
			missing := func(f string) bool { v, ok := st.ControlValues[f]; return !ok || v == nil || v == "" }
			if missing("amount") && missing("window") {
				add("amount", runtimeIssue{IssueType: issueMissingValue, Message: "The amount is required"})
			}
			if missing("unit") {
				add("unit", runtimeIssue{IssueType: issueMissingValue, Message: "The unit is required"})
			}
		}
	case "delay", "digest":
		// A regular wait needs its length, a timed one its schedule; without
		// them the step cannot be scheduled when triggered.
		timed := st.ControlValues["type"] == "timed"
		required := []string{"amount", "unit"}
		if timed {
			required = []string{"cron"}
		}
		for _, f := range required {
			if v, ok := st.ControlValues[f]; !ok || v == nil || v == "" {
				add(f, runtimeIssue{IssueType: issueMissingValue, Message: "The " + f + " is required"})
			}
		}
		// A cron the step could never wait for fails every trigger.
		if cron, _ := st.ControlValues["cron"].(string); timed && cron != "" {
			if _, err := NextCron(cron, time.Now()); err != nil {
				add("cron", runtimeIssue{IssueType: issueIllegalVariable, Message: "The cron cannot be used: " + err.Error()})
			}
		}
	}
	allowed := func(path []string) bool { return schemaAllows(variables, path) }
	check := func(path, s string) {
		found := templates.Check(s, allowed)
		for _, p := range found {
			issueType := issueIllegalVariable
			if p.BadFilter {
				issueType = issueInvalidFilterArg
			}
			add(path, runtimeIssue{IssueType: issueType, VariableName: p.Variable, Message: p.Message})
		}
		// What the checker above names precisely (a variable, a filter's
		// arguments) it reports itself; any other template that would
		// fail to parse at every trigger is an issue too: Parse parses as
		// deliveries render, with the same engine, filters and tags.
		if len(found) == 0 {
			if err := templates.Parse(s); err != nil {
				add(path, runtimeIssue{IssueType: issueIllegalVariable, Message: "The template cannot be parsed: " + err.Error()})
			}
		}
	}
	walkStrings(st.ControlValues, "", func(path, s string) {
		// A block editor's body is a JSON document whose strings are
		// rendered one by one once decoded: those are its templates, and
		// the document's own escaping is not theirs.
		if doc, ok := jsonDocument(s); ok {
			walkStrings(doc, "", func(_, inner string) { check(path, inner) })
			return
		}
		check(path, s)
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// jsonDocument decodes s when it is a JSON object or array.
func jsonDocument(s string) (any, bool) {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var doc any
	if json.Unmarshal([]byte(s), &doc) != nil {
		return nil, false
	}
	return doc, true
}

// walkStrings calls fn for every string inside v with its dotted path.
func walkStrings(v any, path string, fn func(path, s string)) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t := v.(type) {
	case string:
		fn(path, t)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "skip" {
				continue // a condition object, not a template
			}
			walkStrings(t[k], join(k), fn)
		}
	case []any:
		for i, e := range t {
			walkStrings(e, join(itoa(i)), fn)
		}
	}
}

// integrationLookup answers HasActiveIntegration once per channel per
// response.
type integrationLookup struct {
	integrations IntegrationChecker
	envID        string
	cache        map[string]bool
}

// missing reports whether the channel certainly has no active integration.
func (l *integrationLookup) missing(ctx context.Context, channel string) (bool, error) {
	if l == nil || l.integrations == nil {
		return false, nil
	}
	if has, ok := l.cache[channel]; ok {
		return !has, nil
	}
	has, err := l.integrations.HasActiveIntegration(ctx, l.envID, channel)
	if err != nil {
		return false, err
	}
	if l.cache == nil {
		l.cache = map[string]bool{}
	}
	l.cache[channel] = has
	return !has, nil
}

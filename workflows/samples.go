package workflows

import (
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/templates"
)

// This file builds the sample variables a preview renders with and the
// test data of GET /v2/workflows/{workflowId}/test-data: a sample
// subscriber and actor, a payload from the workflow's payload schema or,
// without one, from the variables its templates use, and a few events for
// each digest.

// sampleSubscriber is who a preview is addressed to unless the caller
// names someone.
func sampleSubscriber() map[string]any {
	return map[string]any{
		"subscriberId": "preview-subscriber", "firstName": "Ada", "lastName": "Lovelace",
		"email": "ada@example.com", "phone": "+15555550100", "avatar": "https://example.com/avatar.png",
		"locale": "en_US", "timezone": "UTC", "data": map[string]any{},
	}
}

// sampleActor is the actor of a preview unless the caller names one.
func sampleActor() map[string]any {
	return map[string]any{
		"subscriberId": "preview-actor", "firstName": "Grace", "lastName": "Hopper",
		"email": "grace@example.com", "avatar": "https://example.com/actor.png", "data": map[string]any{},
	}
}

// sampleVariables is what step i of w renders with: the samples, each part
// given replaces (subscriber, actor) or extends (payload, steps) its sample.
func sampleVariables(w *workflow, i int, controls map[string]any, given previewPayload) previewPayload {
	out := previewPayload{
		Subscriber: mergeMaps(sampleSubscriber(), given.Subscriber),
		Actor:      mergeMaps(sampleActor(), given.Actor),
		Payload:    mergeMaps(samplePayload(w, i, controls), given.Payload),
		Context:    given.Context,
		Env:        given.Env,
	}
	out.Steps = map[string]any{}
	for _, prev := range w.Steps[:i] {
		if prev.Type == "digest" {
			events := sampleEvents(out.Payload)
			out.Steps[prev.StepID] = map[string]any{"events": events, "eventCount": len(events)}
		}
	}
	out.Steps = mergeMaps(out.Steps, given.Steps)
	return out
}

// samplePayload is an example payload: the payload schema's example when
// the workflow has one, else an object holding every payload.* variable
// that controls (step i's, as the author has them) or any other step of w
// uses, each a placeholder that names it.
func samplePayload(w *workflow, i int, controls map[string]any) map[string]any {
	if ex, ok := payloadExample(w.PayloadSchema).(map[string]any); ok {
		return ex
	}
	out := map[string]any{}
	add := func(v any) {
		for _, path := range usedVariables(v) {
			if len(path) > 1 && path[0] == "payload" {
				setPath(out, path[1:], "{{"+strings.Join(path, ".")+"}}")
			}
		}
	}
	add(controls)
	for j, st := range w.Steps {
		if j != i || controls == nil { // the controls given replace step i's own
			add(st.ControlValues)
		}
	}
	return out
}

// usedVariables returns the variable paths the templates inside v use.
func usedVariables(v any) [][]string {
	var out [][]string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			templates.Check(t, func(path []string) bool {
				out = append(out, path)
				return true
			})
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// setPath sets m's value at path to leaf, making the objects on the way,
// unless a value is already there. An index ("*", or a number) stands for
// a list of one.
func setPath(m map[string]any, path []string, leaf any) {
	for len(path) > 1 {
		seg := path[0]
		next, ok := m[seg].(map[string]any)
		if _, set := m[seg]; set && !ok {
			return // a leaf or a list already: keep it
		}
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		if idx := path[1]; idx == "*" || isIndex(idx) || idx == "first" || idx == "last" {
			item := map[string]any{}
			if len(path) > 2 {
				setPath(item, path[2:], leaf)
			}
			m[seg] = []any{item}
			return
		}
		m, path = next, path[1:]
	}
	if _, set := m[path[0]]; !set && path[0] != "size" {
		m[path[0]] = leaf
	}
}

// sampleEvents are the events a digest preview collects: three triggers
// with the preview's payload.
func sampleEvents(payload map[string]any) []any {
	events := make([]any, 3)
	for i := range events {
		events[i] = map[string]any{
			"id": "preview-event-" + itoa(i+1), "time": "2026-01-01T12:0" + itoa(i) + ":00.000Z",
			"payload": deepCopy(payload),
		}
	}
	return events
}

// mergeMaps returns base with over laid on it: objects present in both
// merge, anything else in over replaces base's value.
func mergeMaps(base, over map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range over {
		if bm, ok := base[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				base[k] = mergeMaps(bm, om)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// deepCopy copies a JSON value, so that rendering (templates.Normalize
// rewrites numbers in place) leaves the answer's copy as it was.
func deepCopy[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

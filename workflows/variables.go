package workflows

import (
	"slices"
	"sort"
	"strings"
)

// variables are the template variables an editor offers as the author
// types in any step of w: the subscriber's and the actor's fields, the
// payload's (from its schema, else the ones the templates already use),
// each digest step's events, and the contexts the templates use.
func variables(w *workflow) []string {
	var out []string
	for _, who := range []string{"subscriber", "actor"} {
		for _, f := range subscriberVariables {
			out = append(out, who+"."+f)
		}
		out = append(out, who+".data")
	}
	payload := schemaPaths(payloadVariables(w), "payload")
	declared := len(payload) > 0
	used := map[string]bool{}
	for _, st := range w.Steps {
		for _, path := range usedVariables(st.ControlValues) {
			path = objectPath(path)
			if len(path) > 1 && (path[0] == "context" || path[0] == "payload" && !declared) {
				used[strings.Join(path, ".")] = true
			}
		}
		if st.Type == "digest" && st.StepID != "" {
			out = append(out, "steps."+st.StepID+".events", "steps."+st.StepID+".eventCount")
		}
	}
	contexts := false
	for p := range used {
		payload = append(payload, p)
		contexts = contexts || strings.HasPrefix(p, "context.")
	}
	sort.Strings(payload)
	out = append(out, payload...)
	if !contexts {
		out = append(out, "context") // its types are the trigger's: the author names one
	}
	return slices.Compact(out)
}

// objectPath is path up to its first list index (a number, *, first,
// last) or size: a variable names an object's field, and the editor
// offers the list itself rather than one item of it.
func objectPath(path []string) []string {
	for i, seg := range path {
		if seg == "*" || seg == "first" || seg == "last" || seg == "size" || isIndex(seg) {
			return path[:i]
		}
	}
	return path
}

// schemaPaths lists the properties a JSON Schema declares, nested ones
// too, each as a dotted path under prefix; nothing when it declares none.
func schemaPaths(node any, prefix string) []string {
	n, _ := node.(map[string]any)
	props, _ := n["properties"].(map[string]any)
	var out []string
	for name, sub := range props {
		path := prefix + "." + name
		if inner := schemaPaths(sub, path); len(inner) > 0 {
			out = append(out, inner...)
			continue
		}
		out = append(out, path)
	}
	return out
}

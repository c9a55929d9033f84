package subscribers

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxContextRefs is how many contexts a trigger or an inbox session may
// name, as the reference allows.
const MaxContextRefs = 5

// ParseContexts reads the contexts a trigger or an inbox session names
// (docs/content.md, "Contexts"): an object by type, each entry an id
// ({"tenant": "acme"}) or an object with an id and, optionally, data
// ({"tenant": {"id": "acme", "data": {…}}}). Absent or null names none.
// They come sorted by key.
func ParseContexts(raw json.RawMessage) ([]ContextRef, error) {
	refs := []ContextRef{}
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return refs, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("must be an object")
	}
	if len(m) > MaxContextRefs {
		return nil, fmt.Errorf("must have at most %d entries", MaxContextRefs)
	}
	for typ, v := range m {
		ref := ContextRef{Type: typ}
		if json.Unmarshal(v, &ref.ID) != nil {
			var obj struct {
				ID   string          `json:"id"`
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(v, &obj) != nil || obj.ID == "" {
				return nil, fmt.Errorf("entry %q must be an id or an object with an id", typ)
			}
			if d := strings.TrimSpace(string(obj.Data)); d != "" && d != "null" && d[0] != '{' {
				return nil, fmt.Errorf("entry %q: data must be an object", typ)
			}
			ref.ID, ref.Data = obj.ID, obj.Data
		}
		if problem := CheckContextRef(ref); problem != "" {
			return nil, fmt.Errorf("entry %q: %s", typ, problem)
		}
		refs = append(refs, ref)
	}
	SortContextRefs(refs)
	return refs, nil
}

// SortContextRefs sorts refs by their type:id key.
func SortContextRefs(refs []ContextRef) {
	slices.SortFunc(refs, func(a, b ContextRef) int { return strings.Compare(a.Type+":"+a.ID, b.Type+":"+b.ID) })
}

// ContextKeys are the refs' type:id keys, in order.
func ContextKeys(refs []ContextRef) []string {
	keys := make([]string, len(refs))
	for i, r := range refs {
		keys[i] = r.Type + ":" + r.ID
	}
	return keys
}

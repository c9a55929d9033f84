package messaging

import (
	"testing"

	"github.com/matryer/is"
)

func TestLayoutChoice(t *testing.T) {
	step := func(v any) map[string]any {
		return map[string]any{"steps": map[string]any{"s": map[string]any{"layoutId": v}}}
	}
	email := func(v any) map[string]any {
		return map[string]any{"channels": map[string]any{"email": map[string]any{"layoutId": v}}}
	}
	for _, tc := range []struct {
		name      string
		controls  map[string]any
		overrides map[string]any
		id        string
		use       bool
	}{
		{"default", map[string]any{}, nil, "", true},
		{"null means none", map[string]any{"layoutId": nil}, nil, "", false},
		{"named by the step", map[string]any{"layoutId": "brand"}, nil, "brand", true},
		{"none per step", map[string]any{}, step(nil), "", false},
		{"none for every email", map[string]any{}, email(nil), "", false},
		{"the trigger names one", map[string]any{"layoutId": nil}, step("promo"), "promo", true},
		{"the step's override wins", map[string]any{}, map[string]any{"steps": step("a")["steps"], "channels": email("b")["channels"]}, "a", true},
		{"the older override", map[string]any{"layoutId": "brand"}, map[string]any{"layoutIdentifier": "old"}, "old", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			id, use := layoutChoice(tc.controls, tc.overrides, "s")
			is.Equal(id, tc.id)   // the layout chosen
			is.Equal(use, tc.use) // whether one is used
		})
	}
}

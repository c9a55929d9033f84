package messaging

import (
	"testing"

	"github.com/matryer/is"
)

func TestUseLayout(t *testing.T) {
	is := is.New(t)
	is.True(useLayout(map[string]any{}, nil, "s"))                                                                                   // layout by default
	is.True(!useLayout(map[string]any{"layoutId": nil}, nil, "s"))                                                                   // null means none
	is.True(!useLayout(map[string]any{}, map[string]any{"steps": map[string]any{"s": map[string]any{"layoutId": nil}}}, "s"))        // overridden per step
	is.True(!useLayout(map[string]any{}, map[string]any{"channels": map[string]any{"email": map[string]any{"layoutId": nil}}}, "s")) // or for every email
}

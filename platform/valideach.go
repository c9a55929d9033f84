package platform

import (
	"context"
	"fmt"
)

// ValidEach runs Valid on each item of a list field and keys each problem
// by the item's JSON path (field.i.path), for a body's Valid that checks
// its list's items as their own bodies would be checked.
func ValidEach[T Validator](ctx context.Context, field string, items []T) map[string]string {
	problems := map[string]string{}
	for i, item := range items {
		for k, v := range item.Valid(ctx) {
			problems[fmt.Sprintf("%s.%d.%s", field, i, k)] = v
		}
	}
	return problems
}

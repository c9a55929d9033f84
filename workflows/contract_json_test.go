package workflows_test

import (
	"context"
	"encoding/json"

	"github.com/herald-notify/herald/workflows"
)

// summariesJSON answers the store's summaries as the messages list embeds
// them, for the tests that read them as JSON.
func summariesJSON(store *workflows.Store, ctx context.Context, env string, ids []string) (map[string]json.RawMessage, error) {
	sums, err := store.WorkflowSummaries(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(sums))
	for id, sum := range sums {
		if out[id], err = json.Marshal(sum); err != nil {
			return nil, err
		}
	}
	return out, nil
}

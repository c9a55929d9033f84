package messaging

import (
	"context"
	"time"

	"github.com/herald-notify/herald/workflows"
)

// liveCacheFor is how long live events reuse what they read of workflows
// (their severities, a notification's workflow): every event needs it,
// and a workflow renamed or given another severity shows in events a
// moment later.
const liveCacheFor = 2 * time.Second

type cachedSeverities struct {
	at  time.Time
	sev map[string]string
}

type cachedWorkflow struct {
	at time.Time
	wf *workflows.InboxWorkflow
}

// severities returns the environment's workflows' severities, read at most
// every liveCacheFor.
func (s *Store) severities(ctx context.Context, env string) (map[string]string, error) {
	if s.inbox.Workflows == nil {
		return nil, nil
	}
	if c, ok := s.liveCache.Load("sev\x00" + env); ok && time.Since(c.(cachedSeverities).at) < liveCacheFor {
		return c.(cachedSeverities).sev, nil
	}
	sev, err := s.inbox.Workflows.WorkflowSeverities(ctx, env)
	if err != nil {
		return nil, err
	}
	s.liveCache.Store("sev\x00"+env, cachedSeverities{at: time.Now(), sev: sev})
	return sev, nil
}

// liveWorkflow returns the workflow a live message names, or nil, read at
// most every liveCacheFor.
func (s *Store) liveWorkflow(ctx context.Context, env, id string) *workflows.InboxWorkflow {
	if id == "" || s.inbox.Workflows == nil {
		return nil
	}
	key := "wf\x00" + env + "\x00" + id
	if c, ok := s.liveCache.Load(key); ok && time.Since(c.(cachedWorkflow).at) < liveCacheFor {
		return c.(cachedWorkflow).wf
	}
	wfs, err := s.inbox.Workflows.InboxWorkflows(ctx, env, []string{id})
	if err != nil {
		return nil
	}
	var wf *workflows.InboxWorkflow
	if w, ok := wfs[id]; ok {
		wf = &w
	}
	s.liveCache.Store(key, cachedWorkflow{at: time.Now(), wf: wf})
	return wf
}

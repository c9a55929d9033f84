package workflows

import (
	"context"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// InboxWorkflow is the workflow an inbox notification names.
type InboxWorkflow struct {
	ID         string
	Identifier string // the trigger identifier (workflowId)
	Name       string
	Critical   bool
	Tags       []string
	Severity   string // high, medium, low or none
}

// InboxWorkflows returns the environment's workflows among ids, deleted
// ones included, keyed by _id; ids of no workflow are absent. Answers are
// cached until the next workflow write, and share their Tags with the cache:
// callers must not modify them.
func (s *Store) InboxWorkflows(ctx context.Context, environmentID string, ids []string) (out map[string]InboxWorkflow, err error) {
	defer platform.Wrap(&err, "inbox workflows")
	out = make(map[string]InboxWorkflow, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = environmentID + "\x00" + id
	}
	found, err := s.inboxWorkflows.GetMany(keys, func(missing []string) (map[string]sqldb.Loaded[InboxWorkflow], error) {
		missingIDs := make([]string, len(missing))
		for i, k := range missing {
			missingIDs[i] = k[len(environmentID)+1:]
		}
		list, err := s.workflowsByID(ctx, environmentID, missingIDs)
		if err != nil {
			return nil, err
		}
		// An id of no workflow is kept too, as the zero InboxWorkflow: _ids
		// are never reused, and a new workflow is a write, which empties
		// the cache.
		loaded := make(map[string]sqldb.Loaded[InboxWorkflow], len(missing))
		for _, k := range missing {
			loaded[k] = sqldb.Loaded[InboxWorkflow]{Keep: true}
		}
		for _, w := range list {
			loaded[environmentID+"\x00"+w.ID] = sqldb.Loaded[InboxWorkflow]{Value: inboxWorkflow(w), Keep: true}
		}
		return loaded, nil
	})
	if err != nil {
		return nil, err
	}
	for k, w := range found {
		if w.ID != "" {
			out[k[len(environmentID)+1:]] = w
		}
	}
	return out, nil
}

// workflowsByID reads the environment's workflows among ids, deleted ones
// included.
func (s *Store) workflowsByID(ctx context.Context, environmentID string, ids []string) ([]*workflow, error) {
	args := []any{environmentID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+workflowColumns+` FROM workflows
		WHERE environment_id = ? AND id IN (`+sqldb.Placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*workflow
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, w)
	}
	return list, rows.Err()
}

func inboxWorkflow(w *workflow) InboxWorkflow {
	sev := w.Severity
	if sev == "" {
		sev = "none"
	}
	tags := w.Tags
	if tags == nil {
		tags = []string{}
	}
	return InboxWorkflow{ID: w.ID, Identifier: w.WorkflowID, Name: w.Name,
		Critical: w.Preferences.Default.All.ReadOnly, Tags: tags, Severity: sev}
}

// WorkflowSeverities returns the severity of each of the environment's
// workflows whose severity is not none, keyed by _id: an inbox counts and
// filters its messages by their workflow's severity. Answers are cached
// until the next workflow write and shared: callers must not modify them.
func (s *Store) WorkflowSeverities(ctx context.Context, environmentID string) (out map[string]string, err error) {
	defer platform.Wrap(&err, "workflow severities")
	return s.severities.Get(environmentID, func() (map[string]string, error) {
		return s.readSeverities(ctx, environmentID)
	})
}

func (s *Store) readSeverities(ctx context.Context, environmentID string) (out map[string]string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, severity FROM workflows
		WHERE environment_id = ? AND severity NOT IN ('', 'none')`, environmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out = map[string]string{}
	for rows.Next() {
		var id, sev string
		if err := rows.Scan(&id, &sev); err != nil {
			return nil, err
		}
		out[id] = sev
	}
	return out, rows.Err()
}

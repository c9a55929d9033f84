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
// ones included, keyed by _id; ids of no workflow are absent.
func (s *Store) InboxWorkflows(ctx context.Context, environmentID string, ids []string) (out map[string]InboxWorkflow, err error) {
	defer platform.Wrap(&err, "inbox workflows")
	out = map[string]InboxWorkflow{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := s.workflowsByID(ctx, environmentID, ids)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		out[w.ID] = inboxWorkflow(w)
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
// filters its messages by their workflow's severity.
func (s *Store) WorkflowSeverities(ctx context.Context, environmentID string) (out map[string]string, err error) {
	defer platform.Wrap(&err, "workflow severities")
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

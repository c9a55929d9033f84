package workflows

import (
	"context"
	"errors"
	"net/url"

	"github.com/herald-notify/herald/platform"
)

// Listed is a workflow as a list shows it, with its status computed as
// GET /v2/workflows computes it (docs/workflows.md, "Status and issues").
type Listed struct {
	ID, WorkflowID, Name, Description string
	Tags                              []string
	Active                            bool
	Status                            string   // ACTIVE, INACTIVE or ERROR
	StepTypes                         []string // the types of its steps, each once, in order
	Steps                             int
	LastTriggeredAt                   string // "" when never triggered
	UpdatedAt                         string
}

// Workflows reads one page as GET /v2/workflows with query reads it: the
// same search, tags, order and errors, and the count of all that match.
// The integrations WithIntegrations gave tell which steps lack one.
func (s *Store) Workflows(ctx context.Context, environmentID string, query url.Values) (out []Listed, total int, err error) {
	f, err := readListQuery(platform.QueryOf(query))
	if err != nil {
		return nil, 0, err
	}
	list, total, err := s.list(ctx, environmentID, f)
	if err != nil {
		return nil, 0, err
	}
	lookup := &integrationLookup{integrations: s.integrations, envID: environmentID}
	for _, wf := range list {
		res, err := toResponse(ctx, wf, lookup)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, Listed{ID: wf.ID, WorkflowID: wf.WorkflowID, Name: wf.Name, Description: wf.Description,
			Tags: res.Tags, Active: wf.Active, Status: res.Status, StepTypes: res.StepTypeOverviews, Steps: len(wf.Steps),
			LastTriggeredAt: wf.LastTriggeredAt, UpdatedAt: wf.UpdatedAt})
	}
	return out, total, nil
}

// WithIntegrations makes Workflows check each channel step against the
// environment's integrations, as the API's answers do; it returns s.
func (s *Store) WithIntegrations(c IntegrationChecker) *Store {
	s.integrations = c
	return s
}

// SetActive activates or deactivates the workflow whose workflowId or _id
// is key, as PATCH /v2/workflows/{workflowId} with active does, or answers
// a 404.
func (s *Store) SetActive(ctx context.Context, tenant platform.Tenant, key string, active bool) error {
	_, err := s.patch(ctx, tenant, key, patchRequest{Active: &active})
	return err
}

// Sync copies the workflow whose workflowId or _id is key to the
// organization's environment targetID, as PUT
// /v2/workflows/{workflowId}/sync does (docs/api.md, "Workflow sync").
func (s *Store) Sync(ctx context.Context, tenant platform.Tenant, key, targetID string) error {
	_, err := s.syncTo(ctx, tenant, key, targetID, "")
	return err
}

// syncTo syncs the workflow to the environment targetID, which must be
// another of the tenant's organization: the same one is a 422, an unknown
// one a 404.
func (s *Store) syncTo(ctx context.Context, tenant platform.Tenant, key, targetID, note string) (*workflow, error) {
	if targetID == tenant.EnvironmentID {
		return nil, platform.InvalidField("targetEnvironmentId", targetID, "Cannot sync workflow to the same environment")
	}
	target, err := platform.FindEnvironment(ctx, s.db, tenant.OrganizationID, targetID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("Environment %s not found", targetID)
	}
	if err != nil {
		return nil, err
	}
	return s.sync(ctx, tenant, key, target, note)
}

// Named is a workflow as a choice among them names it.
type Named struct {
	ID, WorkflowID, Name string
}

// WorkflowNames returns the environment's live workflows by name, at most
// limit of them: what a filter offers to choose from, without the work
// of their steps.
func (s *Store) WorkflowNames(ctx context.Context, environmentID string, limit int) (out []Named, err error) {
	defer platform.Wrap(&err, "workflow names")
	rows, err := s.db.QueryContext(ctx, `SELECT id, workflow_id, name FROM workflows
		WHERE environment_id = ? AND deleted = 0 ORDER BY name, id LIMIT ?`, environmentID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n Named
		if err := rows.Scan(&n.ID, &n.WorkflowID, &n.Name); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

package workflows

import (
	"net/http"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// respond writes w as the response (docs/api.md, "Workflows"), with issues
// checked against the integrations of w's environment, the template engine
// and the cron parser.
func respond(w http.ResponseWriter, r *http.Request, status int, wf *workflow, integrations IntegrationChecker) error {
	res, err := toResponse(r.Context(), wf, &integrationLookup{integrations: integrations, envID: wf.EnvironmentID})
	if err != nil {
		return err
	}
	return platform.JSON(w, status, res)
}

// handleWorkflowCreate serves POST /v2/workflows.
func handleWorkflowCreate(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[workflowRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.create(r.Context(), platform.TenantFrom(r.Context()), req, originCloud)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusCreated, wf, integrations)
	})
}

// listOrder maps the orderBy values of GET /v2/workflows to columns.
var listOrder = map[string]string{
	"createdAt": "created_at", "updatedAt": "updated_at", "name": "name", "lastTriggeredAt": "last_triggered_at",
}

// handleWorkflowList serves GET /v2/workflows: newest first, paged by
// offset (or page) and limit, filtered by query on name and workflowId.
func handleWorkflowList(store *Store, integrations IntegrationChecker) http.Handler {
	type listResponse struct {
		Workflows  []workflowResponse `json:"workflows"`
		TotalCount int                `json:"totalCount"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		f, err := readListQuery(platform.NewQuery(r))
		if err != nil {
			return err
		}
		ctx := r.Context()
		tenant := platform.TenantFrom(ctx)
		list, total, err := store.list(ctx, tenant.EnvironmentID, f)
		if err != nil {
			return err
		}
		lookup := &integrationLookup{integrations: integrations, envID: tenant.EnvironmentID}
		out := listResponse{Workflows: make([]workflowResponse, 0, len(list)), TotalCount: total}
		for _, wf := range list {
			res, err := toResponse(ctx, wf, lookup)
			if err != nil {
				return err
			}
			out.Workflows = append(out.Workflows, res)
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// readListQuery reads the query of GET /v2/workflows: the page, the
// search and tags, and the order.
func readListQuery(q *platform.Query) (listFilter, error) {
	limit := q.Int("limit", 10, 1, 100)
	offset := q.Int("offset", 0, 0, 1_000_000)
	if page := q.Int("page", -1, 0, 100_000); page >= 0 {
		offset = page * limit
	}
	f := listFilter{
		offset:  offset,
		limit:   limit,
		query:   q.String("query"),
		tags:    q.Strings("tags"),
		orderBy: listOrder[q.Enum("orderBy", "createdAt", "createdAt", "updatedAt", "name", "lastTriggeredAt")],
		desc:    strings.ToUpper(q.Enum("orderDirection", "DESC", "ASC", "DESC", "asc", "desc")) == "DESC",
	}
	return f, q.Err()
}

// handleWorkflowGet serves GET /v2/workflows/{workflowId} (workflowId or _id).
func handleWorkflowGet(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		wf, err := store.get(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusOK, wf, integrations)
	})
}

// handleWorkflowUpdate serves PUT /v2/workflows/{workflowId}: the create
// body; steps matched by _id or stepId keep their _id.
func handleWorkflowUpdate(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[workflowRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.update(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), req)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusOK, wf, integrations)
	})
}

// handleWorkflowPatch serves PATCH /v2/workflows/{workflowId}: the fields
// the body names change (active, name, description, tags, validatePayload,
// payloadSchema, isTranslationEnabled), the others and the steps stay.
func handleWorkflowPatch(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[patchRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.patch(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), req)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusOK, wf, integrations)
	})
}

// handleWorkflowDelete serves DELETE /v2/workflows/{workflowId}: a soft
// delete answered with 204 (docs/api.md, "What strict clients check").
func handleWorkflowDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := store.remove(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId")); err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

// handleWorkflowSync serves PUT /v2/workflows/{workflowId}/sync
// (docs/api.md, "Workflow sync"): the target must be another environment of
// the caller's organization.
func handleWorkflowSync(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[syncRequest](r)
		if err != nil {
			return err
		}
		wf, err := store.syncTo(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), req.TargetEnvironmentID, req.VersionNote)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusOK, wf, integrations)
	})
}

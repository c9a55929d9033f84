package workflows

import "net/http"

// AddRoutes registers the workflow API (docs/api.md, "Workflows",
// "Workflow sync" and "The write side"). checker may be nil: workflows then
// carry no MISSING_INTEGRATION issues; parser may be nil: templates are then
// not parsed for issues.
func AddRoutes(mux *http.ServeMux, store *Store, checker IntegrationChecker, parser TemplateParser) {
	checks := checkers{integrations: checker, templates: parser}
	mux.Handle("POST /v2/workflows", handleWorkflowCreate(store, checks))
	mux.Handle("GET /v2/workflows", handleWorkflowList(store, checks))
	mux.Handle("GET /v2/workflows/{workflowId}", handleWorkflowGet(store, checks))
	mux.Handle("PUT /v2/workflows/{workflowId}", handleWorkflowUpdate(store, checks))
	mux.Handle("PATCH /v2/workflows/{workflowId}", handleWorkflowPatch(store, checks))
	mux.Handle("DELETE /v2/workflows/{workflowId}", handleWorkflowDelete(store))
	mux.Handle("PUT /v2/workflows/{workflowId}/sync", handleWorkflowSync(store, checks))
}

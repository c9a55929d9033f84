package workflows

import "net/http"

// AddRoutes registers the workflow API (docs/api.md, "Workflows",
// "Workflow sync" and "The write side") and the editor's routes
// (docs/editor.md). checker may be nil: workflows then
// carry no MISSING_INTEGRATION issues.
func AddRoutes(mux *http.ServeMux, store *Store, checker IntegrationChecker) {
	mux.Handle("POST /v2/workflows", handleWorkflowCreate(store, checker))
	mux.Handle("GET /v2/workflows", handleWorkflowList(store, checker))
	mux.Handle("GET /v2/workflows/{workflowId}", handleWorkflowGet(store, checker))
	mux.Handle("PUT /v2/workflows/{workflowId}", handleWorkflowUpdate(store, checker))
	mux.Handle("PATCH /v2/workflows/{workflowId}", handleWorkflowPatch(store, checker))
	mux.Handle("DELETE /v2/workflows/{workflowId}", handleWorkflowDelete(store))
	mux.Handle("PUT /v2/workflows/{workflowId}/sync", handleWorkflowSync(store, checker))
	mux.Handle("GET /v2/workflows/{workflowId}/steps/{stepId}", handleStepGet(store, checker))
	mux.Handle("POST /v2/workflows/{workflowId}/step/{stepId}/preview", handleStepPreview(store))
	mux.Handle("GET /v2/workflows/{workflowId}/test-data", handleTestData(store))
	mux.Handle("POST /v2/workflows/{workflowId}/duplicate", handleWorkflowDuplicate(store, checker))
	mux.Handle("GET /v2/workflows/{workflowId}/versions", handleVersionList(store))
	mux.Handle("GET /v2/workflows/{workflowId}/versions/{version}", handleVersionGet(store))
	mux.Handle("GET /v2/workflows/{workflowId}/versions/{version}/diff", handleVersionDiff(store))
	mux.Handle("POST /v2/workflows/{workflowId}/versions/{version}/restore", handleVersionRestore(store, checker))
	mux.Handle("POST /v2/workflows/{workflowId}/sync/diff", handleSyncDiff(store))
	mux.Handle("GET /v1/notification-templates", handleTemplateListV1(store))
	mux.Handle("POST /v1/notification-templates", handleTemplateCreateV1(store))
	mux.Handle("GET /v1/notification-templates/{templateId}", handleTemplateGetV1(store))
	mux.Handle("PUT /v1/notification-templates/{templateId}", handleTemplateUpdateV1(store))
	mux.Handle("DELETE /v1/notification-templates/{templateId}", handleTemplateDeleteV1(store))
	mux.Handle("PUT /v1/notification-templates/{templateId}/status", handleTemplateStatusV1(store))
	mux.Handle("GET /v1/notification-groups", handleGroupList(store))
	mux.Handle("POST /v1/notification-groups", handleGroupCreate(store))
	mux.Handle("GET /v1/notification-groups/{id}", handleGroupGet(store))
	mux.Handle("PATCH /v1/notification-groups/{id}", handleGroupUpdate(store))
	mux.Handle("DELETE /v1/notification-groups/{id}", handleGroupDelete(store))
	mux.Handle("POST /v2/layouts", handleLayoutCreate(store))
	mux.Handle("GET /v2/layouts", handleLayoutList(store))
	mux.Handle("GET /v2/layouts/{layoutId}", handleLayoutGet(store))
	mux.Handle("PUT /v2/layouts/{layoutId}", handleLayoutUpdate(store))
	mux.Handle("DELETE /v2/layouts/{layoutId}", handleLayoutDelete(store))
	mux.Handle("POST /v2/layouts/{layoutId}/duplicate", handleLayoutDuplicate(store))
	mux.Handle("POST /v2/layouts/{layoutId}/preview", handleLayoutPreview(store))
	mux.Handle("GET /v2/layouts/{layoutId}/usage", handleLayoutUsage(store))
	mux.Handle("POST /v2/translations", handleTranslationPut(store))
	mux.Handle("GET /v2/translations/{resourceType}/{resourceId}/{locale}", handleTranslationGet(store))
	mux.Handle("DELETE /v2/translations/{resourceType}/{resourceId}/{locale}", handleTranslationDelete(store))
	mux.Handle("POST /v2/translations/upload", handleTranslationUpload(store))
	mux.Handle("GET /v2/translations/group/{resourceType}/{resourceId}", handleTranslationGroup(store))
	mux.Handle("DELETE /v2/translations/{resourceType}/{resourceId}", handleTranslationDelete(store))
	mux.Handle("GET /v2/translations/master-json", handleMasterGet(store))
	mux.Handle("POST /v2/translations/master-json", handleMasterImport(store))
	mux.Handle("POST /v2/translations/master-json/upload", handleMasterUpload(store))
}

package console

import (
	"net/http"

	"github.com/herald-notify/herald/platform"
)

const (
	viewer = platform.RoleViewer
	editor = platform.RoleEditor
	admin  = platform.RoleAdmin
)

// addRoutes registers every console route, one line each, with the least
// role that may use it: the console's whole surface (docs/console.md).
func (c *console) addRoutes(mux *http.ServeMux) {
	d := c.d
	mux.Handle("GET /console/assets/{name}", handleAsset())
	mux.Handle("GET /console/login", c.open(handleSignInForm(d)))
	mux.Handle("POST /console/login", c.open(handleSignIn(d)))
	mux.Handle("GET /console/setup", c.open(handleSetupForm(d)))
	mux.Handle("POST /console/setup", c.open(handleSetup(d)))
	mux.Handle("POST /console/logout", c.handle(viewer, handleSignOut(d)))
	mux.Handle("GET /console/account", c.handle(viewer, handleAccount()))
	mux.Handle("POST /console/account", c.handle(viewer, handlePasswordChange(d)))
	mux.Handle("GET /console/{$}", c.handle(viewer, handleHome()))
	mux.Handle("GET /console/switch", c.handle(viewer, handleSwitch()))
	mux.Handle("/console/", c.handle(viewer, handleNotFound()))

	mux.Handle("GET /console/team", c.handle(admin, handleTeam(d)))
	mux.Handle("POST /console/team", c.handle(admin, handleTeamAdd(d)))
	mux.Handle("POST /console/team/{id}/role", c.handle(admin, handleTeamRole(d)))
	mux.Handle("POST /console/team/{id}/access", c.handle(admin, handleTeamAccess(d)))
	mux.Handle("POST /console/team/{id}/remove", c.handle(admin, handleTeamRemove(d)))

	mux.Handle("GET /console/env/{env}/{$}", c.handle(viewer, handleOverview(d.Activity, d.Messages)))
	mux.Handle("GET /console/env/{env}/activity", c.handle(viewer, handleActivity(d.Activity, d.Workflows)))
	mux.Handle("GET /console/env/{env}/activity/{id}", c.handle(viewer, handleNotification(d.Activity, d.Messages)))
	mux.Handle("GET /console/env/{env}/messages/{id}/email", c.handle(viewer, handleEmail(d.Messages)))
	mux.Handle("GET /console/env/{env}/subscribers", c.handle(viewer, handleSubscribers(d.Subscribers)))
	mux.Handle("GET /console/env/{env}/subscribers/{subscriberId}", c.handle(viewer, handleSubscriber(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/profile", c.handle(editor, handleProfileSave(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/credentials", c.handle(editor, handleCredentialsSave(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/credentials/remove", c.handle(editor, handleCredentialsRemove(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/preferences", c.handle(editor, handlePreferenceSet(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/schedule", c.handle(editor, handleScheduleSave(d)))
	mux.Handle("POST /console/env/{env}/subscribers/{subscriberId}/topics", c.handle(editor, handleSubscriberTopics(d)))
	mux.Handle("GET /console/env/{env}/topics", c.handle(viewer, handleTopics(d.Topics)))
	mux.Handle("POST /console/env/{env}/topics", c.handle(editor, handleTopicCreate(d.Topics)))
	mux.Handle("GET /console/env/{env}/topics/{key}", c.handle(viewer, handleTopic(d.Topics)))
	mux.Handle("POST /console/env/{env}/topics/{key}/rename", c.handle(editor, handleTopicRename(d.Topics)))
	mux.Handle("POST /console/env/{env}/topics/{key}/delete", c.handle(editor, handleTopicDelete(d.Topics)))
	mux.Handle("POST /console/env/{env}/topics/{key}/members", c.handle(editor, handleTopicMembers(d.Topics)))
	mux.Handle("GET /console/env/{env}/workflows", c.handle(viewer, handleWorkflows(d.Workflows)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/active", c.handle(editor, handleWorkflowActive(d.Workflows)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/sync", c.handle(editor, handleWorkflowSync(d.Workflows)))
	mux.Handle("GET /console/env/{env}/previews/{id}/email", c.handle(viewer, handlePreviewEmail()))
	mux.Handle("GET /console/env/{env}/workflows/{workflowId}/edit", c.handle(viewer, handleWorkflowEditor(d.Workflows, d.Activity)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/edit", c.handle(editor, handleWorkflowEdit(d.Workflows)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/preview", c.handle(viewer, handleWorkflowPreview(d.Workflows)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/versions/{version}/restore", c.handle(editor, handleWorkflowRestore(d.Workflows)))
	mux.Handle("POST /console/env/{env}/workflows/{workflowId}/test", c.handle(editor, handleWorkflowTest(d.Workflows, d.Tests)))
	mux.Handle("GET /console/env/{env}/workflows/{workflowId}/test/{transactionId}", c.handle(viewer, handleWorkflowTestRun(d.Workflows, d.Activity)))
	mux.Handle("GET /console/env/{env}/workflows/{workflowId}/translations", c.handle(viewer, handleTranslations(d.Content)))
	mux.Handle("GET /console/env/{env}/layouts", c.handle(viewer, handleLayouts(d.Content)))
	mux.Handle("GET /console/env/{env}/layouts/{layoutId}/preview", c.handle(viewer, handleLayoutPreview(d.Content)))
	mux.Handle("GET /console/env/{env}/contexts", c.handle(viewer, handleContexts(d.Contexts)))
	mux.Handle("GET /console/env/{env}/contexts/{type}/{id}", c.handle(viewer, handleContext(d.Contexts)))
	mux.Handle("POST /console/env/{env}/contexts/{type}/{id}", c.handle(editor, handleContextSave(d.Contexts)))
	mux.Handle("POST /console/env/{env}/contexts/{type}/{id}/delete", c.handle(editor, handleContextDelete(d.Contexts)))
	mux.Handle("GET /console/env/{env}/integrations", c.handle(viewer, handleIntegrations(d.Integrations)))
	mux.Handle("GET /console/env/{env}/integrations/new", c.handle(admin, handleIntegrationNew()))
	mux.Handle("POST /console/env/{env}/integrations", c.handle(admin, handleIntegrationCreate(d.Integrations)))
	mux.Handle("POST /console/env/{env}/integrations/check", c.handle(admin, handleIntegrationCheck(d.Integrations)))
	mux.Handle("GET /console/env/{env}/integrations/{id}", c.handle(viewer, handleIntegration(d.Integrations)))
	mux.Handle("POST /console/env/{env}/integrations/{id}", c.handle(admin, handleIntegrationUpdate(d.Integrations)))
	mux.Handle("POST /console/env/{env}/integrations/{id}/active", c.handle(admin, handleIntegrationActive(d.Integrations)))
	mux.Handle("POST /console/env/{env}/integrations/{id}/primary", c.handle(admin, handleIntegrationPrimary(d.Integrations)))
	mux.Handle("POST /console/env/{env}/integrations/{id}/delete", c.handle(admin, handleIntegrationDelete(d.Integrations)))
	mux.Handle("GET /console/env/{env}/webhooks", c.handle(admin, handleWebhooks(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks", c.handle(admin, handleWebhookCreate(d.Webhooks)))
	mux.Handle("GET /console/env/{env}/webhooks/{id}", c.handle(admin, handleWebhook(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}", c.handle(admin, handleWebhookUpdate(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}/delete", c.handle(admin, handleWebhookDelete(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}/secret", c.handle(admin, handleWebhookSecret(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}/test", c.handle(admin, handleWebhookTest(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}/replay", c.handle(admin, handleWebhookReplay(d.Webhooks)))
	mux.Handle("POST /console/env/{env}/webhooks/{id}/deliveries/{deliveryId}/replay", c.handle(admin, handleDeliveryReplay(d.Webhooks)))
	mux.Handle("GET /console/env/{env}/keys", c.handle(admin, handleKeys(d)))
	mux.Handle("POST /console/env/{env}/keys", c.handle(admin, handleKeyCreate(d)))
	mux.Handle("POST /console/env/{env}/keys/{id}/revoke", c.handle(admin, handleKeyRevoke(d)))
}

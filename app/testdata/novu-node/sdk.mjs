// Drives a Herald started with HERALD_COMPAT=novu through the reference
// platform's older, unmodified @novu/node client: every method whose route
// Herald serves (docs/compatibility.md lists them). The client returns the
// raw axios response, so each check reads the status and the {data: …}
// envelope itself. TestSDK_NovuNode runs it with HERALD_URL and HERALD_KEY
// set; it prints one line per step and exits non-zero on the first failure.
import { Novu } from "@novu/node";

const novu = new Novu(process.env.HERALD_KEY, { backendUrl: process.env.HERALD_URL });
const called = new Set();

function check(ok, what, got) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(got)?.slice(0, 4000)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

// call runs one client method, checks its status and returns the body's
// data (the envelope's content, or the bare page).
async function call(method, status, fn) {
  called.add(method);
  let res;
  try {
    res = await fn();
  } catch (e) {
    console.error(`FAIL ${method}: ${e?.message}`);
    if (e?.response) console.error(`status ${e.response.status}: ${JSON.stringify(e.response.data).slice(0, 4000)}`);
    process.exit(1);
  }
  check(res.status === status, `${method} answers ${status}`, { status: res.status, body: res.data });
  return res.data;
}

// Environments.
const me = (await call("environments.getCurrent", 200, () => novu.environments.getCurrent())).data;
check(me.name === "Development" && me._id && me.identifier, "the key's environment is Development", me);
const envs = (await call("environments.getAll", 200, () => novu.environments.getAll())).data;
check(envs.some((e) => e._id === me._id), "the environments include the key's", envs);
const keys = (await call("environments.getApiKeys", 200, () => novu.environments.getApiKeys())).data;
check(keys.length === 1 && keys[0].key.endsWith(process.env.HERALD_KEY.slice(-4)), "the key is shown by its last four characters", keys);

// The 2.6 client's payload type has no color, which Herald requires as the
// current API does; the client sends what it is given.
const created = (await call("environments.create", 201, () =>
  novu.environments.create({ name: "Node staging", color: "#4c6ef5", parentId: me._id }),
)).data;
check(created.name === "Node staging" && created._parentId === me._id && created.apiKeys.length === 1, "the environment was created", created);
const changed = (await call("environments.updateOne", 200, () => novu.environments.updateOne(created._id, { name: "Node QA" }))).data;
check(changed.name === "Node QA" && changed._id === created._id, "the environment was renamed", changed);

// Integrations.
const inApp = (await call("integrations.getInAppStatus", 200, () => novu.integrations.getInAppStatus())).data;
check(inApp === true, "the in-app integration is active", inApp);
const mail = (await call("integrations.create", 201, () =>
  novu.integrations.create("sendgrid", { channel: "email", active: true, credentials: { apiKey: "k", from: "a@example.com" } }),
)).data;
check(mail.providerId === "sendgrid" && mail._id, "the integration was created", mail);
const all = (await call("integrations.getAll", 200, () => novu.integrations.getAll())).data;
check(all.some((i) => i._id === mail._id), "the integration is listed", all.length);
const active = (await call("integrations.getActive", 200, () => novu.integrations.getActive())).data;
check(active.some((i) => i._id === mail._id), "the integration is active", active.length);
const receipts = (await call("integrations.getWebhookProviderStatus", 200, () => novu.integrations.getWebhookProviderStatus("sendgrid"))).data;
check(receipts === true, "Herald reads SendGrid's receipts", receipts);
const renamed = (await call("integrations.update", 200, () => novu.integrations.update(mail._id, { name: "Mail" }))).data;
check(renamed.name === "Mail", "the integration was renamed", renamed.name);
const primary = (await call("integrations.setIntegrationAsPrimary", 200, () => novu.integrations.setIntegrationAsPrimary(mail._id))).data;
check(primary.primary === true, "the integration is primary", primary.primary);

// Subscribers.
const ada = (await call("subscribers.identify", 201, () =>
  novu.subscribers.identify("node-ada", { firstName: "Ada", email: "ada@example.com", data: { plan: "pro" } }),
)).data;
check(ada.subscriberId === "node-ada" && ada.firstName === "Ada", "the subscriber was created", ada);
const bulk = (await call("subscribers.bulkCreate", 201, () =>
  novu.subscribers.bulkCreate([{ subscriberId: "node-bea" }, { subscriberId: "node-cy" }]),
)).data;
check(bulk.created.length === 2, "two subscribers were created in bulk", bulk);
const online = (await call("subscribers.updateOnlineStatus", 200, () => novu.subscribers.updateOnlineStatus("node-ada", true))).data;
check(online.isOnline === true, "the subscriber is online", online);
const got = (await call("subscribers.get", 200, () => novu.subscribers.get("node-ada"))).data;
check(got.email === "ada@example.com", "the subscriber reads back", got);
const page = await call("subscribers.list", 200, () => novu.subscribers.list(0, 2));
check(page.page === 0 && page.pageSize === 2 && page.hasMore === true && page.data.length === 2, "the first page of subscribers", page);
const updated = (await call("subscribers.update", 200, () => novu.subscribers.update("node-ada", { lastName: "Lovelace" }))).data;
check(updated.lastName === "Lovelace" && updated.firstName === "Ada", "the subscriber was updated", updated);
const withToken = (await call("subscribers.setCredentials", 200, () =>
  novu.subscribers.setCredentials("node-ada", "fcm", { deviceTokens: ["token-1"] }),
)).data;
check(withToken.channels.some((c) => c.providerId === "fcm" && c.credentials.deviceTokens[0] === "token-1"), "the device token was set", withToken.channels);
const unset = (await call("subscribers.unsetCredentials", 200, () => novu.subscribers.unsetCredentials("node-ada", "fcm"))).data;
check(unset.channels.every((c) => c.providerId !== "fcm" || c.credentials.deviceTokens.length === 0), "the device tokens were unset", unset.channels);
await call("subscribers.deleteCredentials", 204, () => novu.subscribers.deleteCredentials("node-ada", "fcm"));

// Notification groups and templates (Herald's workflows).
const groups = (await call("notificationGroups.get", 200, () => novu.notificationGroups.get())).data;
check(groups[0].name === "General", "the default group comes first", groups);
const group = (await call("notificationGroups.create", 201, () => novu.notificationGroups.create("Node"))).data;
check(group.name === "Node" && group._id, "the group was created", group);
const groupRead = (await call("notificationGroups.getOne", 200, () => novu.notificationGroups.getOne(group._id))).data;
check(groupRead._id === group._id, "the group reads back", groupRead);
const groupRenamed = (await call("notificationGroups.update", 200, () => novu.notificationGroups.update(group._id, { name: "Node SDK" }))).data;
check(groupRenamed.name === "Node SDK", "the group was renamed", groupRenamed);

const template = (await call("notificationTemplates.create", 201, () =>
  novu.notificationTemplates.create({
    name: "Node hello",
    notificationGroupId: groups[0]._id,
    active: true,
    steps: [{ template: { type: "in_app", content: "Hi {{payload.name}}" } }],
  }),
)).data;
check(template.active === true && template.draft === false && template.triggers[0].identifier, "the template was created active", template);
const workflowId = template.triggers[0].identifier;
const templates = await call("notificationTemplates.getAll", 200, () => novu.notificationTemplates.getAll(0, 10));
check(templates.totalCount === 1 && templates.data[0]._id === template._id, "the template is listed", templates);
const templateRead = (await call("notificationTemplates.getOne", 200, () => novu.notificationTemplates.getOne(template._id))).data;
check(templateRead.steps[0].template.content === "Hi {{payload.name}}", "the template reads back with its content", templateRead.steps);
const moved = (await call("notificationTemplates.update", 200, () =>
  novu.notificationTemplates.update(template._id, { notificationGroupId: group._id, description: "Greets" }),
)).data;
check(moved._notificationGroupId === group._id && moved.description === "Greets", "the template moved to the new group", moved);
const paused = (await call("notificationTemplates.updateStatus", 200, () => novu.notificationTemplates.updateStatus(template._id, false))).data;
check(paused.active === false, "the template was turned off", paused.active);
const resumed = (await call("notificationTemplates.updateStatus", 200, () => novu.notificationTemplates.updateStatus(template._id, true))).data;
check(resumed.active === true, "and on again", resumed.active);

// Events, and what they leave behind.
const ack = (await call("events.trigger", 201, () => novu.events.trigger(workflowId, { to: "node-ada", payload: { name: "Ada" } }))).data;
check(ack.acknowledged === true && ack.status === "processed" && ack.transactionId, "the trigger is processed", ack);
const acks = (await call("events.bulkTrigger", 201, () =>
  novu.events.bulkTrigger([{ name: workflowId, to: "node-bea", payload: { name: "Bea" } }]),
)).data;
check(acks.length === 1 && acks[0].acknowledged === true, "the bulk trigger is processed", acks);
const cast = (await call("events.broadcast", 200, () => novu.events.broadcast(workflowId, { payload: { name: "All" } }))).data;
check(cast.acknowledged === true, "the broadcast is accepted", cast);
const canceled = (await call("events.cancel", 200, () => novu.events.cancel("node-nothing-pending"))).data;
check(canceled === false, "nothing pending is canceled", canceled);

let feed;
for (let i = 0; i < 200; i++) {
  feed = await call("subscribers.getNotificationsFeed", 200, () => novu.subscribers.getNotificationsFeed("node-ada", { page: 0 }));
  if (feed.data.some((m) => m.transactionId === ack.transactionId)) break;
  await new Promise((r) => setTimeout(r, 50));
}
const message = feed.data.find((m) => m.transactionId === ack.transactionId);
check(message && message.content === "Hi Ada", "the message reached the feed", feed.data);
const unseen = (await call("subscribers.getUnseenCount", 200, () => novu.subscribers.getUnseenCount("node-ada", false))).data;
check(unseen.count >= 1, "the message is unseen", unseen);
const seen = (await call("subscribers.markMessageSeen", 201, () => novu.subscribers.markMessageSeen("node-ada", message._id))).data;
check(seen[0].seen === true, "the message was marked seen", seen);
const read = (await call("subscribers.markMessageRead", 201, () => novu.subscribers.markMessageRead("node-ada", message._id))).data;
check(read[0].read === true, "the message was marked read", read);
const unread = (await call("subscribers.markMessageAs", 201, () => novu.subscribers.markMessageAs("node-ada", message._id, { read: false }))).data;
check(unread[0].read === false, "the message was marked unread", unread);
const acted = (await call("subscribers.markMessageActionSeen", 201, () =>
  novu.subscribers.markMessageActionSeen("node-ada", message._id, "primary", { status: "done", payload: { via: "node" } }),
)).data;
check(acted._id === message._id && acted.cta.action.status === "done" && acted.cta.action.result.type === "primary", "the message's action was done", acted.cta);
const marked = (await call("subscribers.markAllMessagesAs", 201, () => novu.subscribers.markAllMessagesAs("node-ada", "read"))).data;
check(marked >= 1, "every message was marked read", marked);

const messages = await call("messages.list", 200, () => novu.messages.list({ subscriberId: "node-ada", channel: "in_app" }));
check(messages.data.some((m) => m._id === message._id), "the message is listed", messages.data.length);

let details = [];
const notifications = await novu.http.get("/notifications", { params: { transactionId: ack.transactionId } });
const notificationId = notifications.data.data[0]?._id;
details = (await call("executionDetails.get", 200, () => novu.executionDetails.get({ notificationId, subscriberId: "node-ada" }))).data;
check(details.length > 0 && details.every((d) => d._notificationId === notificationId), "the notification's execution details", details.length);

// Preferences.
const prefs = (await call("subscribers.getPreference", 200, () => novu.subscribers.getPreference("node-ada"))).data;
check(prefs.some((p) => p.template._id === template._id), "the workflow's preferences are listed", prefs);
const global = (await call("subscribers.getGlobalPreference", 200, () => novu.subscribers.getGlobalPreference("node-ada"))).data;
check(global[0].preference.enabled === true, "the global preference", global);
const byLevel = (await call("subscribers.getPreferenceByLevel", 200, () => novu.subscribers.getPreferenceByLevel("node-ada", "template"))).data;
check(byLevel.some((p) => p.template._id === template._id), "the workflow-level preferences", byLevel);
const offInApp = (await call("subscribers.updatePreference", 200, () =>
  novu.subscribers.updatePreference("node-ada", template._id, { channel: { type: "in_app", enabled: false } }),
)).data;
check(offInApp.preference.channels.in_app === false, "in-app turned off for the workflow", offInApp);
const offGlobally = (await call("subscribers.updateGlobalPreference", 200, () =>
  novu.subscribers.updateGlobalPreference("node-ada", { preferences: [{ type: "in_app", enabled: false }] }),
)).data;
check(offGlobally.preference.channels.in_app === false, "in-app turned off globally", offGlobally);

// Topics.
const topic = (await call("topics.create", 201, () => novu.topics.create({ key: "node-news", name: "News" }))).data;
check(topic.key === "node-news", "the topic was created", topic);
const added = (await call("topics.addSubscribers", 200, () => novu.topics.addSubscribers("node-news", { subscribers: ["node-ada", "nobody"] }))).data;
check(added.succeeded.includes("node-ada") && added.failed.notFound.includes("nobody"), "the subscriber was added", added);
const member = (await call("topics.getSubscriber", 200, () => novu.topics.getSubscriber("node-news", "node-ada"))).data;
check(member.externalSubscriberId === "node-ada", "the subscriber is a member", member);
const checked = (await call("topics.checkSubscriber", 200, () => novu.topics.checkSubscriber("node-news", "node-ada"))).data;
check(checked.topicKey === "node-news", "the membership checks out", checked);
const topics = await call("topics.list", 200, () => novu.topics.list({ page: 0, pageSize: 10 }));
check(topics.data.some((t) => t.key === "node-news"), "the topic is listed", topics);
const topicRead = (await call("topics.get", 200, () => novu.topics.get("node-news"))).data;
check(topicRead.subscribers.includes("node-ada"), "the topic reads back with its member", topicRead);
const topicRenamed = (await call("topics.rename", 200, () => novu.topics.rename("node-news", "Headlines"))).data;
check(topicRenamed.name === "Headlines", "the topic was renamed", topicRenamed);
await call("topics.removeSubscribers", 204, () => novu.topics.removeSubscribers("node-news", { subscribers: ["node-ada"] }));
await call("topics.delete", 204, () => novu.topics.delete("node-news"));

// Tenants (Herald's tenant contexts).
const acme = (await call("tenants.create", 201, () => novu.tenants.create("node-acme", { name: "Acme", data: { tier: "gold" } }))).data;
check(acme.identifier === "node-acme" && acme.name === "Acme" && acme.data.tier === "gold", "the tenant was created", acme);
const tenants = await call("tenants.list", 200, () => novu.tenants.list({ page: 0, limit: 10 }));
check(tenants.data.some((t) => t.identifier === "node-acme") && tenants.hasMore === false, "the tenant is listed", tenants);
const tenantRead = (await call("tenants.get", 200, () => novu.tenants.get("node-acme"))).data;
check(tenantRead._id === acme._id, "the tenant reads back", tenantRead);
const tenantRenamed = (await call("tenants.update", 200, () => novu.tenants.update("node-acme", { identifier: "node-acme-inc", name: "Acme Inc" }))).data;
check(tenantRenamed.identifier === "node-acme-inc" && tenantRenamed.name === "Acme Inc" && tenantRenamed.data.tier === "gold", "the tenant was renamed", tenantRenamed);
await call("tenants.delete", 204, () => novu.tenants.delete("node-acme-inc"));

// Deletes, last.
const gone = (await call("messages.deleteById", 200, () => novu.messages.deleteById(message._id))).data;
check(gone.acknowledged === true, "the message was deleted", gone);
await call("messages.deleteByTransactionId", 204, () => novu.messages.deleteByTransactionId(acks[0].transactionId));
const deleted = (await call("notificationTemplates.delete", 200, () => novu.notificationTemplates.delete(template._id))).data;
check(deleted === true, "the template was deleted", deleted);
const groupGone = (await call("notificationGroups.delete", 200, () => novu.notificationGroups.delete(group._id))).data;
check(groupGone.acknowledged === true && groupGone.status === "deleted", "the group was deleted", groupGone);
const subGone = (await call("subscribers.delete", 200, () => novu.subscribers.delete("node-cy"))).data;
check(subGone.acknowledged === true, "the subscriber was deleted", subGone);
const integrationGone = (await call("integrations.delete", 200, () => novu.integrations.delete(mail._id))).data;
check(Array.isArray(integrationGone), "the integration was deleted", integrationGone);

console.log(`called: ${[...called].sort().join(" ")}`);
console.log("sdk: all ok");

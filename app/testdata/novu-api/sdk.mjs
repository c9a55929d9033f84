// Drives a Herald started with HERALD_COMPAT=novu through the reference
// platform's unmodified @novu/api SDK, which validates every answer against
// its schemas (an SDKValidationError otherwise). TestSDK_NovuAPI runs it
// with HERALD_URL and HERALD_KEY set; it prints one line per step and exits
// non-zero on the first failure.
import { Novu } from "@novu/api";
import * as components from "@novu/api/models/components/index.js";

const novu = new Novu({ secretKey: process.env.HERALD_KEY, serverURL: process.env.HERALD_URL });

function check(ok, what, got) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(got)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    console.error(`FAIL ${what}: ${e?.name}: ${e?.message}`);
    if (e?.rawValue !== undefined) console.error(`raw: ${JSON.stringify(e.rawValue).slice(0, 4000)}`);
    if (e?.body !== undefined) console.error(`body: ${String(e.body).slice(0, 4000)}`);
    process.exit(1);
  }
}

const created = await step("create a workflow", () =>
  novu.workflows.create({
    name: "SDK hello",
    workflowId: "sdk-hello",
    active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "Hi {{ payload.name }}" } }],
  }),
);
check(created.result.workflowId === "sdk-hello", "the created workflow has its workflowId", created.result.workflowId);
check(created.result.origin === "novu-cloud", "its origin is spelled novu-cloud", created.result.origin);

const read = await step("read the workflow", () => novu.workflows.get("sdk-hello"));
check(read.result.id === created.result.id, "the workflow reads back", read.result.id);

const sub = await step("create a subscriber", () =>
  novu.subscribers.create({ subscriberId: "sdk-ada", firstName: "Ada", email: "ada@example.com" }),
);
check(sub.result.subscriberId === "sdk-ada", "the subscriber was created", sub.result.subscriberId);

const ack = await step("trigger the workflow", () =>
  novu.trigger({ workflowId: "sdk-hello", to: "sdk-ada", payload: { name: "Ada" } }),
);
check(ack.result.acknowledged === true && ack.result.status === "processed", "the trigger is processed", ack.result);
const transactionId = ack.result.transactionId;

let notification;
for (let i = 0; i < 200 && !notification; i++) {
  const list = await step("list notifications", () => novu.notifications.list({ transactionId }));
  const found = list.result.data.find((n) => n.jobs?.every((j) => j.status === "completed"));
  if (found) notification = found;
  else await new Promise((r) => setTimeout(r, 50));
}
check(notification !== undefined, "the trigger's notification is listed with its jobs completed", notification);
check(notification.jobs.some((j) => j.providerId === "novu"), "its in-app job's provider is spelled novu",
  notification.jobs.map((j) => j.providerId));

const one = await step("read the notification", () => novu.notifications.retrieve(notification.id));
check(one.result.transactionId === transactionId, "the notification reads back", one.result.transactionId);

const feed = await step("list the subscriber's messages", () =>
  novu.messages.retrieve({ subscriberId: "sdk-ada", channel: "in_app" }),
);
check(feed.result.data.length === 1 && feed.result.data[0].content === "Hi Ada", "the message is rendered", feed.result.data);
await step("create an inactive workflow", () =>
  novu.workflows.create({
    name: "SDK paused",
    workflowId: "sdk-paused",
    active: false,
    steps: [{ name: "Text", type: "sms", controlValues: { body: "Hi" } }],
  }),
);
const prefs = await step("list the subscriber's preferences", () =>
  novu.subscribers.preferences.list({ subscriberId: "sdk-ada", criticality: "all" }),
);
check(prefs.result.workflows.map((w) => w.workflow.identifier).join() === "sdk-hello",
  "only the active workflow's preferences are listed", prefs.result.workflows.map((w) => w.workflow.identifier));
check(prefs.result.global.channels.sms === undefined, "and only its channels globally", prefs.result.global.channels);

const subscribed = await step("subscribe to a topic", () =>
  novu.topics.subscriptions.create({ subscriptions: ["sdk-ada"], name: "SDK news" }, "sdk-news"),
);
check(subscribed.result.data.length === 1 && subscribed.result.data[0].subscriber?.subscriberId === "sdk-ada",
  "the subscription is answered with its subscriber", subscribed.result);
check(subscribed.result.data[0].topic.key === "sdk-news", "and its topic", subscribed.result.data[0].topic);

const listed = await step("list the topic's subscriptions", () => novu.topics.subscriptions.list({ topicKey: "sdk-news" }));
check(listed.result.data.length === 1 && listed.result.data[0].id === subscribed.result.data[0].id,
  "the subscription is listed", listed.result.data);

const renamed = await step("name the subscription", () =>
  novu.topics.subscriptions.update({ topicKey: "sdk-news", identifier: subscribed.result.data[0].identifier,
    updateTopicSubscriptionRequestDto: { name: "Ada's news" } }),
);
check(renamed.result.name === "Ada's news" && renamed.result.subscriber?.subscriberId === "sdk-ada", "the subscription is named", renamed.result);
const adaTopics = await step("list the subscriber's subscriptions", () => novu.subscribers.topics.list({ subscriberId: "sdk-ada" }));
check(adaTopics.result.data.length === 1 && adaTopics.result.data[0].topic.key === "sdk-news", "the subscriber's topic is listed", adaTopics.result);
const unsubscribed = await step("unsubscribe from the topic", () =>
  novu.topics.subscriptions.delete({ subscriptions: ["sdk-ada"] }, "sdk-news"),
);
check(unsubscribed.result.data.length === 1 && unsubscribed.result.meta.successful === 1,
  "the removed subscription is answered", unsubscribed.result);
const liked = await step("create a workflow that reads the actor", () =>
  novu.workflows.create({
    name: "SDK liked",
    workflowId: "sdk-liked",
    active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "{{ actor.firstName }} liked it" } }],
  }),
);
check(liked.result.status === "ACTIVE", "actor.* is a known variable", liked.result.steps?.[0]?.issues);
await step("trigger it with an actor", () =>
  novu.trigger({ workflowId: "sdk-liked", to: "sdk-ada", actor: { subscriberId: "sdk-bo", firstName: "Bo" } }),
);
let likedMessage;
for (let i = 0; i < 200 && !likedMessage; i++) {
  const msgs = await step("list the subscriber's messages", () =>
    novu.messages.retrieve({ subscriberId: "sdk-ada", channel: "in_app" }),
  );
  likedMessage = msgs.result.data.find((m) => m.content !== "Hi Ada");
  if (!likedMessage) await new Promise((r) => setTimeout(r, 50));
}
check(likedMessage?.content === "Bo liked it", "the actor's fields are rendered", likedMessage);
// The editor's routes. The SDK has operations for one step and its
// preview; test data and duplicate it does not call, so their answers are
// checked against the SDK's own schemas for the same shapes.
const editorWorkflow = await step("create a workflow of every channel", () =>
  novu.workflows.create({
    name: "SDK editor",
    workflowId: "sdk-editor",
    steps: [
      { name: "Inbox", type: "in_app", controlValues: { subject: "Order {{ payload.order }}", body: "Hi {{ subscriber.firstName }}",
        primaryAction: { label: "Open", redirect: { url: "/orders/{{ payload.order }}" } } } },
      { name: "Mail", type: "email", controlValues: { subject: "Your order {{ payload.order }}", body: "<p>{{ payload.order }}</p>" } },
      { name: "Text", type: "sms", controlValues: { body: "Order {{ payload.order }}" } },
      { name: "Buzz", type: "push", controlValues: { subject: "Order", body: "{{ payload.order }}" } },
      { name: "Talk", type: "chat", controlValues: { body: "{{ payload.order }}" } },
      { name: "Wait", type: "delay", controlValues: { amount: 1, unit: "minutes" } },
      { name: "Bundle", type: "digest", controlValues: { amount: 5, unit: "minutes" } },
      { name: "Slow", type: "throttle", controlValues: { amount: 1, unit: "hours", threshold: 2 } },
      { name: "Code", type: "custom", controlValues: { text: "{{ payload.order }}" } },
    ],
  }),
);
const mailStep = editorWorkflow.result.steps.find((s) => s.type === "email");
const stepRead = await step("retrieve a step", () => novu.workflows.steps.retrieve("sdk-editor", mailStep.stepId));
check(stepRead.result.id === mailStep.id && stepRead.result.origin === "novu-cloud", "the step reads back", stepRead.result);
for (const s of editorWorkflow.result.steps) {
  const p = await step(`preview the ${s.type} step`, () =>
    novu.workflows.steps.generatePreview({
      workflowId: "sdk-editor",
      stepId: s.stepId,
      generatePreviewRequestDto: { previewPayload: { payload: { order: "A-17" } } },
    }),
  );
  check(p.result.result.type === s.type && p.result.result.error === undefined, `the ${s.type} step renders`, p.result.result);
}
const mailPreview = await step("preview the email step with unsaved controls", () =>
  novu.workflows.steps.generatePreview({
    workflowId: "sdk-editor",
    stepId: mailStep.stepId,
    generatePreviewRequestDto: { controlValues: { subject: "New {{ payload.order }}", body: "<p>x</p>" }, previewPayload: { payload: { order: "B-2" } } },
  }),
);
check(mailPreview.result.result.preview.subject === "New B-2", "the given controls are rendered", mailPreview.result.result);
const broken = await step("preview a Liquid error", () =>
  novu.workflows.steps.generatePreview({
    workflowId: "sdk-editor",
    stepId: mailStep.stepId,
    generatePreviewRequestDto: { controlValues: { subject: "S", body: "<p>{{ payload.order | bogus }}</p>" } },
  }),
);
check(broken.result.result.error?.title && broken.result.result.error?.hint, "a Liquid error is answered in the SDK's error shape", broken.result.result);

async function raw(method, path, body) {
  const res = await fetch(process.env.HERALD_URL + path, {
    method,
    headers: { Authorization: "ApiKey " + process.env.HERALD_KEY, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = await res.json();
  // The compatibility mode's envelope, removed as the SDK removes it.
  if (json && typeof json === "object" && Object.keys(json).length === 1 && "data" in json) json = json.data;
  return { status: res.status, json };
}
function conforms(schema, what, value) {
  const r = schema.safeParse(value);
  check(r.success, what, r.success ? undefined : r.error.issues.slice(0, 5));
  return r.data;
}
const testData = await raw("GET", "/v2/workflows/sdk-editor/test-data");
check(testData.status === 200 && testData.json.to?.type === "object" && typeof testData.json.payload === "object",
  "test data answers the recipient's and the payload's schemas", testData);
const dup = await raw("POST", "/v2/workflows/sdk-editor/duplicate", { name: "SDK editor copy" });
check(dup.status === 201, "duplicate answers 201", dup);
const wfCopy = conforms(components.WorkflowResponseDto$inboundSchema, "the SDK's workflow schema accepts the copy", dup.json);
check(wfCopy.name === "SDK editor copy" && wfCopy.active === false && wfCopy.steps.length === 9, "the copy is inactive with every step", wfCopy);
// Layouts, translations and contexts: every operation, each answer passing
// the SDK's schemas.
const res = (r) => r?.result ?? r;
const layout = res(await step("create a layout", () => novu.layouts.create({ layoutId: "sdk-brand", name: "SDK brand" })));
check(layout.layoutId === "sdk-brand" && layout.origin === "novu-cloud", "the layout is created", layout);
const page = "<html><body><h1>{{ payload.brand }}</h1>{{ content }}</body></html>";
const updated = res(await step("update the layout", () =>
  novu.layouts.update({ name: "SDK brand", controlValues: { email: { body: page, editorType: "html" } } }, "sdk-brand"),
));
check(updated.controls.values.email?.body === page, "its body is replaced", updated.controls);
const layouts = res(await step("list layouts", () => novu.layouts.list({ limit: 10 })));
check(layouts.totalCount === 2 && layouts.layouts.some((l) => l.isDefault), "the layouts are listed, a default among them", layouts);
const gotLayout = res(await step("read the layout", () => novu.layouts.retrieve("sdk-brand")));
check(gotLayout.id === layout.id, "the layout reads back", gotLayout.id);
const copy = res(await step("duplicate the layout", () => novu.layouts.duplicate({ name: "SDK copy", layoutId: "sdk-copy" }, "sdk-brand")));
check(copy.layoutId === "sdk-copy", "the copy has its layoutId", copy);
const preview = res(await step("preview the layout", () =>
  novu.layouts.generatePreview({ previewPayload: { subscriber: { firstName: "Ada" } } }, "sdk-brand"),
));
check(preview.result?.preview?.body?.startsWith("<html><body><h1></h1>"), "the preview renders", preview.result);
await step("create a workflow that uses the layout", () =>
  novu.workflows.create({
    name: "SDK mail", workflowId: "sdk-mail", active: true, isTranslationEnabled: true,
    steps: [{ name: "Mail", type: "email", controlValues: { subject: "{{ t.subject }}", body: "<p>{{ context.tenant.data.name }}</p>", layoutId: "sdk-brand" } }],
  }),
);
const usage = res(await step("read the layout's usage", () => novu.layouts.usage("sdk-brand")));
check(usage.workflows.length === 1 && usage.workflows[0].workflowId === "sdk-mail", "the workflow using it is listed", usage);
await step("delete the copy", () => novu.layouts.delete("sdk-copy"));

const tr = res(await step("create a translation", () =>
  novu.translations.create({ resourceId: "sdk-mail", resourceType: "workflow", locale: "fr_FR", content: { subject: "Bonjour" } }),
));
check(tr.locale === "fr_FR" && tr.content.subject === "Bonjour", "the translation is stored", tr);
const gotTr = res(await step("read the translation", () =>
  novu.translations.retrieve({ resourceType: "workflow", resourceId: "sdk-mail", locale: "fr_FR" }),
));
check(gotTr.content.subject === "Bonjour", "the translation reads back", gotTr);
const uploaded = res(await step("upload locale files", () =>
  novu.translations.upload({ resourceId: "sdk-mail", resourceType: "workflow",
    files: [{ fileName: "en_US.json", content: new TextEncoder().encode('{"subject":"Hello"}') }] }),
));
check(uploaded.successfulUploads === 1, "the file is taken", uploaded);
const group = res(await step("read the translation group", () => novu.translations.groups.retrieve("workflow", "sdk-mail")));
check(group.locales.join() === "en_US,fr_FR", "the group lists its locales", group);
const master = res(await step("read the master JSON", () => novu.translations.master.retrieve("fr_FR")));
check(master.workflows["sdk-mail"]?.subject === "Bonjour", "the master JSON holds the workflow's keys", master);
const imported = res(await step("import a master JSON", () =>
  novu.translations.master.import({ locale: "de_DE", masterJson: { workflows: { "sdk-mail": { subject: "Hallo" } } } }),
));
check(imported.success === true, "the master JSON is imported", imported);
const masterUp = res(await step("upload a master JSON file", () =>
  novu.translations.master.upload({ file: { fileName: "it_IT.json", content: new TextEncoder().encode('{"workflows":{"sdk-mail":{"subject":"Ciao"}}}') } }),
));
check(masterUp.success === true, "the master file is imported", masterUp);
await step("delete a translation", () => novu.translations.delete({ resourceType: "workflow", resourceId: "sdk-mail", locale: "it_IT" }));

const ctx = res(await step("create a context", () => novu.contexts.create({ type: "tenant", id: "sdk-acme", data: { name: "Acme" } })));
check(ctx.id === "sdk-acme" && ctx.data.name === "Acme", "the context is created", ctx);
const ctxs = res(await step("list contexts", () => novu.contexts.list({ limit: 10 })));
check(ctxs.data.length === 1 && ctxs.totalCount === 1, "the context is listed", ctxs);
const gotCtx = res(await step("read the context", () => novu.contexts.retrieve("sdk-acme", "tenant")));
check(gotCtx.data.name === "Acme", "the context reads back", gotCtx);
const patched = res(await step("update the context", () =>
  novu.contexts.update({ type: "tenant", id: "sdk-acme", updateContextRequestDto: { data: { name: "Acme Inc" } } }),
));
check(patched.data.name === "Acme Inc", "the context's data is replaced", patched);
await step("trigger with the context", () =>
  novu.trigger({ workflowId: "sdk-mail", to: "sdk-ada", context: { tenant: "sdk-acme" } }),
);
await step("delete the context", () => novu.contexts.delete("sdk-acme", "tenant"));
await step("delete the translation group", () => novu.translations.groups.delete("workflow", "sdk-mail"));
const env = res(await step("create an environment", () => novu.environments.create({ name: "SDK staging", color: "#3366ff" })));
check(env.name === "SDK staging" && env.identifier && env.apiKeys?.length === 1 && env.apiKeys[0].key.length === 32,
  "the environment is created with its own identifier and key", env);
const envKey = env.apiKeys[0].key;
const inEnv = new Novu({ secretKey: envKey, serverURL: process.env.HERALD_URL });
await step("create a workflow in the new environment", () =>
  inEnv.workflows.create({ name: "SDK env", workflowId: "sdk-env", active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "Hi" } }] }),
);
const envAck = res(await step("trigger in the new environment", () => inEnv.trigger({ workflowId: "sdk-env", to: "sdk-env-ada" })));
check(envAck.acknowledged === true, "the trigger in the new environment is taken", envAck);
const envRenamed = res(await step("update the environment", () =>
  novu.environments.update({ name: "SDK QA", identifier: "sdk-qa", color: "#000000" }, env.id),
));
check(envRenamed.name === "SDK QA" && envRenamed.identifier === "sdk-qa" && envRenamed.id === env.id, "the environment is renamed", envRenamed);
const envs = res(await step("list environments", () => novu.environments.list()));
check(envs.some((e) => e.id === env.id && e.name === "SDK QA"), "the environment is listed", envs.map((e) => e.name));
let refused;
try {
  await novu.environments.delete(env.id);
} catch (e) {
  refused = e;
}
check(refused?.statusCode === 422, "an environment holding a workflow is deleted only when confirmed", refused?.message);
// The SDK's delete has no parameter for Herald's confirmation: a plain request sends it.
await step("delete the environment, confirmed", async () => {
  const r = await fetch(process.env.HERALD_URL + "/v1/environments/" + env.id + "?confirm=true", {
    method: "DELETE", headers: { Authorization: "ApiKey " + process.env.HERALD_KEY },
  });
  if (r.status !== 200) throw new Error("status " + r.status);
});
const empty = res(await step("create an empty environment", () => novu.environments.create({ name: "SDK scratch", color: "#ffffff" })));
await step("delete the empty environment", () => novu.environments.delete(empty.id));
const after = res(await step("list environments again", () => novu.environments.list()));
check(!after.some((e) => e.id === env.id || e.id === empty.id), "the deleted environments are gone", after.map((e) => e.name));
// A subscriber's notifications from the server, as its inbox sees them.
await step("create a workflow with a button", () =>
  novu.workflows.create({
    name: "SDK buttons", workflowId: "sdk-buttons", active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "Approve?", primaryAction: { label: "Yes" } } }],
  }),
);
await step("trigger it", () => novu.trigger({ workflowId: "sdk-buttons", to: "sdk-ada" }));
const sn = novu.subscribers.notifications;
let withButton;
for (let i = 0; i < 200 && !withButton; i++) {
  const page = res(await step("list the subscriber's notifications", () => sn.list({ subscriberId: "sdk-ada", limit: 10 })));
  withButton = page.data.find((n) => n.primaryAction);
  if (!withButton) await new Promise((r) => setTimeout(r, 50));
}
check(withButton?.body === "Approve?" && withButton.to.subscriberId === "sdk-ada", "the notification is listed", withButton);
const nid = { subscriberId: "sdk-ada", notificationId: withButton.id };
const counted = res(await step("count notifications", () => sn.count("sdk-ada", JSON.stringify([{ read: false }, { seen: true }]))));
check(counted.length === 2 && counted[0].count >= 1, "one count per filter", counted);
check(res(await step("mark a notification read", () => sn.markAsRead(nid))).isRead === true, "it is read", nid);
check(res(await step("mark it unread", () => sn.markAsUnread(nid))).isRead === false, "it is unread", nid);
check(res(await step("archive it", () => sn.archive(nid))).isArchived === true, "it is archived", nid);
check(res(await step("unarchive it", () => sn.unarchive(nid))).isArchived === false, "it is unarchived", nid);
const snoozed = res(await step("snooze it", () =>
  sn.snooze({ ...nid, snoozeSubscriberNotificationDto: { snoozeUntil: new Date(Date.now() + 3600e3) } }),
));
check(snoozed.isSnoozed === true, "it is snoozed", snoozed);
check(res(await step("unsnooze it", () => sn.unsnooze(nid))).isSnoozed === false, "it is back", nid);
const done = res(await step("complete its action", () => sn.completeAction({ ...nid, actionType: "primary" })));
check(done.primaryAction.isCompleted === true, "its button is done", done.primaryAction);
const undone = res(await step("revert its action", () => sn.revertAction({ ...nid, actionType: "primary" })));
check(undone.primaryAction.isCompleted === false, "its button is pending again", undone.primaryAction);
const acted = res(await step("set a message's action", () =>
  novu.subscribers.messages.updateAsSeen({ subscriberId: "sdk-ada", messageId: withButton.id, type: "primary",
    markMessageActionAsSeenDto: { status: "done", payload: { answer: "yes" } } }),
));
// The SDK's payload schema is an empty object, so it sends {}.
check(acted.cta?.action?.status === "done" && acted.cta.action.result?.type === "primary", "the action is done, with its button", acted.cta);
await step("mark notifications seen", () => sn.markAsSeen({ notificationIds: [withButton.id] }, "sdk-ada"));
await step("mark all read", () => sn.markAllAsRead({}, "sdk-ada"));
await step("archive all read", () => sn.archiveAllRead({}, "sdk-ada"));
await step("archive all", () => sn.archiveAll({ contextKeys: [] }, "sdk-ada"));
const archived = res(await step("list archived notifications", () => sn.list({ subscriberId: "sdk-ada", archived: true })));
check(archived.data.length >= 2 && archived.data.every((n) => n.isArchived && n.isRead), "every one is read and archived", archived.data);
await step("delete a notification", () => sn.delete(nid));
await step("delete all", () => sn.deleteAll({}, "sdk-ada"));
const none = res(await step("list them again", () => sn.list({ subscriberId: "sdk-ada" })));
check(none.data.length === 0, "none is left", none.data);
// Online status, set by hand as the inbox's sockets set it.
const online = res(await step("set the subscriber online", () => novu.subscribers.properties.updateOnlineFlag({ isOnline: true }, "sdk-ada")));
check(online.isOnline === true, "the subscriber is online", online);
const offline = res(await step("set it offline", () => novu.subscribers.properties.updateOnlineFlag({ isOnline: false }, "sdk-ada")));
check(offline.isOnline === false && typeof offline.lastOnlineAt === "string", "offline, with when it left", offline);
console.log("sdk: all ok");

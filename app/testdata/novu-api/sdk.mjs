// Drives a Herald started with HERALD_COMPAT=novu through the reference
// platform's unmodified @novu/api SDK, which validates every answer against
// its schemas (an SDKValidationError otherwise). TestSDK_NovuAPI runs it
// with HERALD_URL and HERALD_KEY set; it prints one line per step and exits
// non-zero on the first failure.
import { Novu } from "@novu/api";
import * as components from "@novu/api/models/components/index.js";

// Every call goes through recorded(), which notes the SDK operation by its
// src/funcs name (novu.subscribers.credentials.append is
// subscribersCredentialsAppend); the script ends by printing them, and
// TestSDK_NovuAPI compares them with docs/compatibility.md.
const called = new Set();
function recorded(target, path = []) {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj);
      if (typeof prop !== "string" || prop.startsWith("_")) return value;
      const at = [...path, prop];
      if (typeof value === "function") {
        return (...args) => {
          called.add(at.map((p, i) => (i === 0 ? p : p[0].toUpperCase() + p.slice(1))).join(""));
          return value.apply(obj, args);
        };
      }
      return value !== null && typeof value === "object" ? recorded(value, at) : value;
    },
  });
}
const client = (secretKey) => recorded(new Novu({ secretKey, serverURL: process.env.HERALD_URL }));
const novu = client(process.env.HERALD_KEY);

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
const inEnv = client(envKey);
await step("create a workflow in the new environment", () =>
  inEnv.workflows.create({ name: "SDK env", workflowId: "sdk-env", active: true, tags: ["billing", "alerts"],
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "Hi" } }] }),
);
const envAck = res(await step("trigger in the new environment", () => inEnv.trigger({ workflowId: "sdk-env", to: "sdk-env-ada" })));
check(envAck.acknowledged === true, "the trigger in the new environment is taken", envAck);
const envRenamed = res(await step("update the environment", () =>
  novu.environments.update({ name: "SDK QA", identifier: "sdk-qa", color: "#000000" }, env.id),
));
check(envRenamed.name === "SDK QA" && envRenamed.identifier === "sdk-qa" && envRenamed.id === env.id, "the environment is renamed", envRenamed);
const envTags = res(await step("list the environment's tags", () => novu.environments.getTags(env.id)));
check(envTags.map((t) => t.name).join() === "alerts,billing", "the environment's tags are its workflows', each once", envTags);
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
// Subscribers: read, search, change, in bulk, their credentials and
// preferences.
const ada = res(await step("read the subscriber", () => novu.subscribers.retrieve("sdk-ada")));
check(ada.subscriberId === "sdk-ada" && ada.email === "ada@example.com", "the subscriber reads back", ada);
const adaPatched = res(await step("patch the subscriber", () => novu.subscribers.patch({ lastName: "Lovelace" }, "sdk-ada")));
check(adaPatched.lastName === "Lovelace" && adaPatched.firstName === "Ada", "only the given field changes", adaPatched);
const found = res(await step("search subscribers", () => novu.subscribers.search({ email: "ada@example.com", limit: 10 })));
check(found.data.length === 1 && found.data[0].subscriberId === "sdk-ada", "the search finds the subscriber", found.data);
const bulk = res(await step("create subscribers in bulk", () =>
  novu.subscribers.createBulk({ subscribers: [{ subscriberId: "sdk-bulk-1" }, { subscriberId: "sdk-bulk-2", firstName: "Bo" }] }),
));
check(bulk.created.length === 2 && bulk.failed.length === 0, "both are created", bulk);
const cred = { providerId: "fcm", credentials: { deviceTokens: ["sdk-t1"] } };
const set = res(await step("set push credentials", () => novu.subscribers.credentials.update(cred, "sdk-ada")));
check(set.channels?.some((c) => c.providerId === "fcm" && c.credentials.deviceTokens.join() === "sdk-t1"), "the tokens are set", set.channels);
const appended = res(await step("append a device token", () =>
  novu.subscribers.credentials.append({ providerId: "fcm", credentials: { deviceTokens: ["sdk-t2"] } }, "sdk-ada"),
));
// Herald's PATCH replaces a given deviceTokens list (docs/api.md, "Channel credentials").
check(appended.channels?.find((c) => c.providerId === "fcm")?.credentials.deviceTokens.join() === "sdk-t2", "the given tokens are stored", appended.channels);
await step("delete the push credentials", () => novu.subscribers.credentials.delete("sdk-ada", "fcm"));
const noFcm = res(await step("read the subscriber again", () => novu.subscribers.retrieve("sdk-ada")));
check(!noFcm.channels?.some((c) => c.providerId === "fcm"), "the credentials are gone", noFcm.channels);
const pref = res(await step("turn a workflow's in-app channel off", () =>
  novu.subscribers.preferences.update({ workflowId: "sdk-hello", channels: { inApp: false } }, "sdk-ada"),
));
check(pref.workflows.find((w) => w.workflow.identifier === "sdk-hello")?.channels.inApp === false, "the channel is off", pref.workflows);
const prefs2 = res(await step("turn it back on in bulk", () =>
  novu.subscribers.preferences.bulkUpdate({ preferences: [{ workflowId: "sdk-hello", channels: { inApp: true } }] }, "sdk-ada"),
));
check(prefs2.length === 1 && prefs2[0].level === "template" && prefs2[0].workflow?.identifier === "sdk-hello" && prefs2[0].channels.inApp === true,
  "the bulk update answers the workflow's preference, the channel on", prefs2);
const removed = res(await step("delete a subscriber", () => novu.subscribers.delete("sdk-bulk-1")));
check(removed.acknowledged === true && removed.status === "deleted", "the deletion is acknowledged", removed);
const gone = res(await step("search for it", () => novu.subscribers.search({ subscriberId: "sdk-bulk-1" })));
check(gone.data.length === 0, "it is gone", gone.data);

// Messages and the v1 feed: a fresh notification to read, mark and delete.
async function inApp(what) {
  const ack = res(await step(what, () => novu.trigger({ workflowId: "sdk-hello", to: "sdk-ada", payload: { name: what } })));
  for (let i = 0; i < 200; i++) {
    const msgs = res(await step("list the subscriber's messages", () => novu.messages.retrieve({ subscriberId: "sdk-ada", channel: "in_app" })));
    const m = msgs.data.find((x) => x.transactionId === ack.transactionId);
    if (m) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  check(false, `${what}: its message is delivered`, ack);
}
const m1 = await inApp("trigger for the feed");
const feedV1 = res(await step("read the v1 feed", () => novu.subscribers.notifications.feed({ subscriberId: "sdk-ada", limit: 10 })));
check(feedV1.data.some((m) => m.id === m1.id), "the message is in the feed", feedV1.data);
const unseen = res(await step("count unseen", () => novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-ada" })));
check(unseen.count >= 1, "the message is unseen", unseen);
const seenCount = res(await step("mark all seen", () => novu.subscribers.messages.markAll({ markAs: "seen" }, "sdk-ada")));
check(seenCount === 1, "the number marked is answered", seenCount);
const markedAs = res(await step("mark a message read", () =>
  novu.subscribers.messages.markAllAs({ messageId: m1.id, markAs: "read" }, "sdk-ada"),
));
check(markedAs.length === 1 && markedAs[0].read === true && markedAs[0].seen === true, "the message is read", markedAs);
const unseen0 = res(await step("count unseen again", () => novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-ada" })));
check(unseen0.count === 0, "nothing is unseen", unseen0);
const delMsg = res(await step("delete the message", () => novu.messages.delete(m1.id)));
check(delMsg.acknowledged === true && delMsg.status === "deleted", "the message deletion is acknowledged", delMsg);
const m2 = await inApp("trigger to delete by transaction");
await step("delete messages by transaction", () => novu.messages.deleteByTransactionId(m2.transactionId));
const left = res(await step("list the messages", () => novu.messages.retrieve({ subscriberId: "sdk-ada", channel: "in_app" })));
check(!left.data.some((m) => m.id === m1.id || m.id === m2.id), "both messages are gone", left.data.map((m) => m.id));

// Cancel a delayed trigger; broadcast and bulk triggers.
await step("create a delayed workflow", () =>
  novu.workflows.create({ name: "SDK later", workflowId: "sdk-later", active: true,
    steps: [{ name: "Wait", type: "delay", controlValues: { amount: 1, unit: "hours" } },
      { name: "Inbox", type: "in_app", controlValues: { body: "Later" } }] }),
);
const later = res(await step("trigger the delayed workflow", () => novu.trigger({ workflowId: "sdk-later", to: "sdk-ada" })));
const cancelled = res(await step("cancel it", () => novu.cancel(later.transactionId)));
check(cancelled === true, "the trigger is cancelled", cancelled);
const broadcast = res(await step("broadcast", () => novu.triggerBroadcast({ name: "sdk-hello", payload: { name: "all" } })));
check(broadcast.acknowledged === true && typeof broadcast.transactionId === "string", "the broadcast is taken", broadcast);
const bulkAck = res(await step("trigger in bulk", () =>
  novu.triggerBulk({ events: [{ workflowId: "sdk-hello", to: "sdk-ada" }, { workflowId: "sdk-hello", to: "sdk-bulk-2" }] }),
));
check(bulkAck.length === 2 && bulkAck.every((a) => a.acknowledged === true), "each event is taken", bulkAck);

// Topics by themselves.
const topic = res(await step("create a topic", () => novu.topics.create({ key: "sdk-deals", name: "Deals" })));
check(topic.key === "sdk-deals" && topic.name === "Deals", "the topic is created", topic);
const gotTopic = res(await step("read the topic", () => novu.topics.get("sdk-deals")));
check(gotTopic.id === topic.id, "the topic reads back", gotTopic);
const topicRenamed = res(await step("rename the topic", () => novu.topics.update({ name: "Hot deals" }, "sdk-deals")));
check(topicRenamed.name === "Hot deals", "the topic is renamed", topicRenamed);
const topics = res(await step("list topics", () => novu.topics.list({ limit: 10 })));
check(topics.data.some((t) => t.key === "sdk-deals" && t.name === "Hot deals"), "the topic is listed", topics.data);
const dealSub = res(await step("subscribe to the topic", () => novu.topics.subscriptions.create({ subscriptions: ["sdk-ada"] }, "sdk-deals")));
const gotSub = res(await step("read the subscription", () =>
  novu.topics.subscriptions.getSubscription("sdk-deals", dealSub.data[0].identifier),
));
check(gotSub.id === dealSub.data[0].id && gotSub.identifier === dealSub.data[0].identifier, "the subscription reads back", gotSub);
const member = res(await step("check the topic's subscriber", () => novu.topics.subscribers.retrieve("sdk-ada", "sdk-deals")));
check(member.externalSubscriberId === "sdk-ada" && member.topicKey === "sdk-deals", "the subscriber belongs to the topic", member);
const delTopic = res(await step("delete the topic", () => novu.topics.delete("sdk-deals")));
check(delTopic.acknowledged === true, "the topic deletion is acknowledged", delTopic);
const noTopics = res(await step("list topics again", () => novu.topics.list({ key: "sdk-deals" })));
check(!noTopics.data.some((t) => t.key === "sdk-deals"), "the topic is gone", noTopics.data);

// Integrations.
const integration = res(await step("create an integration", () =>
  novu.integrations.create({ providerId: "sendgrid", channel: "email", name: "SDK mail", identifier: "sdk-sendgrid",
    credentials: { apiKey: "sdk-key", from: "no-reply@example.com", senderName: "SDK" }, active: true }),
));
check(integration.identifier === "sdk-sendgrid" && integration.providerId === "sendgrid", "the integration is created", integration);
const integrations = res(await step("list integrations", () => novu.integrations.list()));
check(integrations.some((i) => i.id === integration.id), "the integration is listed", integrations.map((i) => i.identifier));
const active = res(await step("list active integrations", () => novu.integrations.listActive()));
check(active.some((i) => i.id === integration.id), "it is active", active.map((i) => i.identifier));
const integrationRenamed = res(await step("update the integration", () => novu.integrations.update({ name: "SDK mail 2" }, integration.id)));
check(integrationRenamed.name === "SDK mail 2", "the integration is renamed", integrationRenamed);
const primary = res(await step("make it primary", () => novu.integrations.setAsPrimary(integration.id)));
check(primary.primary === true && primary.id === integration.id, "the integration is primary", primary);
const remaining = res(await step("delete the integration", () => novu.integrations.delete(integration.id)));
check(Array.isArray(remaining) && !remaining.some((i) => i.id === integration.id), "the remaining integrations are answered", remaining);
const afterDelete = res(await step("list integrations again", () => novu.integrations.list()));
check(!afterDelete.some((i) => i.id === integration.id), "the integration is gone", afterDelete.map((i) => i.identifier));

// Workflows: list, patch, replace, sync to another environment, delete.
const wfs = res(await step("list workflows", () => novu.workflows.list({ limit: 50 })));
check(wfs.workflows.some((w) => w.workflowId === "sdk-hello") && wfs.totalCount >= 1, "the workflows are listed", wfs.totalCount);
const wfPatched = res(await step("patch a workflow", () => novu.workflows.patch({ description: "Patched" }, "sdk-hello")));
check(wfPatched.description === "Patched" && wfPatched.workflowId === "sdk-hello", "the description is set", wfPatched);
const wfUpdated = res(await step("replace a workflow", () =>
  novu.workflows.update({ name: "SDK paused again", preferences: {}, steps: [{ name: "Text", type: "sms", controlValues: { body: "Hello" } }] }, "sdk-paused"),
));
check(wfUpdated.name === "SDK paused again" && wfUpdated.steps.length === 1, "the workflow is replaced", wfUpdated);
const target = res(await step("create an environment to sync to", () => novu.environments.create({ name: "SDK sync", color: "#00ff00" })));
const synced = res(await step("sync a workflow", () => novu.workflows.sync({ targetEnvironmentId: target.id }, "sdk-hello")));
check(synced.workflowId === "sdk-hello", "the workflow is synced", synced);
const inTarget = res(await step("read it in the target", () => client(target.apiKeys[0].key).workflows.get("sdk-hello")));
check(inTarget.name === wfPatched.name && inTarget.id !== wfPatched.id, "the copy is in the target environment", inTarget);
await step("delete a workflow", () => novu.workflows.delete("sdk-paused"));
const wfsAfter = res(await step("list workflows again", () => novu.workflows.list({ limit: 50 })));
check(!wfsAfter.workflows.some((w) => w.workflowId === "sdk-paused"), "the workflow is gone", wfsAfter.workflows.map((w) => w.workflowId));
console.log("called: " + [...called].sort().join(" "));
console.log("sdk: all ok");

// Drives a Herald started with HERALD_COMPAT=novu through the reference
// platform's unmodified @novu/api SDK, which validates every answer against
// its schemas (an SDKValidationError otherwise). TestSDK_NovuAPI runs it
// with HERALD_URL and HERALD_KEY set; it prints one line per step and exits
// non-zero on the first failure.
import { Novu } from "@novu/api";

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
console.log("sdk: all ok");

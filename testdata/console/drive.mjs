// Drives headless Chromium through the console as a team would, and calls
// Herald's API beside it to check what the pages did. The Go test
// (console_browser_test.go) starts Herald, seeds a workflow, a subscriber
// and an email integration, runs this, and reads its last line. Screenshots
// go to ARTIFACTS.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';

const { BASE, SETUP_URL, API_KEY, CHROMIUM, ARTIFACTS, RECEIVER } = process.env;
const timeout = 20000;
const password = 'correct horse battery staple';
mkdirSync(ARTIFACTS, { recursive: true });

async function api(method, path, body, key = API_KEY) {
  const res = await fetch(BASE + path, {
    method,
    headers: { Authorization: `ApiKey ${key}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

async function poll(what, fn) {
  const end = Date.now() + timeout;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const started = Date.now();
const step = (what) => console.log(`step at ${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
const errors = [];
let shots = 0;

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});

async function newPage(width = 1280, height = 860) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  // A Content-Security-Policy violation is reported as a console error.
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => d.accept());
  return page;
}

async function shot(page, name) {
  await page.screenshot({ path: `${ARTIFACTS}/${String(++shots).padStart(2, '0')}-${name}.png`, fullPage: true });
}

try {
  const page = await newPage();

  step('first run: the setup link creates the first admin');
  await page.goto(SETUP_URL);
  await shot(page, 'setup');
  await page.getByLabel('Your name').fill('Ada Admin');
  await page.getByLabel('Email').fill('ada@example.com');
  await page.locator('#f-password').fill(password);
  await page.getByLabel('Password again').fill(password);
  await page.getByRole('button', { name: /Create admin/ }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout });
  await shot(page, 'overview-empty');

  step('sign out and in again');
  await page.getByLabel('Your account').click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor({ timeout });
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout });

  step('a trigger through the API appears in Activity');
  const trig = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { order: 42 } });
  check(trig.status === 201, 'trigger answered ' + trig.status);
  await page.keyboard.press('g');
  await page.keyboard.press('a'); // the keyboard goes to Activity
  await page.getByRole('heading', { name: 'Activity' }).waitFor({ timeout });
  const row = page.locator('tbody tr', { hasText: 'Welcome' }).first();
  await row.waitFor({ timeout });
  await poll('both steps to finish', async () => {
    await page.reload();
    return (await page.locator('tbody tr', { hasText: 'Welcome' }).first().innerText()).includes('completed');
  });
  await shot(page, 'activity');

  step('the notification shows its steps and the email as sent');
  await page.locator('tbody tr', { hasText: 'Welcome' }).first().getByRole('link').first().click();
  await page.getByRole('heading', { name: 'Steps' }).waitFor({ timeout });
  const steps = await page.locator('.timeline').innerText();
  check(steps.includes('Message sent'), 'the timeline has no "Message sent" detail: ' + steps);
  await page.getByText("email-webhook's answer").first().click(); // the provider's raw answer opens
  await page.locator('.details pre').first().waitFor({ timeout });
  const frame = page.frameLocator('iframe.email-frame');
  await frame.getByText('Hi Ada').waitFor({ timeout });
  check((await page.locator('.inapp-card').innerText()).includes('Hello Ada, order 42'), 'the in-app card is not shown');
  await shot(page, 'notification');

  step('find the subscriber and turn a preference off');
  await page.getByRole('link', { name: 'Subscribers' }).first().click();
  await page.getByLabel('subscriberId').fill('ada');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'ada', exact: true }).click();
  await page.getByRole('heading', { name: 'Preferences' }).waitFor({ timeout });
  const emailSwitch = page.getByLabel('Email for Welcome');
  check(await emailSwitch.isChecked(), 'the email preference starts on');
  await emailSwitch.click({ force: true });
  await poll('the preference to be saved', async () => {
    const prefs = await api('GET', '/v2/subscribers/ada/preferences');
    const wf = prefs.body.workflows.find((w) => w.workflow.identifier === 'welcome');
    return wf && wf.channels.email === false;
  });
  await page.reload();
  check(!(await page.getByLabel('Email for Welcome').isChecked()), 'the page shows the preference off');
  await shot(page, 'subscriber');

  step('set the subscriber\'s quiet hours; a time that is not 12-hour is marked on its day');
  await page.getByRole('heading', { name: 'Schedule' }).waitFor({ timeout });
  await page.getByLabel('Keep to the schedule').check();
  await page.getByLabel('Monday has open hours').check();
  await page.getByLabel('Monday', { exact: true }).fill('09:00 AM - 05:00 PM');
  await page.getByLabel('Friday has open hours').check();
  await page.getByLabel('Friday', { exact: true }).fill('09:00 AM - 17:00 PM');
  const beforeSchedule = errors.length;
  await page.getByRole('button', { name: 'Save schedule' }).click();
  await page.locator('#schedule .field-error').filter({ hasText: '17:00 PM' }).waitFor({ timeout });
  // Chromium logs the form's 422 answer, as it logs every failed load.
  errors.splice(beforeSchedule, errors.length - beforeSchedule, ...errors.slice(beforeSchedule).filter((e) => !e.includes('422')));
  check(await page.getByLabel('Monday', { exact: true }).inputValue() === '09:00 AM - 05:00 PM', 'the refused form lost what was typed');
  const refused = await api('GET', '/v2/subscribers/ada/preferences/global');
  check(!refused.body.schedule, 'a refused schedule was stored: ' + JSON.stringify(refused.body));
  await page.getByLabel('Friday', { exact: true }).fill('09:00 AM - 12:00 PM, 10:00 PM - 02:00 AM');
  await page.getByRole('button', { name: 'Save schedule' }).click();
  await page.getByText('The schedule is saved.').waitFor({ timeout });
  const stored = (await api('GET', '/v2/subscribers/ada/preferences/global')).body.schedule;
  check(stored && stored.isEnabled && stored.weeklySchedule.monday.hours[0].end === '05:00 PM'
    && stored.weeklySchedule.friday.hours.length === 2 && stored.weeklySchedule.sunday.isEnabled === false,
    'the API reads another schedule: ' + JSON.stringify(stored));
  await shot(page, 'subscriber-schedule');

  step('create an integration through its form and check it');
  await page.getByRole('link', { name: 'Integrations' }).first().click();
  await page.getByRole('link', { name: 'New integration' }).click();
  await page.getByRole('link', { name: /Chat Webhook/ }).click();
  await page.locator('#f-name').fill('Team chat');
  await page.getByLabel(/Webhook URL/).fill(RECEIVER + '/chat-hook-secret-path');
  await page.getByRole('button', { name: 'Check with the provider' }).click();
  await page.locator('#check-result', { hasText: 'accepted' }).waitFor({ timeout });
  await shot(page, 'integration-check');
  await page.getByRole('button', { name: 'Create integration' }).click();
  await page.getByText('Team chat is created.').waitFor({ timeout });
  const ints = await api('GET', '/v1/integrations');
  check(ints.body.some((i) => i.name === 'Team chat' && i.providerId === 'chat-webhook'), 'the API lists the new integration');
  check(!(await page.content()).includes('chat-hook-secret-path'), 'the saved webhook URL is shown in full');

  step('create an API key, use it, revoke it');
  await page.getByRole('link', { name: 'API keys' }).first().click();
  await page.getByRole('button', { name: 'New key' }).click();
  const key = (await page.locator('#shown-secret').innerText()).trim();
  check(/^[0-9a-f]{32}$/.test(key), 'a new key is shown once: ' + key);
  check((await api('GET', '/v1/environments', null, key)).status === 200, 'the new key works');
  await shot(page, 'key-created');
  await page.reload();
  check(!(await page.content()).includes(key), 'the key is shown again after a reload');
  await page.locator('tr', { hasText: key.slice(-4) }).getByRole('button', { name: 'Revoke' }).click();
  await page.getByText('is revoked').waitFor({ timeout });
  await poll('the revoked key to be refused', async () => (await api('GET', '/v1/environments', null, key)).status === 401);

  step('a webhook endpoint: create it, send a test event, see its delivery in the log');
  await page.getByRole('link', { name: 'Webhooks' }).first().click();
  await page.getByRole('heading', { name: 'Webhooks' }).waitFor({ timeout });
  await page.locator('#f-url').fill(RECEIVER + '/webhook');
  await page.locator('#f-description').fill('Our billing service');
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  const whsec = (await page.locator('#shown-secret').innerText()).trim();
  check(whsec.startsWith('whsec_'), 'the signing secret is shown once: ' + whsec);
  await shot(page, 'webhook-created');
  await page.locator('#f-eventType').selectOption('message.delivered');
  await page.getByRole('button', { name: 'Send test event' }).click();
  await page.getByText('A test message.delivered event is queued').waitFor({ timeout });
  check(!(await page.content()).includes(whsec), 'the signing secret is shown again');
  await poll('the test delivery to succeed', async () => {
    await page.reload();
    const row = page.locator('#deliveries tbody tr', { hasText: 'message.delivered' }).first();
    return (await row.count()) > 0 && (await row.innerText()).includes('succeeded');
  });
  check((await page.locator('#deliveries tbody tr').first().innerText()).includes('200'), 'the log shows the answer\'s code');
  await shot(page, 'webhook-log');
  const hooks = await api('GET', '/v2/webhooks/endpoints');
  check(hooks.body.data.some((e) => e.url === RECEIVER + '/webhook' && e.description === 'Our billing service'),
    'the API lists the endpoint the page created');

  step('a context: find it by type, edit its data');
  const made = await api('POST', '/v2/contexts', { type: 'tenant', id: 'acme', data: { name: 'Acme' } });
  check(made.status === 201, 'the context was not created: ' + made.status);
  await page.getByRole('link', { name: 'Contexts' }).first().click();
  await page.getByRole('heading', { name: 'Contexts', level: 1 }).waitFor({ timeout });
  await page.locator('#f-type').fill('tenant');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'acme', exact: true }).click();
  await page.locator('#f-data').waitFor({ timeout });
  check((await page.locator('#f-data').inputValue()).includes('"Acme"'), 'the context\'s data is not shown');
  await page.locator('#f-data').fill('{"name": "Acme"');
  const beforeRefusal = errors.length;
  await page.getByRole('button', { name: 'Save data' }).click();
  await page.locator('.field-error').first().waitFor({ timeout }); // broken JSON, marked on its field
  // Chromium logs the form's 422 answer, as it logs every failed load.
  errors.splice(beforeRefusal, errors.length - beforeRefusal, ...errors.slice(beforeRefusal).filter((e) => !e.includes('422')));
  await page.locator('#f-data').fill('{"name": "Acme Corp", "plan": "pro"}');
  await page.getByRole('button', { name: 'Save data' }).click();
  await page.getByText('The data of tenant:acme is saved.').waitFor({ timeout });
  const ctx = await api('GET', '/v2/contexts/tenant/acme');
  check(ctx.body.data.name === 'Acme Corp' && ctx.body.data.plan === 'pro', 'the API reads the saved data: ' + JSON.stringify(ctx.body));
  await shot(page, 'context');

  step('the workflow editor: live preview with the test payload');
  await page.getByRole('link', { name: 'Workflows' }).first().click();
  await page.getByRole('link', { name: 'Welcome', exact: true }).click();
  await page.getByRole('heading', { name: 'Versions' }).waitFor({ timeout });
  const editorURL = page.url();
  await page.locator('#f-payload').fill('{"order":"A-17"}');
  await page.locator('#s-0-c-body').fill('Your order {{ payload.order }} is ready');
  await page.locator('#preview-0', { hasText: 'Your order A-17 is ready' }).waitFor({ timeout });
  await page.frameLocator('#preview-1 iframe.email-frame').getByText('Order A-17 shipped.').waitFor({ timeout });
  await shot(page, 'editor-preview');

  step('the Liquid field offers the variables of the workflow as the author types');
  await page.locator('#s-0-c-body').fill('');
  await page.locator('#s-0-c-body').pressSequentially('Hi {{ payload.or');
  await page.locator('[data-step="0"] .liquid-suggest li', { hasText: 'payload.order' }).first().waitFor({ timeout });
  await page.keyboard.press('Enter');
  check(await page.locator('#s-0-c-body').inputValue() === 'Hi {{ payload.order }}',
    'the chosen variable was not inserted: ' + await page.locator('#s-0-c-body').inputValue());
  await page.locator('#preview-0', { hasText: 'Hi A-17' }).waitFor({ timeout });
  await page.locator('#s-0-c-body').pressSequentially(' {{ subscriber.first');
  await page.locator('[data-step="0"] .liquid-suggest li', { hasText: 'subscriber.firstName' }).first().waitFor({ timeout });
  await shot(page, 'editor-variables');
  await page.locator('[data-step="0"] .liquid-suggest li', { hasText: 'subscriber.firstName' }).first().click();
  await page.locator('#preview-0', { hasText: 'Hi A-17 Ada' }).waitFor({ timeout });

  step('preview as a subscriber of the environment');
  check((await api('POST', '/v1/subscribers', { subscriberId: 'zoe', firstName: 'Zoe' })).status === 201, 'subscriber zoe');
  await page.locator('#f-previewSubscriber').fill('zoe');
  await page.locator('#preview-0', { hasText: 'Hi A-17 Zoe' }).waitFor({ timeout });
  await page.locator('#f-previewSubscriber').fill('');
  await page.locator('#preview-0', { hasText: 'Hi A-17 Ada' }).waitFor({ timeout });

  step('a Liquid error is marked where it is, and fixed');
  await page.locator('#s-0-c-body').fill('Your order\n{{ payload.order | bogus }}');
  await page.locator('#preview-0 .preview-error', { hasText: 'line 2' }).waitFor({ timeout });
  check((await page.locator('#s-0-c-body').inputValue()).includes('bogus'), 'the typed body is lost');
  await shot(page, 'editor-error');
  await page.locator('#s-0-c-body').fill('Your order {{ payload.order }} is ready');
  await page.locator('#preview-0', { hasText: 'Your order A-17 is ready' }).waitFor({ timeout });

  step('add an SMS step with a skip condition, save, and restore the first version');
  await page.locator('#add-type').selectOption('sms');
  await page.getByRole('button', { name: 'Add step' }).click();
  await page.locator('#s-2-c-body').waitFor({ timeout });
  await page.locator('#s-2-c-body').fill('Order {{ payload.order }}');
  const skip = page.locator('[data-step="2"] [data-control="skip"]');
  await page.locator('#s-2-c-skip').fill('{"!":{"var":"payload.loud"}}');
  await skip.locator('.rules-fallback').waitFor({ timeout });
  check(await skip.locator('.rules').isHidden(), 'rules shown for logic they cannot show');
  await page.locator('#s-2-c-skip').fill('');
  await skip.getByRole('button', { name: 'Add rule' }).click();
  await skip.locator('.rule-field').fill('payload.quiet');
  await skip.locator('.rule-op').selectOption('==');
  await skip.locator('.rule-value').fill('true');
  check(await page.locator('#s-2-c-skip').inputValue() === '{"and":[{"==":[{"var":"payload.quiet"},true]}]}',
    'the rules did not write their JSON-logic: ' + await page.locator('#s-2-c-skip').inputValue());
  await skip.getByRole('button', { name: 'Add group' }).click();
  await skip.locator('.rule-group .rule-group .rule-field').fill('subscriber.locale');
  await skip.locator('.rule-group .rule-group .rule-value').fill('fr_FR');
  await skip.locator('.rule-group .rule-group .rule-match').selectOption('or');
  check(await page.locator('#s-2-c-skip').inputValue() ===
    '{"and":[{"==":[{"var":"payload.quiet"},true]},{"or":[{"==":[{"var":"subscriber.locale"},"fr_FR"]}]}]}',
    'the group did not join the JSON-logic: ' + await page.locator('#s-2-c-skip').inputValue());
  await shot(page, 'editor-skip-rules');
  await page.locator('#f-note').fill('ready wording, an SMS');
  await page.getByRole('button', { name: 'Save workflow' }).click();
  await page.getByText('is saved as a new version').waitFor({ timeout });
  let wf = await api('GET', '/v2/workflows/welcome');
  check(wf.body.steps.length === 3 && wf.body.steps[0].controlValues.body === 'Your order {{ payload.order }} is ready',
    'the save did not reach the API: ' + JSON.stringify(wf.body.steps.map((s) => s.controlValues)));
  check(wf.body.steps[2].controlValues.skip?.and?.[1]?.or?.[0]?.['=='] !== undefined, 'the skip condition was not saved: ' +
    JSON.stringify(wf.body.steps[2].controlValues.skip));
  check(await page.locator('[data-step="2"] [data-control="skip"] .rule-field').first().inputValue() === 'payload.quiet',
    'the saved condition is not shown as rules');
  await shot(page, 'editor-saved');
  await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Restore' }).click();
  await page.getByText('Version 1 is restored').waitFor({ timeout });
  wf = await api('GET', '/v2/workflows/welcome');
  check(wf.body.steps.length === 2 && wf.body.steps[0].controlValues.body.startsWith('Hello'), 'version 1 was not restored');

  step('two versions side by side');
  await page.locator('#diff-from').selectOption('1');
  await page.locator('#diff-to').selectOption('2');
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  const bodyRow = page.locator('#diff tr[data-path$="controlValues.body"]').first();
  await bodyRow.waitFor({ timeout });
  check((await bodyRow.locator('td.diff-removed').innerText()).startsWith('Hello'), 'the diff lacks the first body');
  check((await bodyRow.locator('td.diff-added').innerText()).includes('is ready'), 'the diff lacks the saved body');
  await shot(page, 'editor-version-diff');

  step('sync to Production, seeing the difference first');
  await page.getByRole('link', { name: 'Compare with Production' }).click();
  await page.getByText('Production has no copy yet').waitFor({ timeout });
  await shot(page, 'editor-sync-diff');
  await page.getByRole('button', { name: 'Sync to Production' }).click();
  await page.getByText('is synced to Production').waitFor({ timeout });

  step('a run the page waits for appears there as it happens, without a reload');
  await page.goto(editorURL + '?test=live-check-1');
  await page.locator('#test-run', { hasText: 'Waiting for the trigger' }).waitFor({ timeout });
  const live = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { order: 'L-1' }, transactionId: 'live-check-1' });
  check(live.status === 201, 'the trigger with a transactionId: ' + JSON.stringify(live.body));
  await page.locator('#test-run[data-done="true"]', { hasText: 'completed' }).waitFor({ timeout });

  step('send a test and follow it live on the page, then in Activity');
  await page.goto(editorURL);
  await page.locator('#f-payload').fill('{"order":"T-9"}');
  await page.locator('#f-testSubscriber').fill('ada');
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText('Test sent to ada').waitFor({ timeout });
  check(page.url().includes('?test=test-'), 'the test did not stay on the editor: ' + page.url());
  await page.locator('#test-run').waitFor({ timeout });
  // The card reads itself again until the run is over, without a reload.
  await page.locator('#test-run[data-done="true"]').waitFor({ timeout });
  check((await page.locator('#test-run').innerText()).includes('completed'), 'the test run does not show its outcome: ' +
    await page.locator('#test-run').innerText());
  check(await page.locator('#test-run li[data-step-type="in_app"]').count() === 1, 'the test run lacks the in-app step');
  await shot(page, 'editor-test-live');
  await page.locator('#test-run').getByRole('link', { name: 'Open in Activity' }).click();
  await page.locator('tbody tr', { hasText: 'Welcome' }).first().waitFor({ timeout });
  check(page.url().includes('transactionId=test-'), 'the test did not open Activity on its transaction: ' + page.url());
  check(await page.locator('tbody tr .badge', { hasText: 'test' }).count() === 1, 'the test is not marked in Activity');
  await page.locator('tbody tr', { hasText: 'Welcome' }).first().getByRole('link').first().click();
  await page.getByRole('heading', { name: 'Steps' }).waitFor({ timeout });
  check((await page.locator('.inapp-card').innerText()).includes('order T-9'), 'the test payload did not reach the in-app card');
  await shot(page, 'editor-test-send');

  step('add a viewer through the team page');
  await page.getByRole('link', { name: 'Team' }).first().click();
  await page.locator('#f-name').fill('Val Viewer');
  await page.locator('#f-email').fill('val@example.com');
  await page.locator('#f-role').selectOption('viewer');
  await page.getByRole('button', { name: 'Add member' }).click();
  const oneTime = (await page.locator('#shown-secret').innerText()).trim();
  check(oneTime.length >= 12, 'a one-time password is shown');

  step('as a viewer, no edit control shows and a crafted post is refused');
  const viewer = await newPage();
  await viewer.goto(BASE + '/console/login');
  await viewer.getByLabel('Email').fill('val@example.com');
  await viewer.getByLabel('Password').fill(oneTime);
  await viewer.getByRole('button', { name: 'Sign in' }).click();
  await viewer.getByRole('heading', { name: 'Your account' }).waitFor({ timeout }); // a one-time password is replaced first
  await viewer.locator('#f-password').fill(password + ' too');
  await viewer.locator('#f-confirm').fill(password + ' too');
  await viewer.getByRole('button', { name: 'Change password' }).click();
  await viewer.getByText('Your password is changed').waitFor({ timeout });
  await viewer.goto(page.url().replace(/\/console\/.*$/, '/console/'));
  await viewer.getByRole('link', { name: 'Subscribers' }).first().click();
  await viewer.getByRole('link', { name: 'ada', exact: true }).click();
  await viewer.getByRole('heading', { name: 'Preferences' }).waitFor({ timeout });
  check(await viewer.getByRole('button', { name: 'Save profile' }).count() === 0, 'a viewer sees Save profile');
  check(await viewer.getByLabel('Email for Welcome').isDisabled(), 'a viewer can flip a preference');
  check(await viewer.getByRole('link', { name: 'API keys' }).count() === 0, 'a viewer sees API keys');
  check(await viewer.getByRole('link', { name: 'Team' }).count() === 0, 'a viewer sees Team');
  const before = errors.length;
  const crafted = await viewer.evaluate(async () => {
    const token = document.querySelector('input[name="_csrf"]').value;
    const body = new URLSearchParams({ _csrf: token, workflow: 'welcome', channel: 'in_app', enabled: 'false' });
    const res = await fetch(location.pathname + '/preferences', { method: 'POST', body });
    return res.status;
  });
  check(crafted === 403, 'a viewer\'s crafted post answered ' + crafted);
  // Chromium logs the refused post, as it logs every failed load.
  errors.splice(before, errors.length - before, ...errors.slice(before).filter((e) => !e.includes('403')));
  const prefs = await api('GET', '/v2/subscribers/ada/preferences');
  check(prefs.body.workflows.find((w) => w.workflow.identifier === 'welcome').channels.in_app === true, 'the crafted post changed a preference');
  check(await viewer.getByLabel('Friday', { exact: true }).inputValue() === '09:00 AM - 12:00 PM, 10:00 PM - 02:00 AM', 'a viewer does not see the schedule');
  check(await viewer.getByLabel('Friday', { exact: true }).isDisabled(), 'a viewer can edit the schedule');
  check(await viewer.getByRole('button', { name: 'Save schedule' }).count() === 0, 'a viewer sees Save schedule');
  await shot(viewer, 'viewer-subscriber');
  await viewer.goto(editorURL);
  await viewer.getByText('Read-only').waitFor({ timeout });
  check(await viewer.getByRole('button', { name: 'Save workflow' }).count() === 0, 'a viewer sees Save workflow');
  check(await viewer.locator('#s-0-c-body').getAttribute('readonly') !== null, 'a viewer can type a body');
  await viewer.locator('#preview-0').waitFor({ timeout }); // the previews, read-only
  await shot(viewer, 'viewer-editor');

  step('at a phone\'s width the navigation folds into a menu');
  const phone = await newPage(390, 844);
  await phone.goto(BASE + '/console/login');
  await phone.getByLabel('Email').fill('ada@example.com');
  await phone.getByLabel('Password').fill(password);
  await phone.getByRole('button', { name: 'Sign in' }).click();
  await phone.getByRole('heading', { name: 'Overview' }).waitFor({ timeout });
  check(!(await phone.locator('.sidebar').isVisible()), 'the sidebar shows at a phone\'s width');
  await phone.getByLabel('Menu').click();
  await phone.locator('.mobile-nav').getByRole('link', { name: 'Activity' }).click();
  await phone.getByRole('heading', { name: 'Activity' }).waitFor({ timeout });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, 'the page is wider than the phone by ' + overflow + 'px');
  await shot(phone, 'phone-activity');

  console.log(JSON.stringify({ ok: true, errors }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e), errors }));
  process.exitCode = 1;
} finally {
  await browser.close();
}

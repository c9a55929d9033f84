// Drives headless Chromium through the inbox page as a person would, and
// calls Herald's API beside it. The Go test (browser_test.go) starts
// Herald and the page, runs this, and reads its last line.
import { chromium } from 'playwright-core';

const { PAGE_URL, API_URL, API_KEY, CHROMIUM, SUBSCRIBER_ID } = process.env;
const timeout = 20000;

async function api(method, path, body) {
  const res = await fetch(API_URL + path, {
    method,
    headers: { Authorization: `ApiKey ${API_KEY}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const step = (what) => console.log(`step: ${what}`);

// openInbox opens the page for one context with its popover open, and
// waits for its empty list.
async function openInbox(query) {
  const p = await browser.newPage();
  await p.goto(PAGE_URL + query);
  await p.waitForSelector('#bell[data-count="0"]', { timeout });
  await p.click('#bell');
  return p;
}

// arrives waits until a notification with text shows in p's open list,
// live: a list shows what arrives at once when empty, and behind a "new
// notifications" notice otherwise.
async function arrives(p, text) {
  await p.waitForSelector('#bell[data-count="1"]', { timeout });
  const item = p.locator('.nv-notification').filter({ hasText: text });
  const notice = p.locator('.nv-notificationListNewNotificationsNotice__button');
  await item.or(notice).first().waitFor({ timeout });
  if (await notice.count() > 0) await notice.click();
  await item.waitFor({ timeout });
}

let browser;
browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(PAGE_URL);

  step('the bell shows the unread count');
  await page.waitForSelector('#bell[data-count="1"]', { timeout });

  step('the popover lists the notification');
  await page.click('#bell');
  const items = page.locator('.nv-notification');
  await items.filter({ hasText: 'First' }).waitFor({ timeout });

  step('a trigger through the API appears without a reload');
  await api('POST', '/v1/events/trigger', { name: 'hello', to: SUBSCRIBER_ID, payload: { text: 'Second' } });
  await page.waitForSelector('#bell[data-count="2"]', { timeout });
  // With the list open, the component announces what arrived with a
  // "new notifications" notice rather than moving the list under the
  // reader's eyes; a click on it shows them.
  const notice = page.locator('.nv-notificationListNewNotificationsNotice__button');
  await notice.waitFor({ timeout });
  await notice.click();
  await items.filter({ hasText: 'Second' }).waitFor({ timeout });

  step('mark as read changes the count');
  const first = items.filter({ hasText: 'First' });
  await first.hover();
  await first.locator('.nv-notificationRead__button').click();
  await page.waitForSelector('#bell[data-count="1"]', { timeout });

  step('archive moves a notification to the archived tab');
  const second = items.filter({ hasText: 'Second' });
  await second.hover();
  await second.locator('.nv-notificationArchive__button').click();
  await items.filter({ hasText: 'Second' }).waitFor({ state: 'detached', timeout });
  await page.click('.nv-inboxStatus__dropdownTrigger');
  await page.locator('.nv-inboxStatus__dropdownItem').filter({ hasText: 'Archived' }).click();
  await items.filter({ hasText: 'Second' }).waitFor({ timeout });
  if (await items.filter({ hasText: 'First' }).count() !== 0) throw new Error('the archived tab lists an unarchived notification');

  step('two inboxes in two contexts each see only their own notification arrive');
  const acme = await openInbox('?tenant=acme');
  const globex = await openInbox('?tenant=globex');
  await api('POST', '/v1/events/trigger',
    { name: 'hello', to: SUBSCRIBER_ID, payload: { text: 'For Acme' }, context: { tenant: 'acme' } });
  await api('POST', '/v1/events/trigger',
    { name: 'hello', to: SUBSCRIBER_ID, payload: { text: 'For Globex' }, context: { tenant: 'globex' } });
  await arrives(acme, 'For Acme');
  await arrives(globex, 'For Globex');
  await api('POST', '/v1/events/trigger', { name: 'hello', to: SUBSCRIBER_ID, payload: { text: 'For no one' } });
  // The first page's, without a context, and the one sent since are not
  // theirs: each bell counts its one, and each list holds it alone.
  await page.waitForSelector('#bell[data-count="1"]', { timeout });
  for (const [p, own] of [[acme, 'For Acme'], [globex, 'For Globex']]) {
    const texts = await p.locator('.nv-notification').allInnerTexts();
    if (texts.length !== 1 || !texts[0].includes(own)) throw new Error(`the ${own} inbox lists ${JSON.stringify(texts)}`);
    if (await p.locator('#bell').getAttribute('data-count') !== '1') throw new Error(`the ${own} bell counts another context`);
  }

  step('a context signed as another is refused');
  const forged = await browser.newPage();
  const refused = forged.waitForResponse((r) => r.url().endsWith('/v1/inbox/session'), { timeout });
  await forged.goto(PAGE_URL + '?tenant=acme&badHash=1');
  if ((await refused).status() !== 400) throw new Error(`a wrong contextHash got ${(await refused).status()}`);

  step('the subscriber sets a schedule through @novu/js, one day at a time');
  // A page of its own: a second Novu client in the inbox's page would
  // share its live connection.
  const schedulePage = await browser.newPage();
  await schedulePage.goto(PAGE_URL);
  const schedule = await schedulePage.evaluate(async () => {
    const sched = window.newNovu().preferences.schedule;
    const plain = (r) => ({ error: r.error ? String(r.error) : null,
      data: r.data && { isEnabled: r.data.isEnabled, weeklySchedule: r.data.weeklySchedule } });
    const first = plain(await sched.update({ isEnabled: true,
      weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } }));
    const second = plain(await sched.update({ isEnabled: true,
      weeklySchedule: { saturday: { isEnabled: true, hours: [{ start: '10:00 PM', end: '02:00 AM' }] } } }));
    const read = plain(await sched.get());
    return { first, second, read };
  });
  for (const [what, r] of Object.entries(schedule)) {
    if (r.error || !r.data || !r.data.isEnabled) throw new Error(`schedule ${what}: ${JSON.stringify(r)}`);
  }
  if (!schedule.read.data.weeklySchedule.monday || !schedule.read.data.weeklySchedule.saturday) {
    throw new Error('the schedule read back lost a day: ' + JSON.stringify(schedule.read));
  }
  const stored = (await api('GET', `/v2/subscribers/${SUBSCRIBER_ID}/preferences/global`)).schedule;
  if (!stored || stored.weeklySchedule.saturday.hours[0].end !== '02:00 AM' || stored.weeklySchedule.monday.hours[0].start !== '09:00 AM') {
    throw new Error('the API reads another schedule: ' + JSON.stringify(stored));
  }

  console.log(JSON.stringify({ ok: true, errors }));
} finally {
  await browser.close();
}

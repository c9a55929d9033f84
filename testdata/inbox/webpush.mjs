// Drives headless Chromium through a page that turns on web push as
// docs/web-push.md shows it: the page reads Herald's public key with the
// subscriber's inbox token, subscribes its service worker's push manager,
// and stores the subscription through Herald's inbox route. The Go test
// (webpush_browser_test.go) starts Herald, the page and a double of the
// browser's own push service registration, runs this, and reads its last
// line: the subscription as PushSubscription.toJSON() gave it.
//
// Chromium registers a push subscription with its vendor's service (GCM)
// before it answers subscribe(); with no route to it, subscribe() never
// settles. The --gcm-* switches point that registration at the double.
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { PAGE_URL, CHROMIUM, GCM_URL } = process.env;
const timeout = 30000;

// Push is refused in an incognito context, which is what a fresh
// Playwright context is: the page runs in a profile on disk.
const profile = await mkdtemp(join(tmpdir(), 'herald-webpush-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run',
    `--gcm-checkin-url=${GCM_URL}/checkin`, `--gcm-registration-url=${GCM_URL}/register`],
});
try {
  // The permission a person grants with a click on the page's button.
  await context.grantPermissions(['notifications'], { origin: new URL(PAGE_URL).origin });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(PAGE_URL);
  const result = await page.evaluate((ms) => Promise.race([
    window.turnOnPush(),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`subscribe did not settle in ${ms} ms`)), ms)),
  ]).catch((e) => ({ error: String(e) })), timeout);
  if (result.error) throw new Error(result.error);
  console.log(JSON.stringify({ ok: true, errors, ...result }));
} finally {
  await context.close();
  await rm(profile, { recursive: true, force: true });
}

/**
 * What every console browser test needs: a real service (SQLite or PostgreSQL) on a known port with
 * PUBLIC_URL set to it (the sign-in routes check the page's origin), staff users with passwords,
 * Debian's Chromium, signing in through the sign-in page, and the check each screen gets: axe (no
 * serious or critical violation) and a screenshot in test-output/screenshots/console-*.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Role } from '../../../src/domain/access.ts';
import { launchChromiumBrowser, SCREENSHOT_DIR } from '../../helpers/browser.ts';
import { object } from '../../helpers/json.ts';
import { startTestServer, type DialectName, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { freePort, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';
import { assertNoSeriousAxeViolations } from '../axe.ts';

/** The password every console test user gets (long enough for the service's rule). */
export const TEST_PASSWORD = 'correct horse battery staple';

export interface StaffUser {
  readonly id: number;
  readonly email: string;
  readonly role: Role;
  readonly instituteId: number;
  /** The user's signed API client, for setting up data the screen under test then shows. */
  readonly client: Awaited<ReturnType<TestServer['user']>>['client'];
}

export interface ConsoleWorld {
  readonly server: TestServer;
  readonly smtp: TestSmtpServer;
  readonly chromium: Browser;
  readonly baseUrl: string;
  readonly instituteId: number;
  /** Creates a user of `role` in the world's institute (or `instituteId`) with TEST_PASSWORD. */
  staff(role: Role, options?: { instituteId?: number; email?: string }): Promise<StaffUser>;
  close(): Promise<void>;
}

let userSequence = 0;

/**
 * A signed V3 call by `user` (a console world's staff user, or any user with a signed client) that
 * must answer `status`, 200 unless given. Returns the body.
 */
export async function v3Call(
  user: Pick<StaffUser, 'client'>,
  method: string,
  route: string,
  params: Record<string, Scalar>,
  status = 200,
): Promise<Record<string, unknown>> {
  const answer = await user.client.v3(method, route, params);
  assert.equal(answer.status, status, `${method} ${route}: ${answer.text}`);
  return object(answer.json, 'body');
}

/** Creates a one-hour record-and-review exam named `name` as `user`, with `settings` on top. Returns its id. */
export async function createExam(
  user: Pick<StaffUser, 'client'>,
  name: string,
  settings: Record<string, Scalar> = {},
): Promise<number> {
  const body = await v3Call(
    user,
    'POST',
    '/exams',
    { name, type: 'record_review', duration_minutes: 60, ...settings },
    201,
  );
  return Number(object(body.exam, 'exam').id);
}

/** Starts the service (with a real SMTP server) and Chromium for one test file's dialect. */
export async function startConsoleWorld(
  dialect: DialectName,
  options: { env?: Record<string, string> } = {},
): Promise<ConsoleWorld> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const smtp = await startSmtpServer();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await startTestServer(dialect, {
    port,
    env: { SMTP_URL: smtp.url, PUBLIC_URL: baseUrl, MAIL_FROM: 'Exams <exams@example.org>', ...options.env },
  });
  const instituteId = await server.institute('Example University');
  const chromium = await launchChromiumBrowser();
  return {
    server,
    smtp,
    chromium,
    baseUrl,
    instituteId,
    async staff(role, staffOptions = {}) {
      userSequence += 1;
      const institute = staffOptions.instituteId ?? instituteId;
      const email = staffOptions.email ?? `${role.replaceAll('_', '-')}${userSequence}@example.org`;
      const created = await server.user(institute, role, email);
      await server.app.services.staffAuth.setPassword(created.id, TEST_PASSWORD);
      return { id: created.id, email, role, instituteId: institute, client: created.client };
    },
    async close() {
      await chromium.close();
      await server.close();
      await smtp.close();
    },
  };
}

/** A new page in its own browser context (its own cookies), 1280×900 unless `viewport` says. */
export async function newPage(world: ConsoleWorld, viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await world.chromium.newContext({ viewport });
  return context.newPage();
}

/** Opens a new page (its own cookies) and signs `user` in through the sign-in page. */
export async function signedInPage(world: ConsoleWorld, user: StaffUser): Promise<Page> {
  const page = await newPage(world);
  await signIn(page, world.baseUrl, user.email);
  return page;
}

/** Signs in on `page` with email and TEST_PASSWORD and waits until the console has left sign-in. */
export async function signIn(
  page: Page,
  baseUrl: string,
  email: string,
  password = TEST_PASSWORD,
): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));
}

/**
 * The check every console screen gets: axe finds no serious or critical violation, and a full-page
 * screenshot is saved as test-output/screenshots/console-<name>.png.
 */
export async function checkScreen(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await assertNoSeriousAxeViolations(page, name);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `console-${name}.png`), fullPage: true });
}

/** Fails unless the page shows no horizontal scroll bar (readable at a phone's width or at 200% zoom). */
export async function assertNoHorizontalScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `${what}: the page is ${overflow}px wider than the window`);
}

/**
 * An LTI 1.3 launch as a learning platform shows it: the fake platform's course page (one site,
 * 127.0.0.1) frames Invigil (another site, localhost) in Chromium with third-party cookies blocked.
 * The login, the platform's storage, the platform's authorization and the launch all run inside
 * the iframe; the launch ends with a button that opens the exam room in a top-level window (the
 * room refuses framing). A second run loses the binding cookie, so the binding comes back only
 * through the platform's storage (lti.put_data / lti.get_data over postMessage). Screenshots of
 * each step land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Frame, type Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { ApiClient } from '../helpers/client.ts';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { browserDialects } from '../helpers/server.ts';
import { type LtiWorld, startLtiWorld } from '../http/lti/lti-13.support.ts';

/**
 * Chromium with a fresh profile whose settings block third-party cookies (the setting a user turns
 * on, and the default of more and more browsers). Returns the context and a close.
 */
async function launchBlockingThirdPartyCookies(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-chromium-'));
  fs.mkdirSync(path.join(profile, 'Default'), { recursive: true });
  fs.writeFileSync(
    path.join(profile, 'Default', 'Preferences'),
    JSON.stringify({ profile: { cookie_controls_mode: 1, block_third_party_cookies: true } }),
  );
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      ...CHROMIUM_FLAGS,
      '--host-resolver-rules=MAP localhost 127.0.0.1',
      '--test-third-party-cookie-phaseout',
    ],
    ignoreDefaultArgs: ['--headless'],
    viewport: { width: 1100, height: 750 },
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`LTI 1.3 launch in a platform's iframe, third-party cookies blocked [${dialect}]`, () => {
    let world: LtiWorld;
    let browser: { context: BrowserContext; close(): Promise<void> };
    let teacher: ApiClient;
    let examId: number;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      world = await startLtiWorld(dialect, { publicHost: 'localhost' });
      const created = await world.app.services.users.create(world.instituteId, {
        email: `teacher-${crypto.randomBytes(3).toString('hex')}@example.org`,
        name: 'Teacher',
        role: 'teacher',
      });
      teacher = new ApiClient(world.baseUrl.replace('localhost', '127.0.0.1'), created.credentials);
      const exam = await teacher.v3('POST', '/exams', {
        name: 'Final exam',
        type: 'classroom',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const now = Date.now();
      await world.app.database.db
        .insertInto('lti_resources')
        .values({
          institute_id: world.instituteId,
          tool_provider_id: world.toolProviderId,
          exam_id: examId,
          resource_link_id: 'resource-link-1',
          context_id: 'course-1',
          title: 'Final exam',
          created_at: now,
          updated_at: now,
        })
        .execute();
      browser = await launchBlockingThirdPartyCookies();
    });

    after(async () => {
      await browser?.close();
      await world?.close();
    });

    /** The course page's iframe once it shows `heading`. Returns the frame. */
    async function toolFrame(page: Page, heading: string): Promise<Frame> {
      const handle = await page.waitForSelector('iframe#tool');
      const frame = await handle.contentFrame();
      assert.ok(frame !== null);
      try {
        await frame.waitForSelector(`h1:has-text("${heading}")`, { timeout: 15_000 });
      } catch (error) {
        throw new Error(`the frame at ${frame.url()} shows: ${await frame.content()}`, { cause: error });
      }
      return frame;
    }

    /**
     * Makes the browser lose Invigil's cookies while the frame is at the platform's authorization
     * endpoint the first time, as a browser that keeps no cookie in the iframe at all would.
     */
    async function loseCookieOnce(page: Page): Promise<void> {
      let lost = false;
      await page.route(`${world.platform.authLoginUrl}?*`, async (route) => {
        if (!lost) {
          lost = true;
          await browser.context.clearCookies();
        }
        await route.continue();
      });
    }

    /**
     * Sends the first launch post without cookies, as a browser that keeps no cookie in the iframe
     * at all would: the cookies go just before it leaves (the login's answer is a redirect, which
     * page.route does not see, so the platform's step cannot be the moment).
     */
    async function launchWithoutCookieOnce(page: Page): Promise<void> {
      let dropped = false;
      await page.route(`${world.baseUrl}/lti/launch`, async (route) => {
        if (!dropped) {
          dropped = true;
          await browser.context.clearCookies();
        }
        return route.continue();
      });
    }

    /** Clicks the frame's open button and returns the top-level window it opened, loaded. */
    async function openTopLevel(page: Page, frame: Frame): Promise<Page> {
      const [opened] = await Promise.all([page.context().waitForEvent('page'), frame.click('a#open')]);
      await opened.waitForLoadState('domcontentloaded');
      return opened;
    }

    /** Where the room opened: its token, and the session show_lti_student finds for the user. */
    async function assertInRoom(room: Page, loginHint: string): Promise<void> {
      const url = new URL(room.url());
      assert.equal(url.origin, world.baseUrl);
      assert.match(url.pathname, /^\/room\/[^/]+$/);
      assert.equal(await room.evaluate(() => window.top === window), true, 'a top-level window');
      const found = await teacher.v3('GET', '/exams/:id/show_lti_student', {
        id: examId,
        student_lms_id: loginHint,
        resource_link_id: 'resource-link-1',
      });
      assert.equal(found.status, 200, found.text);
      const token = object(object(found.json, 'body').student, 'student').token as string;
      assert.equal(decodeURIComponent(url.pathname.slice('/room/'.length)), token);
    }

    it('logs in, launches inside the iframe and opens the room top-level', async () => {
      // This test ran into the runner's time limit twice in CI, beside another suite, and never
      // alone: the step it waits on is logged if it takes that long, to find out which.
      let step = 'start';
      const started = Date.now();
      const watch = setTimeout(() => {
        console.log(`lti-iframe: still at "${step}" after ${Date.now() - started} ms`);
      }, 90_000);
      try {
        const hint = `learner-${crypto.randomBytes(3).toString('hex')}`;
        world.platform.launches.set(hint, world.platform.launchClaims(hint));
        step = 'opening a page';
        const page = await browser.context.newPage();
        step = 'loading the course page';
        await page.goto(world.platform.coursePageUrl(hint, { storage: true }));
        step = 'waiting for the frame to say the exam is ready';
        const frame = await toolFrame(page, 'Your exam is ready');
        // Third-party cookies are blocked here: the frame cannot keep an ordinary one...
        step = 'probing the frame for cookies';
        const kept = await frame.evaluate(() => {
          document.cookie = 'probe=1; SameSite=None; Secure; Path=/';
          const ordinary = document.cookie.includes('probe=1');
          document.cookie = 'probe=2; SameSite=None; Secure; Partitioned; Path=/';
          return { ordinary, partitioned: document.cookie.includes('probe=2') };
        });
        assert.deepEqual(kept, { ordinary: false, partitioned: true });
        // ...so the launch went through on the partitioned binding cookie (spent by the launch).
        step = 'reading the logins';
        const logins = await world.app.database.db
          .selectFrom('lti_logins')
          .select(['binding_kind', 'used_at'])
          .execute();
        assert.ok(logins.some((login) => login.binding_kind === 'storage' && login.used_at !== null));
        step = 'the course page screenshot';
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `lti-iframe-launched-${dialect}.png`) });
        step = 'reading the platform storage log';
        const storage = await page.evaluate(
          () => (window as unknown as { __ltiStorage?: string[] }).__ltiStorage ?? [],
        );
        assert.ok(
          storage.includes('lti.put_data'),
          `the login stored its binding in the platform: ${storage.join()}`,
        );
        step = 'opening the room top-level';
        const room = await openTopLevel(page, frame);
        step = 'checking the room';
        await assertInRoom(room, hint);
        step = 'the room screenshot';
        await room.screenshot({ path: path.join(SCREENSHOT_DIR, `lti-iframe-room-${dialect}.png`) });
        step = 'closing the room';
        await room.close();
        step = 'closing the page';
        await page.close();
      } finally {
        clearTimeout(watch);
      }
    });

    it('without the cookie, reads the binding back from the platform storage and still ends in the room', async () => {
      const hint = `learner-${crypto.randomBytes(3).toString('hex')}`;
      world.platform.launches.set(hint, world.platform.launchClaims(hint));
      const page = await browser.context.newPage();
      await loseCookieOnce(page);
      await page.goto(world.platform.coursePageUrl(hint, { storage: true }));
      const frame = await toolFrame(page, 'Your exam is ready');
      const storage = await page.evaluate(
        () => (window as unknown as { __ltiStorage?: string[] }).__ltiStorage ?? [],
      );
      assert.deepEqual(storage, ['lti.put_data', 'lti.get_data']);
      const room = await openTopLevel(page, frame);
      await assertInRoom(room, hint);
      await room.close();
      await page.close();
    });

    it('without cookie or storage, starts the login again in a top-level window and ends in the room', async () => {
      const hint = `learner-${crypto.randomBytes(3).toString('hex')}`;
      world.platform.launches.set(hint, world.platform.launchClaims(hint));
      const page = await browser.context.newPage();
      await launchWithoutCookieOnce(page);
      await page.goto(world.platform.coursePageUrl(hint));
      const frame = await toolFrame(page, 'Open Invigil in a new window');
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `lti-iframe-new-window-${dialect}.png`) });
      // The new window is a page of its own, whose cookie the browser keeps (first party).
      const room = await openTopLevel(page, frame);
      await room.waitForURL(/\/room\//, { timeout: 15_000 });
      await assertInRoom(room, hint);
      await room.close();
      await page.close();
    });
  });
}

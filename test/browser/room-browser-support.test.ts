/**
 * The room refuses only a browser that truly cannot record (docs/room.md "Browsers"), in Chromium:
 * with MediaRecorder taken away before the page loads, the room and the practice page show a
 * refusal that says what is missing and what to do (in English and in Arabic, right to left, axe
 * on each); a browser without screen sharing is refused only by an exam that records the screen;
 * and a browser that records but names itself oddly (Safari's user agent, an unknown one) is taken
 * through the checks like any other.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import type { PageLocale } from '../../src/i18n/locales.ts';
import { Translator } from '../../src/i18n/translate.ts';
import { type Browser, launchChromiumBrowser, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** Safari 17 on macOS, as it names itself. */
const SAFARI_AGENT =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
/** A browser no list knows. */
const UNKNOWN_AGENT = 'ExamKiosk/2.1 (compatible; Uni Lab Edition)';

/** Runs in each page before its scripts: this browser has no MediaRecorder. */
function withoutRecorder(): void {
  Reflect.deleteProperty(window, 'MediaRecorder');
}

/** Runs in each page before its scripts: this browser cannot share a screen (as phones). */
function withoutScreenSharing(): void {
  Reflect.deleteProperty(MediaDevices.prototype, 'getDisplayMedia');
}

/** The refusal's words in `locale`, straight from the catalogue. */
function wordsOf(locale: PageLocale): (key: string) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key) => translator.t(key);
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`the room refuses only browsers that cannot record, in Chromium [${dialect}]`, () => {
    let server: TestServer;
    let chromium: Browser;
    let owner: TestUser;
    let sequence = 0;
    const contexts: BrowserContext[] = [];

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      owner = await server.user(await server.institute(), 'teacher');
      chromium = await launchChromiumBrowser();
    });

    after(async () => {
      for (const context of contexts) await context.close();
      await chromium?.close();
      await server?.close();
    });

    async function v3(method: string, route: string, params: Record<string, Scalar>, status = 200) {
      const answer = await owner.client.v3(method, route, params);
      assert.equal(answer.status, status, answer.text);
      return object(answer.json, 'body');
    }

    /** A new exam recording what `records` says, with one student (in `language`). Returns the room token and id. */
    async function student(
      records: { web_cam?: boolean; screen_share?: boolean },
      language?: string,
    ): Promise<{ token: string; id: number }> {
      sequence += 1;
      const exam = object(
        (
          await v3(
            'POST',
            '/exams',
            { name: `Thermodynamics ${sequence}`, type: 'record_review', duration_minutes: 30, ...records },
            201,
          )
        ).exam,
        'exam',
      );
      const record = object(
        (
          await v3(
            'POST',
            '/exams/:exam_id/student_sessions',
            {
              exam_id: exam.id as number,
              name: 'Lise Meitner',
              email: `lise${sequence}@example.org`,
              ...(language === undefined ? {} : { language }),
            },
            201,
          )
        ).student,
        'student',
      );
      return { token: record.token as string, id: record.id as number };
    }

    /** A page of a new context: `prepare` runs before every page script, `userAgent` names the browser. */
    async function newPage(options: { prepare?: () => void; userAgent?: string } = {}): Promise<Page> {
      const context = await chromium.newContext({
        viewport: { width: 1280, height: 900 },
        ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
      });
      contexts.push(context);
      if (options.prepare !== undefined) await context.addInitScript(options.prepare);
      return context.newPage();
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      const file = path.join(SCREENSHOT_DIR, `browser-support-${dialect}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    /** Asserts the page shows the refusal for `shortfall` in `locale`, and no setup. */
    async function assertRefused(page: Page, locale: PageLocale, shortfall: string): Promise<void> {
      const words = wordsOf(locale);
      await page.getByRole('heading', { name: words('candidate.browser.heading') }).waitFor();
      const reason = page.locator('#unsupported-reason');
      assert.equal(await reason.getAttribute('data-shortfall'), shortfall);
      assert.equal(await reason.textContent(), words(`candidate.browser.${shortfall}`));
      const advice = (await page.locator('#unsupported-advice li').allTextContents()).map((line) =>
        line.trim(),
      );
      for (const key of ['adviceBrowser', 'adviceUpdate', 'adviceApple', 'adviceHelp']) {
        assert.ok(advice.includes(words(`candidate.browser.${key}`)), `${key} in ${JSON.stringify(advice)}`);
      }
      assert.equal(
        await page.locator('#stage-setup, #start-exam, #practice-start').count(),
        0,
        'nothing to start',
      );
    }

    it('refuses a browser without MediaRecorder, saying what is missing and what to do', async () => {
      const { token, id } = await student({ web_cam: true, screen_share: true });
      const page = await newPage({ prepare: withoutRecorder });
      await page.goto(`${server.baseUrl}/room/${token}`);
      await assertRefused(page, 'en', 'recorder');
      // The heading has the focus, as every new stage's, so a screen reader starts there.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'unsupported-heading');
      await assertNoSeriousAxeViolations(page, 'browser refused');
      await screenshot(page, 'refused-en');
      const record = object((await v3('GET', '/student_sessions/:id', { id })).student, 'student');
      assert.notEqual(record.webcam_check, 'succeeded', 'no check was run');
    });

    it('refuses it in Arabic, right to left', async () => {
      const { token } = await student({ web_cam: true }, 'ar');
      const page = await newPage({ prepare: withoutRecorder });
      await page.goto(`${server.baseUrl}/room/${token}`);
      await assertRefused(page, 'ar', 'recorder');
      assert.deepEqual(
        await page.evaluate(() => ({
          lang: document.documentElement.lang,
          dir: document.documentElement.dir,
        })),
        { lang: 'ar', dir: 'rtl' },
      );
      await assertNoSeriousAxeViolations(page, 'browser refused, Arabic');
      await screenshot(page, 'refused-ar');
    });

    it('refuses it on the practice page too', async () => {
      const { token } = await student({ web_cam: true });
      const page = await newPage({ prepare: withoutRecorder });
      await page.goto(`${server.baseUrl}/room/${token}/practice`);
      await assertRefused(page, 'en', 'recorder');
      await assertNoSeriousAxeViolations(page, 'practice refused');
      await screenshot(page, 'practice-refused');
    });

    it('refuses a browser that cannot share the screen only for an exam that records the screen', async () => {
      const screen = await student({ web_cam: true, screen_share: true });
      const page = await newPage({ prepare: withoutScreenSharing });
      await page.goto(`${server.baseUrl}/room/${screen.token}`);
      await assertRefused(page, 'en', 'screen');
      await screenshot(page, 'refused-screen');
      const camera = await student({ web_cam: true });
      await page.goto(`${server.baseUrl}/room/${camera.token}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      assert.equal(await page.locator('#stage-unsupported').count(), 0);
    });

    for (const [name, userAgent, reported] of [
      ['Safari’s', SAFARI_AGENT, 'Safari'],
      ['an unknown', UNKNOWN_AGENT, 'unknown'],
    ] as const) {
      it(`takes a browser that records but gives ${name} user agent through the checks`, async () => {
        const { token, id } = await student({ web_cam: true, screen_share: true });
        const page = await newPage({ userAgent });
        await page.goto(`${server.baseUrl}/room/${token}`);
        await page.getByRole('heading', { name: 'Before you start' }).waitFor();
        await acceptPrivacy(page);
        assert.equal(await page.evaluate(() => navigator.userAgent), userAgent);
        assert.equal(await page.locator('#stage-unsupported').count(), 0, 'not refused');
        await page.getByRole('button', { name: 'Test camera and microphone' }).click();
        await page.getByText('Camera: passed').waitFor();
        await page.getByRole('button', { name: 'Share your screen' }).click();
        await page.getByText('Screen sharing: passed').waitFor();
        const record = object((await v3('GET', '/student_sessions/:id', { id })).student, 'student');
        assert.equal(record.webcam_check, 'succeeded');
        assert.equal(record.browser, reported, 'the user agent only describes the browser to staff');
        await screenshot(page, `accepted-${reported.toLowerCase()}`);
      });
    }
  });
}
